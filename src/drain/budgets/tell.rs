//! Who hears of a budget's change. Each node's drain has a mailbox, and
//! hears only of the budgets over its own pods when they were known before
//! the drain (a pool's budgets, listed once); a budget not known so is told
//! to every node, as is a budget that may not be read. With 50 nodes
//! drained at once on a cluster of 14,500 budgets changing thousands of
//! times a second, telling every node of every change woke each drain's
//! task for nothing and left the watch of every budget a second behind.
//! Listeners of every change (a roll waiting for its budgets to be
//! healthy again) subscribe to all of them.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, mpsc};

use super::budget::Key;

/// What the watches tell the drains.
#[derive(Debug, Clone)]
pub(crate) enum Signal {
    Changed(Key),
    Forbidden(Key),
}

#[derive(Clone)]
pub(crate) struct Tell {
    every: broadcast::Sender<Signal>,
    routes: Arc<Mutex<Routes>>,
}

#[derive(Default)]
struct Routes {
    /// Each node's mailbox, by its rank with the broker.
    mailboxes: HashMap<usize, mpsc::UnboundedSender<Signal>>,
    /// The nodes holding pods under each budget known before the drain.
    by_budget: HashMap<Key, BTreeSet<usize>>,
}

impl Tell {
    pub(crate) fn new() -> Self {
        Tell {
            every: broadcast::channel(1024).0,
            routes: Arc::new(Mutex::new(Routes::default())),
        }
    }

    /// Every change, for listeners of all of them.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.every.subscribe()
    }

    /// The mailbox of the node of this rank, which holds pods under
    /// `budgets` (those known before the drain).
    pub(crate) fn mailbox(
        &self,
        rank: usize,
        budgets: impl IntoIterator<Item = Key>,
    ) -> mpsc::UnboundedReceiver<Signal> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut routes = self.routes();
        routes.mailboxes.insert(rank, tx);
        for key in budgets {
            routes.by_budget.entry(key).or_default().insert(rank);
        }
        rx
    }

    /// The node of this rank is done: it hears of nothing more.
    pub(crate) fn close(&self, rank: usize) {
        let mut routes = self.routes();
        routes.mailboxes.remove(&rank);
        // A known budget stays known: its changes go to no one now.
        for ranks in routes.by_budget.values_mut() {
            ranks.remove(&rank);
        }
    }

    pub(crate) fn send(&self, signal: &Signal) {
        let _ = self.every.send(signal.clone());
        let routes = self.routes();
        let known = match signal {
            Signal::Changed(key) => routes.by_budget.get(key),
            Signal::Forbidden(_) => None,
        };
        match known {
            Some(ranks) => {
                for m in ranks.iter().filter_map(|r| routes.mailboxes.get(r)) {
                    let _ = m.send(signal.clone());
                }
            }
            None => {
                for m in routes.mailboxes.values() {
                    let _ = m.send(signal.clone());
                }
            }
        }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().expect("budget routes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Key {
        ("ns".to_string(), name.to_string())
    }

    #[test]
    fn a_node_hears_of_its_own_budgets_and_of_unknown_ones() {
        let tell = Tell::new();
        let mut every = tell.subscribe();
        let mut a = tell.mailbox(0, [key("web")]);
        let mut b = tell.mailbox(1, [key("db")]);
        tell.send(&Signal::Changed(key("web")));
        tell.send(&Signal::Changed(key("other")));
        let heard = |rx: &mut mpsc::UnboundedReceiver<Signal>| {
            std::iter::from_fn(|| rx.try_recv().ok())
                .map(|s| match s {
                    Signal::Changed(k) | Signal::Forbidden(k) => k.1,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(heard(&mut a), ["web", "other"]);
        assert_eq!(heard(&mut b), ["other"]);
        assert!(every.try_recv().is_ok() && every.try_recv().is_ok());
        tell.close(0);
        tell.send(&Signal::Changed(key("web")));
        assert!(heard(&mut b).is_empty(), "web stays known: told to no one");
        assert!(a.try_recv().is_err());
    }
}
