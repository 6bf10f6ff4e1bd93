//! A run's own holds, for the report: what it waited on besides pods
//! (alerts, a window, `--announce`, a hook), for which node or the whole
//! roll, why, from when and for how long. Each begins and ends here, and
//! is told to the listeners as `Event::Hold`/`HoldEnded` (notifications,
//! metrics).

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::vocabulary::events::{Event, Sink, emit};

pub(crate) use crate::vocabulary::outcome::HoldRecord;

type Key = (Option<String>, String);

#[derive(Default)]
pub(crate) struct HoldLog {
    open: Mutex<BTreeMap<Key, (u64, String)>>,
    closed: Mutex<Vec<HoldRecord>>,
}

impl HoldLog {
    /// A hold begins, or its reason changes (then it is told again).
    pub(crate) fn begin(
        &self,
        events: &Sink,
        node: Option<&str>,
        what: &str,
        reason: &str,
        at_ms: u64,
    ) {
        let key = (node.map(str::to_string), what.to_string());
        let mut open = self.open.lock().expect("holds");
        let changed = match open.get_mut(&key) {
            Some((_, r)) if r == reason => false,
            Some((_, r)) => {
                *r = reason.to_string();
                true
            }
            None => {
                open.insert(key, (at_ms, reason.to_string()));
                true
            }
        };
        if changed {
            emit(
                events,
                Event::Hold {
                    node: node.map(str::to_string),
                    what: what.to_string(),
                    reason: reason.to_string(),
                },
            );
        }
    }

    /// A hold ends (nothing when it was not holding).
    pub(crate) fn end(&self, events: &Sink, node: Option<&str>, what: &str, at_ms: u64) {
        let key = (node.map(str::to_string), what.to_string());
        let Some((since, reason)) = self.open.lock().expect("holds").remove(&key) else {
            return;
        };
        self.closed.lock().expect("holds").push(HoldRecord {
            what: what.to_string(),
            node: key.0.clone(),
            reason,
            started_ms: since,
            lasted_ms: at_ms.saturating_sub(since),
            standing: false,
        });
        emit(
            events,
            Event::HoldEnded {
                node: key.0,
                what: what.to_string(),
            },
        );
    }

    /// Every hold, in the order they began; those still open as standing.
    pub(crate) fn records(&self, now_ms: u64) -> Vec<HoldRecord> {
        let mut all = self.closed.lock().expect("holds").clone();
        for ((node, what), (since, reason)) in self.open.lock().expect("holds").iter() {
            all.push(HoldRecord {
                what: what.clone(),
                node: node.clone(),
                reason: reason.clone(),
                started_ms: *since,
                lasted_ms: now_ms.saturating_sub(*since),
                standing: true,
            });
        }
        all.sort_by_key(|h| h.started_ms);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_are_told_on_change_and_recorded_when_they_end() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let log = HoldLog::default();
        log.begin(&tx, None, "alerts", "NodeDown{} firing", 10);
        log.begin(&tx, None, "alerts", "NodeDown{} firing", 20);
        log.begin(&tx, Some("r1"), "rook.io/pre-drain", "waiting", 30);
        log.end(&tx, None, "alerts", 70);
        log.end(&tx, None, "alerts", 80);
        let mut told = 0;
        while rx.try_recv().is_ok() {
            told += 1;
        }
        assert_eq!(told, 3, "two begins and one end");
        let r = log.records(100);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].what.as_str(), r[0].lasted_ms, r[0].standing),
            ("alerts", 60, false)
        );
        assert_eq!(
            (r[1].node.as_deref(), r[1].lasted_ms, r[1].standing),
            (Some("r1"), 70, true)
        );
    }
}
