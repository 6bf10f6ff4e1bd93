//! The node lifecycle controller's taints and the taint eviction that
//! follows them (kubernetes pkg/controller/nodelifecycle/
//! node_lifecycle_controller.go, TaintNodesByCondition; pkg/controller/
//! tainteviction/taint_eviction.go):
//! - `spec.unschedulable` and the `node.kubernetes.io/unschedulable:
//!   NoSchedule` taint go together: set by a cordon, gone with an uncordon,
//!   whoever wrote the spec;
//! - a node whose Ready condition is False carries `node.kubernetes.io/
//!   not-ready`, one whose condition is Unknown `node.kubernetes.io/
//!   unreachable`, both NoSchedule and NoExecute; a Ready node neither;
//! - a NoExecute taint deletes the pods on the node that do not tolerate it
//!   at once, and those that tolerate it for `tolerationSeconds` once that
//!   long has passed (the default 300 s tolerations come from admission);
//! - a node whose kubelet stopped posting for `--node-monitor-grace-period`
//!   has its Ready condition and the kubelet's own (MemoryPressure,
//!   DiskPressure, PIDPressure) set to Unknown ("Kubelet stopped posting
//!   node status.", `tryUpdateNodeHealth`), never a condition another
//!   writer owns (NetworkUnavailable, or a maintenance tool's
//!   MaintenanceInProgress), and its pods marked not Ready
//!   (`MarkPodsNotReady`, pkg/controller/util/node/controller_utils.go).

use crate::objects::path::At;
use std::time::Duration;

use serde_json::{Value, json};

use super::work::{Changed, Work};
use crate::apiserver::deletion::{self, DeleteOptions};
use crate::objects::pods;
use crate::objects::taints::{
    NOT_READY, UNREACHABLE, UNSCHEDULABLE as UNSCHEDULABLE_TAINT, tolerates,
};
use crate::resources::Resource;
use crate::store::{Key, Store};

/// The conditions the kubelet posts besides Ready, which the node lifecycle
/// controller marks Unknown with it (`remainingNodeConditionTypes`).
const KUBELET_CONDITIONS: [&str; 3] = ["MemoryPressure", "DiskPressure", "PIDPressure"];

