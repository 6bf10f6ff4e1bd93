//! Watches on the PodDisruptionBudgets that refused an eviction, one per
//! budget (field-selected by name), shared by every node's drain. When a
//! budget allows a disruption again, the blocked evictions are retried at
//! once instead of after a blind sleep.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::broadcast;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Budget {
    pub(crate) disruptions_allowed: i32,
    pub(crate) current_healthy: i32,
    pub(crate) desired_healthy: i32,
    pub(crate) expected_pods: i32,
    /// The controller has seen the latest spec.
    pub(crate) observed: bool,
}

impl Budget {
    pub(crate) fn from_pdb(p: &PodDisruptionBudget) -> Self {
        let s = p.status.clone().unwrap_or_default();
        Budget {
            disruptions_allowed: s.disruptions_allowed,
            current_healthy: s.current_healthy,
            desired_healthy: s.desired_healthy,
            expected_pods: s.expected_pods,
            observed: s.observed_generation.unwrap_or(0) >= p.metadata.generation.unwrap_or(0),
        }
    }
}

/// (namespace, name).
pub(crate) type Key = (String, String);

#[derive(Clone)]
pub(crate) struct PdbWatches {
    client: kube::Client,
    state: Arc<Mutex<HashMap<Key, Option<Budget>>>>,
    changed: broadcast::Sender<Key>,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl PdbWatches {
    pub(crate) fn new(client: kube::Client) -> Self {
        let (changed, _) = broadcast::channel(1024);
        PdbWatches {
            client,
            state: Arc::new(Mutex::new(HashMap::new())),
            changed,
            tasks: Arc::new(Mutex::new(Vec::new())),
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Key> {
        self.changed.subscribe()
    }

    pub(crate) fn get(&self, key: &Key) -> Option<Budget> {
        self.state
            .lock()
            .expect("pdb state")
            .get(key)
            .copied()
            .flatten()
    }

    /// Reads a budget once (dry runs, which do not wait for changes).
    pub(crate) async fn fetch(&self, key: &Key) -> Option<Budget> {
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.client.clone(), &key.0);
        let budget = Budget::from_pdb(&api.get(&key.1).await.ok()?);
        self.state
            .lock()
            .expect("pdb state")
            .insert(key.clone(), Some(budget));
        Some(budget)
    }

    /// Starts watching this budget unless it is watched already.
    pub(crate) fn ensure(&self, key: &Key) {
        {
            let mut state = self.state.lock().expect("pdb state");
            if state.contains_key(key) {
                return;
            }
            state.insert(key.clone(), None);
        }
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.client.clone(), &key.0);
        let config = watcher::Config::default().fields(&format!("metadata.name={}", key.1));
        let state = self.state.clone();
        let changed = self.changed.clone();
        let key = key.clone();
        let task = tokio::spawn(async move {
            let mut stream = watcher(api, config)
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(item) = stream.next().await {
                if let Ok(pdb) = item {
                    state
                        .lock()
                        .expect("pdb state")
                        .insert(key.clone(), Some(Budget::from_pdb(&pdb)));
                    let _ = changed.send(key.clone());
                }
            }
        });
        self.tasks.lock().expect("tasks").push(task);
    }
}

impl Drop for PdbWatches {
    fn drop(&mut self) {
        // The last clone stops the watches.
        if Arc::strong_count(&self.tasks) == 1 {
            for t in self.tasks.lock().expect("tasks").drain(..) {
                t.abort();
            }
        }
    }
}
