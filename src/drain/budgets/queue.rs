//! Who a budget's disruptions go to when several nodes drained at once
//! want them: the node that started first. Each node, by the order it
//! started (its rank), counts its pods that are due for eviction on each
//! budget and not yet sent; a node may take a budget's free disruptions
//! only beyond what the earlier nodes still want.
//!
//! Two nodes sharing every budget (a workload's replicas on both) would
//! otherwise split the disruptions between them as their requests happen
//! to arrive, and both would end late; served in order, the first ends as
//! if alone and the second follows one replacement behind it, so nodes
//! started one after another keep finishing one after another.

use std::collections::{BTreeMap, HashMap};

use super::budget::Key;

#[derive(Debug, Default)]
pub(crate) struct Queue {
    /// Per budget, per rank, the pods due and not yet sent.
    due: HashMap<Key, BTreeMap<usize, usize>>,
}

impl Queue {
    /// `n` more pods of the node of this rank are due on the budget.
    pub(crate) fn want(&mut self, rank: usize, key: &Key, n: usize) {
        if n > 0 {
            *self
                .due
                .entry(key.clone())
                .or_default()
                .entry(rank)
                .or_default() += n;
        }
    }

    /// One of them was sent (or no longer needs to be).
    pub(crate) fn sent(&mut self, rank: usize, key: &Key) {
        let Some(ranks) = self.due.get_mut(key) else {
            return;
        };
        if let Some(n) = ranks.get_mut(&rank) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                ranks.remove(&rank);
            }
        }
        if ranks.is_empty() {
            self.due.remove(key);
        }
    }

    /// The node of this rank is done: nothing of it is due any more.
    pub(crate) fn forget(&mut self, rank: usize) {
        self.due.retain(|_, ranks| {
            ranks.remove(&rank);
            !ranks.is_empty()
        });
    }

    /// Of `free` disruptions of the budget, how many the node of this rank
    /// may take: what the earlier nodes' due pods leave.
    pub(crate) fn share(&self, rank: usize, key: &Key, free: usize) -> usize {
        let ahead: usize = self
            .due
            .get(key)
            .map_or(0, |ranks| ranks.range(..rank).map(|(_, n)| n).sum());
        free.saturating_sub(ahead)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Key {
        ("ns".to_string(), name.to_string())
    }

    #[test]
    fn earlier_nodes_are_served_first_and_later_ones_get_the_rest() {
        let mut q = Queue::default();
        let web = key("web");
        q.want(0, &web, 1);
        q.want(1, &web, 2);
        assert_eq!(q.share(1, &web, 1), 0, "node 0 still wants the one");
        assert_eq!(q.share(0, &web, 1), 1);
        assert_eq!(q.share(1, &web, 3), 2);
        assert_eq!(q.share(2, &web, 3), 0, "nodes 0 and 1 want all three");
        q.sent(0, &web);
        assert_eq!(q.share(1, &web, 1), 1);
        assert_eq!(q.share(1, &key("db"), 1), 1, "a budget nobody waits on");
    }

    #[test]
    fn a_finished_node_wants_nothing_any_more() {
        let mut q = Queue::default();
        let (web, db) = (key("web"), key("db"));
        q.want(0, &web, 3);
        q.want(0, &db, 1);
        q.want(1, &db, 1);
        q.forget(0);
        assert_eq!(q.share(1, &web, 1), 1);
        assert_eq!(q.share(1, &db, 1), 1);
        assert_eq!(q.share(2, &db, 1), 0, "node 1's pod still ahead");
        q.sent(1, &db);
        q.sent(1, &db);
        assert!(q.due.is_empty());
    }
}
