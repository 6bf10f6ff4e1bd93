//! Bound pods with required pod anti-affinity terms (which every placement
//! must check against).

use std::collections::BTreeSet;

use serde_json::Value;

use super::node_of;
use crate::objects::pods;
use crate::store::Key;

#[derive(Default)]
pub(crate) struct AntiAffine(BTreeSet<Key>);

impl AntiAffine {
    pub(super) fn apply(&mut self, key: &Key, pod: &Value, add: bool) {
        if node_of(pod).is_none() || !pods::has_required_anti_affinity(pod) {
            return;
        }
        if add {
            self.0.insert(key.clone());
        } else {
            self.0.remove(key);
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Key> {
        self.0.iter()
    }
}