/// The kubelet of `node` has been silent for the grace period: its
/// conditions Unknown, its pods not Ready.
pub(crate) fn mark_unknown(store: &mut Store, node: &str) {
    let now = crate::clock::now_rfc3339();
    let key = (String::new(), node.to_string());
    let _ = store.modify(Resource::Nodes, &key, |n| {
        let types: Vec<String> = n
            .at("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c["type"].as_str().map(str::to_string))
            .filter(|t| KUBELET_CONDITIONS.contains(&t.as_str()))
            .collect();
        for t in types {
            pods::set_condition(
                n,
                &t,
                "Unknown",
                "NodeStatusUnknown",
                "Kubelet stopped posting node status.",
                &now,
            );
        }
        pods::set_condition(
            n,
            "Ready",
            "Unknown",
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
            &now,
        );
    });
    for pod in store.pods_on_node(node) {
        let _ = store.modify(Resource::Pods, &pod, |p| {
            if !pods::is_terminating(p) && !pods::is_terminal(p) {
                crate::objects::pods::set_ready(p, false, &now);
            }
        });
    }
}

/// The grace period of a stopped kubelet ran out: the node goes Unknown,
/// unless the kubelet came back or the node is already not Ready.
pub(crate) fn silent(store: &mut Store, node: &str) {
    let key = (String::new(), node.to_string());
    let still = store.get(Resource::Nodes, &key).is_some_and(|n| {
        crate::objects::nodes::kubelet_stopped(&n) && crate::objects::nodes::is_ready(&n)
    });
    if still {
        mark_unknown(store, node);
    }
}

/// The controller's taints a node should carry now.
fn wanted(node: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    if node.at("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        out.push(json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}));
    }
    let ready = pods::condition(node, "Ready").and_then(|c| c["status"].as_str());
    let key = match ready {
        Some("False") => Some(NOT_READY),
        Some("Unknown") => Some(UNREACHABLE),
        _ => None,
    };
    for effect in ["NoSchedule", "NoExecute"] {
        if let Some(k) = key {
            out.push(json!({"key": k, "effect": effect}));
        }
    }
    out
}

fn ours(taint: &Value) -> bool {
    matches!(
        taint["key"].as_str(),
        Some(UNSCHEDULABLE_TAINT | NOT_READY | UNREACHABLE)
    )
}

fn same(a: &Value, b: &Value) -> bool {
    a["key"] == b["key"] && a["effect"] == b["effect"]
}

/// Every write of a node: its taints and its pods' NoExecute evictions are
/// looked at again.
pub(crate) fn triggers(c: &Changed<'_>, work: &mut Work) {
    if c.resource == Resource::Nodes {
        work.nodes.insert(c.key.clone());
    }
}

/// Brings the node's taints in line; returns the pods its NoExecute taints
/// evict: now (`Duration::ZERO`) or after their toleration runs out.
pub(crate) fn reconcile(store: &mut Store, key: &Key) -> Vec<(Duration, Key, String)> {
    let Some(node) = store.get(Resource::Nodes, key) else {
        return Vec::new();
    };
    let want = wanted(&node);
    let current: Vec<Value> = node
        .at("/spec/taints")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut next: Vec<Value> = current
        .iter()
        .filter(|t| !ours(t) || want.iter().any(|w| same(w, t)))
        .cloned()
        .collect();
    let now = crate::clock::now_rfc3339();
    for w in &want {
        if !next.iter().any(|t| same(t, w)) {
            let mut t = w.clone();
            if t["effect"] == "NoExecute" {
                t["timeAdded"] = json!(now);
            }
            next.push(t);
        }
    }
    if next != current {
        let _ = store.modify(Resource::Nodes, key, |n| {
            if next.is_empty() {
                if let Some(spec) = n["spec"].as_object_mut() {
                    spec.remove("taints");
                }
            } else {
                n["spec"]["taints"] = Value::Array(next.clone());
            }
        });
    }
    let no_execute: Vec<&Value> = next.iter().filter(|t| t["effect"] == "NoExecute").collect();
    if no_execute.is_empty() {
        return Vec::new();
    }
    let mut evictions = Vec::new();
    for pod_key in store.pods_on_node(&key.1) {
        let Some(pod) = store.get(Resource::Pods, &pod_key) else {
            continue;
        };
        if pods::is_terminating(&pod) || pods::is_terminal(&pod) {
            continue;
        }
        if let Some(after) = eviction_delay(&pod, &no_execute) {
            let uid = pod["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            evictions.push((after, pod_key, uid));
        }
    }
    evictions
}

/// When the taints evict the pod: `None` if it tolerates them for good,
/// otherwise the shortest `tolerationSeconds` (zero if one is not tolerated).
fn eviction_delay(pod: &Value, taints: &[&Value]) -> Option<Duration> {
    let tolerations: Vec<&Value> = pod
        .at("/spec/tolerations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let mut delay: Option<Duration> = None;
    for taint in taints {
        let matching: Vec<&&Value> = tolerations.iter().filter(|t| tolerates(t, taint)).collect();
        if matching.is_empty() {
            return Some(Duration::ZERO);
        }
        // Tolerated for good unless every matching toleration is timed.
        let seconds = matching
            .iter()
            .map(|t| t["tolerationSeconds"].as_i64())
            .collect::<Option<Vec<i64>>>()
            .and_then(|s| s.into_iter().max());
        if let Some(s) = seconds {
            let d = Duration::from_secs(u64::try_from(s).unwrap_or(0));
            delay = Some(delay.map_or(d, |old| old.min(d)));
        }
    }
    delay
}

/// The taint eviction itself: the pod (this uid) is deleted, if its node
/// still carries a NoExecute taint it does not tolerate for longer.
pub(crate) fn evict(store: &mut Store, key: &Key, uid: &str) {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return;
    };
    if pod["metadata"]["uid"] != uid || pods::is_terminating(&pod) {
        return;
    }
    let Some(node) = pods::node_name(&pod)
        .and_then(|n| store.get(Resource::Nodes, &(String::new(), n.to_string())))
    else {
        return;
    };
    let taints: Vec<Value> = node
        .at("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t["effect"] == "NoExecute")
        .cloned()
        .collect();
    if taints.is_empty() {
        return;
    }
    let opts = DeleteOptions {
        uid: Some(uid.to_string()),
        ..DeleteOptions::default()
    };
    let _ = deletion::delete(store, Resource::Pods, key, &opts);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(store: &mut Store, res: Resource, obj: Value) {
        store.load(res, obj).unwrap();
    }

    #[test]
    fn a_silent_kubelet_makes_only_its_own_conditions_unknown() {
        let mut store = Store::new(100);
        let condition = |t: &str, s: &str| json!({"type": t, "status": s});
        load(
            &mut store,
            Resource::Nodes,
            json!({"metadata": {"name": "n1"}, "status": {"conditions": [
                condition("Ready", "True"),
                condition("MemoryPressure", "False"),
                condition("NetworkUnavailable", "False"),
                condition("MaintenanceInProgress", "True"),
                condition("MaintenancePlanned", "True"),
            ]}}),
        );
        mark_unknown(&mut store, "n1");
        let node = store
            .get(Resource::Nodes, &(String::new(), "n1".into()))
            .unwrap();
        let status = |t: &str| {
            node["status"]["conditions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["type"] == t)
                .unwrap()["status"]
                .clone()
        };
        assert_eq!(status("Ready"), "Unknown");
        assert_eq!(status("MemoryPressure"), "Unknown");
        assert_eq!(status("NetworkUnavailable"), "False");
        assert_eq!(
            status("MaintenanceInProgress"),
            "True",
            "a maintenance tool's, kept"
        );
        assert_eq!(status("MaintenancePlanned"), "True");
    }

    #[test]
    fn taints_follow_the_cordon_and_readiness() {
        let mut store = Store::new(100);
        load(
            &mut store,
            Resource::Nodes,
            json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": true,
            "taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
        );
        let key = (String::new(), "n1".to_string());
        reconcile(&mut store, &key);
        let keys = |s: &Store| -> Vec<String> {
            s.get(Resource::Nodes, &key).unwrap()["spec"]["taints"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    format!(
                        "{}:{}",
                        t["key"].as_str().unwrap(),
                        t["effect"].as_str().unwrap()
                    )
                })
                .collect()
        };
        assert_eq!(
            keys(&store),
            [
                "dedicated:NoSchedule",
                "node.kubernetes.io/unschedulable:NoSchedule"
            ]
        );
        store
            .modify(Resource::Nodes, &key, |n| {
                n["spec"].as_object_mut().unwrap().remove("unschedulable");
                n["status"]["conditions"][0]["status"] = json!("False");
            })
            .unwrap();
        reconcile(&mut store, &key);
        assert_eq!(
            keys(&store),
            [
                "dedicated:NoSchedule",
                "node.kubernetes.io/not-ready:NoSchedule",
                "node.kubernetes.io/not-ready:NoExecute"
            ]
        );
    }

    #[test]
    fn no_execute_evicts_at_once_or_after_the_toleration() {
        let taint = json!({"key": NOT_READY, "effect": "NoExecute"});
        let timed = json!({"spec": {"tolerations": [{"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]}});
        assert_eq!(
            eviction_delay(&timed, &[&taint]),
            Some(Duration::from_secs(300))
        );
        let forever = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        assert_eq!(eviction_delay(&forever, &[&taint]), None);
        assert_eq!(
            eviction_delay(&json!({"spec": {}}), &[&taint]),
            Some(Duration::ZERO)
        );
    }
}
