//! A container's log as an answer streams it (handlers/log.rs asks for it,
//! response.rs writes it): the lines there, then those that follow.

use std::sync::Arc;

use crate::container_log::ContainerLog;

/// What a log request asks.
pub(crate) struct LogRequest {
    pub(crate) log: Option<Arc<ContainerLog>>,
    pub(crate) follow: bool,
    pub(crate) timestamps: bool,
    pub(crate) tail: Option<usize>,
}

impl LogRequest {
    /// The lines as the response carries them.
    pub(crate) fn format(&self, lines: &[(String, String)]) -> String {
        lines
            .iter()
            .map(|(ts, line)| {
                if self.timestamps {
                    format!("{ts} {line}\n")
                } else {
                    format!("{line}\n")
                }
            })
            .collect()
    }

    /// The lines already there, and where following goes on from.
    pub(crate) fn first(&self) -> (String, usize, bool) {
        let Some(log) = &self.log else {
            return (String::new(), 0, true);
        };
        let (lines, done) = log.since(0);
        let skip = self.tail.map_or(0, |n| lines.len().saturating_sub(n));
        (self.format(&lines[skip..]), lines.len(), done)
    }
}
