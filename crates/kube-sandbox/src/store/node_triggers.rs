//! Pod watches by the node they select (`fieldSelector=spec.nodeName=X`),
//! as kube-apiserver's watch cache dispatches them: the pod registry's
//! trigger function (pkg/registry/core/pod/strategy.go,
//! `NodeNameTriggerFunc`) gives each event's node, before and after the
//! change, and the cacher hands the event only to the watchers of that
//! value (staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go,
//! `indexedWatchers.valueWatchers`), not to every pod watch. A drain of
//! 50 nodes at once on a 5,000-node cluster keeps 50 such watches open; a
//! kubelet keeps one for its own node.
//!
//! Here each node keeps the versions of the pod changes still in the
//! watch history that touched it, and a wake-up for its watches. A watch
//! registered on a value is fed as changes come, so an event of another
//! node's never makes it too old to resume (cacher.go's watchers are not
//! expired by events they do not see).

use foldhash::HashMap;
use std::collections::VecDeque;

use tokio::sync::watch;

#[derive(Default)]
pub(crate) struct NodeTriggers {
    /// Per node, the versions of the pod changes that touched it, oldest
    /// first; those the history no longer keeps go at the node's next change.
    touched: HashMap<Box<str>, VecDeque<u64>>,
    /// Per node, its watches' wake-up: the version of its latest change.
    watchers: HashMap<Box<str>, watch::Sender<u64>>,
}

impl NodeTriggers {
    /// A wake-up for a watch of the pods on `node`, from version `rv`.
    pub(crate) fn subscribe(&mut self, node: &str, rv: u64) -> watch::Receiver<u64> {
        if let Some(w) = self.watchers.get(node) {
            return w.subscribe();
        }
        let (tx, rx) = watch::channel(rv);
        self.watchers.insert(node.into(), tx);
        rx
    }

    /// A pod change at `rv` touched these nodes (its node before and
    /// after); changes at `floor` and older are no longer kept.
    pub(crate) fn touch<'a>(
        &mut self,
        nodes: impl IntoIterator<Item = &'a str>,
        rv: u64,
        floor: u64,
    ) {
        for node in nodes {
            let list = match self.touched.get_mut(node) {
                Some(list) => list,
                None => self.touched.entry(node.into()).or_default(),
            };
            if list.back() == Some(&rv) {
                continue; // the same node before and after
            }
            while list.front().is_some_and(|at| *at <= floor) {
                list.pop_front();
            }
            list.push_back(rv);
            if let Some(w) = self.watchers.get(node) {
                if w.receiver_count() == 0 {
                    self.watchers.remove(node);
                } else {
                    w.send_replace(rv);
                }
            }
        }
    }

    /// The versions after `rv` of the changes that touched `node`.
    pub(crate) fn touched_after(&self, node: &str, rv: u64) -> impl Iterator<Item = u64> + '_ {
        self.touched.get(node).into_iter().flat_map(move |list| {
            let from = list.partition_point(|at| *at <= rv);
            list.range(from..).copied()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_wakes_for_its_own_node_only() {
        let mut t = NodeTriggers::default();
        let mut a = t.subscribe("a", 1);
        let b = t.subscribe("b", 1);
        t.touch(["b"], 2, 0);
        assert!(!a.has_changed().unwrap());
        // A pod moving from a to c (bound elsewhere) is a's change too.
        t.touch(["a", "c"], 3, 0);
        assert!(a.has_changed().unwrap());
        assert_eq!(*a.borrow_and_update(), 3);
        assert_eq!(t.touched_after("a", 0).collect::<Vec<_>>(), [3]);
        assert_eq!(t.touched_after("b", 1).collect::<Vec<_>>(), [2]);
        assert_eq!(t.touched_after("b", 2).count(), 0);
        drop(b);
        t.touch(["b"], 4, 0);
        assert!(!t.watchers.contains_key("b"), "a node's last watch gone");
    }

    #[test]
    fn versions_the_history_dropped_go_at_the_next_change() {
        let mut t = NodeTriggers::default();
        t.touch(["a", "a"], 2, 0);
        t.touch(["a"], 5, 0);
        t.touch(["a"], 9, 5);
        assert_eq!(t.touched_after("a", 0).collect::<Vec<_>>(), [9]);
    }
}
