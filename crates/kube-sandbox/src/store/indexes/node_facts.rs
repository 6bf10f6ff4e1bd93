//! What the scheduler reads of each node, by name, parsed once per write.

use std::collections::HashMap;

use serde_json::Value;

use crate::objects::nodes;
use crate::store::Key;

#[derive(Default)]
pub(crate) struct NodeFacts(HashMap<String, nodes::Facts>);

impl NodeFacts {
    pub(super) fn apply(&mut self, key: &Key, node: &Value, add: bool) {
        if add {
            self.0.insert(key.1.clone(), nodes::Facts::of(node));
        } else {
            self.0.remove(&key.1);
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&nodes::Facts> {
        self.0.get(name)
    }
}
