//! What scans read of each pod, by key (namespace first, so a namespace's
//! pods are a range), parsed once per write and shared with watch events.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::objects::pods;
use crate::store::Key;

#[derive(Default)]
pub(crate) struct PodFacts(BTreeMap<Key, Arc<pods::Facts>>);

impl PodFacts {
    pub(super) fn apply(&mut self, key: &Key, pod: &Value, add: bool) {
        if add {
            self.0.insert(key.clone(), Arc::new(pods::Facts::of(pod)));
        } else {
            self.0.remove(key);
        }
    }

    /// Every pod's facts, optionally of one namespace.
    pub(crate) fn all<'a>(
        &'a self,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a Key, &'a pods::Facts)> + 'a {
        let start = (namespace.unwrap_or_default().to_string(), String::new());
        self.0
            .range(start..)
            .take_while(move |(k, _)| namespace.is_none_or(|ns| k.0 == ns))
            .map(|(k, f)| (k, &**f))
    }

    /// One pod's facts, with the key as stored.
    pub(crate) fn entry(&self, key: &Key) -> Option<(&Key, &pods::Facts)> {
        self.0.get_key_value(key).map(|(k, f)| (k, &**f))
    }

    /// One pod's facts, shared.
    pub(crate) fn shared(&self, key: &Key) -> Option<Arc<pods::Facts>> {
        self.0.get(key).cloned()
    }
}
