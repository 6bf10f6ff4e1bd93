//! A read-only view of the simulated cluster, for tests, benchmarks and the
//! demo: objects as the store holds them and every change in order. Each
//! call takes the store's lock for as long as it reads and hands out owned
//! snapshots (`Arc`s of the stored objects), so a view may be kept while
//! the sandbox serves.

use std::sync::Arc;

use serde_json::Value;

use crate::resources::Resource;
use crate::shared::Shared;
pub use crate::store::{EventType, WatchEvent};

/// Reads the sandbox's objects and history; see the module.
pub struct View<'a> {
    shared: &'a Shared,
}

impl<'a> View<'a> {
    pub(crate) fn new(shared: &'a Shared) -> Self {
        View { shared }
    }

    fn store(&self) -> crate::shared::StoreGuard<'a> {
        self.shared.store()
    }

    /// One object; `namespace` is "" for cluster-scoped resources.
    pub fn get(&self, res: Resource, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.store()
            .get(res, &(namespace.to_string(), name.to_string()))
    }

    /// Every object of a resource, ordered by namespace and name.
    pub fn list(&self, res: Resource) -> Vec<Arc<Value>> {
        self.store()
            .iter(res, None, None)
            .map(|(_, o)| o.clone())
            .collect()
    }

    /// The resourceVersion now: what `created_since` counts from.
    pub fn resource_version(&self) -> u64 {
        self.store().resource_version()
    }

    /// The objects of a resource made after `rv` that are still there, as
    /// they are now, found in the watch history instead of among them all;
    /// `None` when the history no longer reaches back to `rv`.
    pub fn created_since(&self, res: Resource, rv: u64) -> Option<Vec<Arc<Value>>> {
        let store = self.store();
        let events = store.events_since(res, rv).ok()?;
        let uid = |v: &Value| v["metadata"]["uid"].as_str().map(str::to_string);
        Some(
            events
                .iter()
                .filter(|e| e.kind == EventType::Added)
                .filter_map(|e| {
                    let made = e.object();
                    let meta = &made["metadata"];
                    let key = (
                        meta["namespace"].as_str().unwrap_or_default().to_string(),
                        meta["name"].as_str().unwrap_or_default().to_string(),
                    );
                    let now = store.get(res, &key)?;
                    (uid(&now) == uid(&made)).then_some(now)
                })
                .collect(),
        )
    }

    /// How many objects of a resource there are.
    pub fn count(&self, res: Resource) -> usize {
        self.store().len(res)
    }

    /// Every change to a resource still in the watch history, oldest first
    /// (empty after `Sandbox::compact_history`).
    pub fn history(&self, res: Resource) -> Vec<Arc<WatchEvent>> {
        let store = self.store();
        let floor = store.history_floor(res);
        store.events_since(res, floor).unwrap_or_default()
    }
}
