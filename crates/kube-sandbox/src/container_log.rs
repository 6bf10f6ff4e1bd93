//! A container's log, shared by the kubelet's runtime that writes it
//! (crate::kubelet::runtime) and the API server that streams it
//! (crate::apiserver::log_stream): its lines with their times, growing
//! while it runs, and whether it has ended.

use std::sync::Arc;

use parking_lot::Mutex;

use tokio::sync::watch;

use crate::clock::now_rfc3339_micros;

/// A container's log: its lines with their times, growing while it runs.
pub(crate) struct ContainerLog {
    /// parking_lot's lock: not poisoned by a panic elsewhere, the data
    /// is the last write.
    lines: Mutex<Vec<(String, String)>>,
    /// Whether the container has ended; told of each new line too.
    ended: watch::Sender<bool>,
}

impl ContainerLog {
    pub(crate) fn new() -> Arc<ContainerLog> {
        Arc::new(ContainerLog {
            lines: Mutex::default(),
            ended: watch::channel(false).0,
        })
    }

    pub(crate) fn push(&self, line: String) {
        self.lines
            .lock()
            .push((format!("{}Z", now_rfc3339_micros()), line));
        self.ended.send_modify(|_| {});
    }

    pub(crate) fn finish(&self) {
        self.ended.send_replace(true);
    }

    /// The lines from `from` on, and whether the container has ended.
    pub(crate) fn since(&self, from: usize) -> (Vec<(String, String)>, bool) {
        let done = *self.ended.borrow();
        let lines = self.lines.lock();
        (lines.get(from..).unwrap_or_default().to_vec(), done)
    }

    /// Hears of every new line and of the end.
    pub(crate) fn subscribe(&self) -> watch::Receiver<bool> {
        self.ended.subscribe()
    }
}
