//! A read-only view of the simulated cluster, for tests, benchmarks and the
//! demo: objects as the store holds them and every change in order. It
//! holds the store's lock while it lives, so keep it short.

use std::sync::{Arc, MutexGuard};

use serde_json::Value;

use crate::resources::Resource;
use crate::store::Store;
pub use crate::store::{EventType, WatchEvent};

pub struct View<'a> {
    store: MutexGuard<'a, Store>,
}

impl<'a> View<'a> {
    pub(crate) fn new(store: MutexGuard<'a, Store>) -> Self {
        View { store }
    }

    /// One object; `namespace` is "" for cluster-scoped resources.
    pub fn get(&self, res: Resource, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.store
            .get(res, &(namespace.to_string(), name.to_string()))
    }

    /// Every object of a resource, ordered by namespace and name.
    pub fn list(&self, res: Resource) -> Vec<Arc<Value>> {
        self.store
            .iter(res, None, None)
            .map(|(_, o)| o.clone())
            .collect()
    }

    pub fn count(&self, res: Resource) -> usize {
        self.store.len(res)
    }

    /// Every change to a resource still in the watch history, oldest first
    /// (empty after `Sandbox::compact_history`).
    pub fn history(&self, res: Resource) -> Vec<Arc<WatchEvent>> {
        let floor = self.store.history_floor();
        self.store.events_since(res, floor).unwrap_or_default()
    }
}
