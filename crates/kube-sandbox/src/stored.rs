//! An object as the store keeps it: its JSON bytes, and its parsed tree for
//! the kinds read all the time. A parsed tree (`serde_json::Value`) takes
//! about ten times the memory of its JSON, which for 150,000 pods is
//! gigabytes: pods and events keep only their bytes, parsed again when read,
//! and the tree a write made is remembered weakly, so while anyone still
//! holds it (the simulation handling the change, a watch sending it) a read
//! shares it instead of parsing. Scans over many pods read the store's
//! `pods::Facts` instead.

use std::borrow::Cow;
use std::sync::{Arc, Weak};

use serde_json::Value;

use crate::resources::Resource;

#[derive(Debug, Clone)]
pub(crate) enum Stored {
    /// A kind read all the time: its tree, serialised when sent.
    Kept(Arc<Value>),
    /// One of the many: its JSON, and its tree while still in use.
    Compact {
        json: Arc<[u8]>,
        parsed: Weak<Value>,
    },
}

fn serialise(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("a JSON value serialises")
}

/// The kinds kept as bytes alone: the many.
fn compact(res: Resource) -> bool {
    matches!(res, Resource::Pods | Resource::Events)
}

impl Stored {
    pub(crate) fn new(res: Resource, value: &Arc<Value>) -> Self {
        if compact(res) {
            Stored::Compact {
                json: serialise(value).into(),
                parsed: Arc::downgrade(value),
            }
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
            Stored::Kept(v) => Stored::Compact {
                json: serialise(v).into(),
                parsed: Arc::downgrade(v),
            },
            compact @ Stored::Compact { .. } => compact.clone(),
        }
    }

    /// The object, shared if its tree is kept or still in use, else parsed.
    pub(crate) fn value(&self) -> Arc<Value> {
        match self {
            Stored::Kept(v) => v.clone(),
            Stored::Compact { json, parsed } => parsed.upgrade().unwrap_or_else(|| {
                Arc::new(serde_json::from_slice(json).expect("stored JSON parses"))
            }),
        }
    }

    /// The tree of a kind kept parsed, borrowed.
    pub(crate) fn kept(&self) -> Option<&Value> {
        match self {
            Stored::Kept(v) => Some(v),
            Stored::Compact { .. } => None,
        }
    }

    /// The object's JSON, as a response body carries it.
    pub(crate) fn json(&self) -> Cow<'_, [u8]> {
        match self {
            Stored::Kept(v) => Cow::Owned(serialise(v)),
            Stored::Compact { json, .. } => Cow::Borrowed(json),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_share_a_live_tree_and_parse_a_dropped_one() {
        let v = Arc::new(json!({"metadata": {"name": "a"}, "spec": {"n": 1.5}}));
        let doc = Stored::new(Resource::Pods, &v);
        assert!(Arc::ptr_eq(&doc.value(), &v));
        let kept = Stored::new(Resource::Nodes, &v);
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
}
