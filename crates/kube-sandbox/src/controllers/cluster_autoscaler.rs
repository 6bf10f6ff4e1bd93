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

/// A DaemonSet's pod: its controller is one (cluster-autoscaler's
/// `pod_util.IsDaemonSetPod` reads the controller reference).
fn daemon(pod: &Value) -> bool {
    pods::controller_of(pod).is_some_and(|o| o.kind == "DaemonSet")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(store: &mut Store, name: &str, annotations: &Value) {
        store
            .load(
                Resource::Nodes,
                json!({"metadata": {"name": name, "annotations": annotations},
                       "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
            )
            .unwrap();
    }

    fn pod(store: &mut Store, name: &str, on: &str, owner: &str) {
        store
            .load(
                Resource::Pods,
                json!({"metadata": {"name": name, "namespace": "ns", "uid": name,
                                    "ownerReferences": [{"kind": owner, "name": "o", "uid": "o", "controller": true}]},
                       "spec": {"nodeName": on}, "status": {"phase": "Running"}}),
            )
            .unwrap();
    }

    fn names(store: &Store) -> Vec<String> {
        store
            .iter(Resource::Nodes, None, None)
            .map(|(k, _)| k.1.clone())
            .collect()
    }

    #[test]
    fn an_empty_node_goes_after_the_unneeded_time_unless_scale_down_is_disabled() {
        let mut store = Store::new(100);
        node(&mut store, "busy", &json!({}));
        node(&mut store, "daemons-only", &json!({}));
        node(&mut store, "kept", &json!({SCALE_DOWN_DISABLED: "true"}));
        node(
            &mut store,
            "not-kept",
            &json!({SCALE_DOWN_DISABLED: "false"}),
        );
        pod(&mut store, "web", "busy", "ReplicaSet");
        pod(&mut store, "agent", "daemons-only", "DaemonSet");
        let settings = ClusterAutoscaler {
            scan_interval_seconds: 1.0,
            scale_down_unneeded_seconds: 5.0,
            scale_down_unready_seconds: 10.0,
        };
        let mut unneeded = Unneeded::default();
        let start = Instant::now();
        unneeded.scan(&mut store, &settings, start);
        assert_eq!(names(&store).len(), 4, "unneeded from now, not gone");
        unneeded.scan(&mut store, &settings, start + Duration::from_secs(4));
        assert_eq!(names(&store).len(), 4);
        unneeded.scan(&mut store, &settings, start + Duration::from_secs(5));
        assert_eq!(names(&store), ["busy", "kept"]);
    }
}
