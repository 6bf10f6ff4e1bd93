//! Pods by the node they are bound to.

use foldhash::HashMap;
use std::collections::BTreeSet;

use serde_json::Value;

use super::node_of;
use crate::store::Key;

#[derive(Default)]
pub(crate) struct PodsByNode(HashMap<String, BTreeSet<Key>>);

impl PodsByNode {
    pub(super) fn apply(&mut self, key: &Key, pod: &Value, add: bool) {
        let Some(node) = node_of(pod) else { return };
        let set = self.0.entry(node.to_string()).or_default();
        if add {
            set.insert(key.clone());
        } else {
            set.remove(key);
        }
    }

    /// Keys of the pods bound to a node.
    pub(crate) fn on(&self, node: &str) -> Vec<Key> {
        self.0
            .get(node)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
}
