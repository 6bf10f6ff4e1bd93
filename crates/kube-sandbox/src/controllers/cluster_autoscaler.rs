//! cluster-autoscaler's scale-down, as far as a drain meets it (kubernetes/
//! autoscaler cluster-autoscaler/core/scaledown/eligibility/eligibility.go
//! and the planner's unneeded-time rule): every `--scan-interval` it looks
//! at each node; one carrying `cluster-autoscaler.kubernetes.io/
//! scale-down-disabled: "true"` is skipped (`HasNoScaleDownAnnotation`); a
//! node is unneeded while nothing but DaemonSet, mirror and finished pods
//! is on it (its utilization 0, under any threshold, and no pod to place
//! elsewhere), cordoned or not; and one unneeded for
//! `--scale-down-unneeded-time` (`--scale-down-unready-time` while it is
//! not Ready) is deleted with its cloud instance. Here the Node object is
//! deleted, and the pod garbage collector takes its pods. Opt-in
//! (`clusterAutoscaler` in the Sandbox document): a roll's emptied,
//! rebooting node is what it would take.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::config::ClusterAutoscaler;
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::store::Store;

/// The annotation that keeps cluster-autoscaler off a node.
pub(crate) const SCALE_DOWN_DISABLED: &str = "cluster-autoscaler.kubernetes.io/scale-down-disabled";

/// Since when each node has been unneeded.
#[derive(Debug, Default)]
pub(crate) struct Unneeded {
    since: BTreeMap<String, Instant>,
}

impl Unneeded {
    /// One scan at `now`: the nodes unneeded for long enough, which are
    /// deleted.
    pub(crate) fn scan(&mut self, store: &mut Store, settings: &ClusterAutoscaler, now: Instant) {
        let mut seen = BTreeMap::new();
        let mut gone = Vec::new();
        for (key, node) in store.iter(Resource::Nodes, None, None) {
            let name = key.1.clone();
            let disabled =
                pods::annotation(&node, SCALE_DOWN_DISABLED).is_some_and(|v| v == "true");
            if disabled || !empty(store, &name) {
                continue;
            }
            let since = self.since.get(&name).copied().unwrap_or(now);
            seen.insert(name.clone(), since);
            let wait = if nodes::is_ready(&node) {
                settings.scale_down_unneeded_seconds
            } else {
                settings.scale_down_unready_seconds
            };
            if now.duration_since(since) >= Duration::from_secs_f64(wait.max(0.0)) {
                gone.push(name);
            }
        }
        self.since = seen;
        for name in gone {
            self.since.remove(&name);
            store.remove(Resource::Nodes, &(String::new(), name));
        }
    }
}

/// Is nothing on the node that cluster-autoscaler would have to move?
fn empty(store: &Store, node: &str) -> bool {
    store.pods_on_node(node).iter().all(|key| {
        store
            .get(Resource::Pods, key)
            .is_none_or(|pod| pods::is_terminal(&pod) || mirror(&pod) || daemon(&pod))
    })
}

fn mirror(pod: &Value) -> bool {
    pods::annotation(pod, "kubernetes.io/config.mirror").is_some()
}

fn daemon(pod: &Value) -> bool {
    pod["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["kind"] == "DaemonSet"))
}
