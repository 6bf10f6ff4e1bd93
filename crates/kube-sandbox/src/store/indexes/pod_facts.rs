//! What scans read of each pod, by key (namespace first, so a namespace's
//! pods are a range), parsed once per write and shared with watch events.
//! One pod's facts are looked up by hash: the controllers look up each of
//! their pods after every change of one, and the searches of a tree of
//! 150,000 keys (most of them alike for their first dozen bytes) were about
//! a twentieth of the simulation's samples during a 5,000-node pool drain.

use foldhash::HashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::objects::pods;
use crate::store::Key;

#[derive(Default)]
pub(crate) struct PodFacts {
    ordered: BTreeMap<Key, Arc<pods::Facts>>,
    by_key: HashMap<Key, Arc<pods::Facts>>,
}

impl PodFacts {
    pub(super) fn apply(&mut self, key: &Key, pod: &Value, add: bool) {
        if add {
            let facts = Arc::new(pods::Facts::of(pod));
            // A pod written again keeps its entries (and their keys).
            if let Some(f) = self.by_key.get_mut(key) {
                *f = facts.clone();
                if let Some(f) = self.ordered.get_mut(key) {
                    *f = facts;
                }
                return;
            }
            self.by_key.insert(key.clone(), facts.clone());
            self.ordered.insert(key.clone(), facts);
        } else {
            self.by_key.remove(key);
            self.ordered.remove(key);
        }
    }

    /// Every pod's facts, optionally of one namespace.
    pub(crate) fn all<'a>(
        &'a self,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a Key, &'a pods::Facts)> + 'a {
        let start = (namespace.unwrap_or_default().to_string(), String::new());
        self.ordered
            .range(start..)
            .take_while(move |(k, _)| namespace.is_none_or(|ns| k.0 == ns))
            .map(|(k, f)| (k, &**f))
    }

    /// One pod's facts, with the key as stored.
    pub(crate) fn entry(&self, key: &Key) -> Option<(&Key, &pods::Facts)> {
        self.by_key.get_key_value(key).map(|(k, f)| (k, &**f))
    }

    /// One pod's facts, shared.
    pub(crate) fn shared(&self, key: &Key) -> Option<Arc<pods::Facts>> {
        self.by_key.get(key).cloned()
    }
}
