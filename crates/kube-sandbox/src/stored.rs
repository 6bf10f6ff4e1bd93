//! An object as the store keeps it: its JSON bytes, and its parsed tree for
//! the kinds read all the time. A parsed tree (`serde_json::Value`) takes
//! about ten times the memory of its JSON, which for 150,000 pods is
//! gigabytes: pods and events keep only their bytes, parsed again when read,
//! and the tree a write made or a read parsed is remembered weakly, so
//! while anyone still holds it (the simulation handling the change, a
//! kubelet's step reading, deleting and removing a pod, a watch sending it)
//! a read shares it instead of parsing. Scans over many pods read the
//! store's `pods::Facts` instead.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use serde_json::Value;

use crate::resources::Resource;

#[derive(Debug, Clone)]
pub(crate) enum Stored {
    /// A kind read all the time: its tree, serialised when sent.
    Kept(Arc<Value>),
    /// One of the many: its JSON, and its tree while still in use. Clones
    /// (the table's, the watch history's, the simulation's) share both.
    Compact(Arc<Doc>),
}

#[derive(Debug)]
pub(crate) struct Doc {
    json: Box<[u8]>,
    tree: Mutex<Weak<Value>>,
}

impl Doc {
    fn of(tree: &Arc<Value>) -> Arc<Doc> {
        Arc::new(Doc {
            json: serde_json::to_vec(&**tree)
                .expect("a JSON value serialises")
                .into(),
            tree: Mutex::new(Arc::downgrade(tree)),
        })
    }
}

/// The kinds kept as bytes alone: the many, and, when the store is told
/// to (`Options::compact_workloads`), the workloads, each of which carries
/// a pod template, and their budgets.
pub(crate) fn compact(res: Resource, workloads: bool) -> bool {
    matches!(res, Resource::Pods | Resource::Events) || (workloads && workload(res))
}

/// The kinds with an object or two for each workload (the workloads and
/// their PodDisruptionBudgets, 14,500 of each in a 150,000-pod cluster):
/// kept as JSON by `Options::compact_workloads`, their trees held while
/// recently read (`Recent`).
pub(crate) fn workload(res: Resource) -> bool {
    res.scalable() || matches!(res, Resource::Jobs | Resource::PodDisruptionBudgets)
}

/// The trees of the workloads read last, held so that the next read of one
/// shares its tree instead of parsing its JSON again (`Stored::value`): a
/// pod's change makes its ReplicaSet and its Deployment reconcile, and a
/// drain changes the pods of the same few workloads again and again. At
/// most `RECENT` trees, the oldest let go first; a tree read again while
/// held is pushed again, so the ring holds at most that many distinct.
#[derive(Default)]
pub(crate) struct Recent(Mutex<std::collections::VecDeque<Arc<Value>>>);

/// A tree is a few KiB, so the ring holds at most a few MiB. A 500-node
/// pool drain reads more workloads than this between two reads of one
/// (docs/benchmarks-history.md), which is why the benches' sandbox keeps
/// workloads as trees.
const RECENT: usize = 1024;

impl Recent {
    pub(crate) fn hold(&self, tree: &Arc<Value>) {
        let mut ring = self.0.lock();
        if ring.back().is_some_and(|t| Arc::ptr_eq(t, tree)) {
            return;
        }
        if ring.len() == RECENT {
            ring.pop_front();
        }
        ring.push_back(tree.clone());
    }
}

impl Stored {
    /// Kept as JSON when `compact` (see `compact()`), else as its tree.
    pub(crate) fn new(value: &Arc<Value>, compact: bool) -> Self {
        if compact {
            Stored::Compact(Doc::of(value))
        } else {
            Stored::Kept(value.clone())
        }
    }

    /// The same object kept as its JSON whatever its kind: what a replaced
    /// or deleted version becomes in the watch history and the simulator's
    /// queue, so a reconcile that rewrites 40,000 workloads does not keep
    /// 40,000 old trees alive until they are handled.
    pub(crate) fn compacted(&self) -> Self {
        match self {
            Stored::Kept(v) => Stored::Compact(Doc::of(v)),
            compact @ Stored::Compact(_) => compact.clone(),
        }
    }

    /// The object, shared if its tree is kept or still in use, else parsed
    /// (and remembered for the next read while the reader holds it).
    pub(crate) fn value(&self) -> Arc<Value> {
        match self {
            Stored::Kept(v) => v.clone(),
            Stored::Compact(doc) => {
                let mut tree = doc.tree.lock();
                if let Some(v) = tree.upgrade() {
                    return v;
                }
                let v = Arc::new(serde_json::from_slice(&doc.json).expect("stored JSON parses"));
                *tree = Arc::downgrade(&v);
                v
            }
        }
    }

    /// The tree of a kind kept parsed, borrowed.
    pub(crate) fn kept(&self) -> Option<&Value> {
        match self {
            Stored::Kept(v) => Some(v),
            Stored::Compact(_) => None,
        }
    }

    /// The object's JSON, as a response body carries it.
    pub(crate) fn json(&self) -> Cow<'_, [u8]> {
        match self {
            Stored::Kept(v) => {
                Cow::Owned(serde_json::to_vec(&**v).expect("a JSON value serialises"))
            }
            Stored::Compact(doc) => Cow::Borrowed(&doc.json),
        }
    }
}

/// A tree kept alive, so that a read of its version while it is held
/// shares it instead of parsing the JSON again (`Stored::value`); counted,
/// so that no more than a limit are held at once.
#[derive(Debug)]
pub(crate) struct Held {
    _tree: Arc<Value>,
    count: Arc<AtomicUsize>,
}

impl Held {
    /// Holds `tree` unless `count` trees are held already.
    pub(crate) fn new(tree: &Arc<Value>, count: &Arc<AtomicUsize>, limit: usize) -> Option<Held> {
        if count.fetch_add(1, Ordering::Relaxed) >= limit {
            count.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(Held {
            _tree: tree.clone(),
            count: count.clone(),
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_share_a_live_tree_and_parse_a_dropped_one() {
        let v = Arc::new(json!({"metadata": {"name": "a"}, "spec": {"n": 1.5}}));
        let doc = Stored::new(&v, compact(Resource::Pods, false));
        assert!(Arc::ptr_eq(&doc.value(), &v));
        let kept = Stored::new(&v, compact(Resource::Nodes, true));
        drop(v);
        assert_eq!(kept.value()["spec"]["n"], 1.5);
        assert_eq!(
            *doc.value(),
            json!({"metadata": {"name": "a"}, "spec": {"n": 1.5}})
        );
        assert_eq!(
            &*doc.json(),
            br#"{"metadata":{"name":"a"},"spec":{"n":1.5}}"#
        );
        assert_eq!(doc.json(), kept.json());
    }

    #[test]
    fn a_parsed_tree_is_shared_by_every_copy_while_held() {
        let doc = Stored::new(&Arc::new(json!({"metadata": {"name": "a"}})), true);
        let copy = doc.compacted();
        let read = doc.value();
        assert!(Arc::ptr_eq(&copy.value(), &read));
        drop(read);
        assert_eq!(copy.value()["metadata"]["name"], "a");
    }
}
