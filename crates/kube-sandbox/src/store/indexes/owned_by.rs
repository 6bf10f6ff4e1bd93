//! Objects of every resource by the uids their ownerReferences name (the
//! garbage collector's graph, and each controller's owned pods).

use crate::objects::path::At;
use foldhash::HashMap;
use std::collections::BTreeSet;

use serde_json::Value;

use crate::resources::Resource;
use crate::store::Key;

#[derive(Default)]
pub(crate) struct OwnedBy(HashMap<String, BTreeSet<(Resource, Key)>>);

impl OwnedBy {
    pub(super) fn apply(&mut self, res: Resource, key: &Key, obj: &Value, add: bool) {
        let Some(owners) = obj
            .at("/metadata/ownerReferences")
            .and_then(Value::as_array)
        else {
            return;
        };
        for uid in owners.iter().filter_map(|o| o["uid"].as_str()) {
            let set = self.0.entry(uid.to_string()).or_default();
            if add {
                set.insert((res, key.clone()));
            } else {
                set.remove(&(res, key.clone()));
                if set.is_empty() {
                    self.0.remove(uid);
                }
            }
        }
    }

    /// Objects of one resource whose ownerReferences name `uid`.
    pub(crate) fn of(&self, res: Resource, uid: &str) -> Vec<Key> {
        self.keys_of(res, uid).cloned().collect()
    }

    /// The same, borrowed.
    pub(crate) fn keys_of(&self, res: Resource, uid: &str) -> impl Iterator<Item = &Key> {
        self.0
            .get(uid)
            .into_iter()
            .flatten()
            .filter(move |(r, _)| *r == res)
            .map(|(_, k)| k)
    }

    /// Objects of any resource whose ownerReferences name `uid`.
    pub(crate) fn all(&self, uid: &str) -> Vec<(Resource, Key)> {
        self.0
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
}
