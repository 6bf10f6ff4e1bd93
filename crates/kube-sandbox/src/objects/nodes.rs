//! Reading nodes: what the scheduler, the node lifecycle controller and
//! the kubelets need to know of one.

use crate::objects::path::At;
use kube_conventions::quantity::milli_of;
use serde_json::Value;

use super::pods;

/// Is the node Ready? A node that reports no Ready condition (a
/// hand-written one) counts as Ready.
pub(crate) fn is_ready(node: &Value) -> bool {
    pods::condition(node, "Ready").is_none_or(|c| c["status"] == "True")
}

/// Does the node's kubelet run: Ready (or NotReady because it is shutting
/// the node down gracefully, crate::kubelet::graceful_shutdown: it stops
/// pods and unmounts volumes until the machine is off), and not stopped by
/// the `sandbox.kubectl-maintain.io/kubelet: stopped` knob
/// (crate::kubelet::outage)?
pub(crate) fn kubelet_running(node: &Value) -> bool {
    (is_ready(node) || shutting_down(node)) && !kubelet_stopped(node)
}

/// Is the node's kubelet shutting it down gracefully (its Ready condition
/// says so, as pkg/kubelet/nodeshutdown writes it)?
pub(crate) fn shutting_down(node: &Value) -> bool {
    pods::condition(node, "Ready").is_some_and(|c| c["message"] == "node is shutting down")
}

/// Is the node's kubelet stopped by the sandbox's knob?
pub(crate) fn kubelet_stopped(node: &Value) -> bool {
    pods::annotation(node, crate::config::KUBELET) == Some("stopped")
}

/// Does the node carry a taint with this key?
pub(crate) fn has_taint(node: &Value, key: &str) -> bool {
    node.at("/spec/taints")
        .and_then(Value::as_array)
        .is_some_and(|ts| ts.iter().any(|t| t["key"] == key))
}

/// Not Ready and tainted `node.kubernetes.io/out-of-service`: the pod
/// garbage collector and the attach/detach controller treat it as powered off.
pub(crate) fn out_of_service(node: &Value) -> bool {
    !is_ready(node) && has_taint(node, crate::objects::taints::OUT_OF_SERVICE)
}

/// What the scheduler reads of a node on every attempt, worked out once
/// per change of the node (kube-scheduler keeps the same in its NodeInfo
/// snapshot, pkg/scheduler/framework/types.go): a 5,000-node cluster is
/// otherwise read 5,000 times over for each pod placed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Facts {
    pub(crate) ready: bool,
    /// `spec.unschedulable`: cordoned.
    pub(crate) unschedulable: bool,
    /// It has taints (`spec.taints` not empty): most nodes have none, and
    /// the scheduler then skips reading them for every pod it places.
    pub(crate) tainted: bool,
    /// Each resource's allocatable, or its capacity where the node gives
    /// no allocatable, in thousandths.
    pub(crate) allocatable: pods::Requests,
}

impl Facts {
    pub(crate) fn of(node: &Value) -> Self {
        let mut allocatable = pods::Requests::new();
        for from in ["/status/capacity", "/status/allocatable"] {
            let Some(list) = node.at(from).and_then(Value::as_object) else {
                continue;
            };
            for (name, q) in list {
                if let Some(m) = milli_of(q) {
                    allocatable.insert(pods::ResourceName::from(name.as_str()), m);
                }
            }
        }
        Facts {
            ready: is_ready(node),
            unschedulable: node.at("/spec/unschedulable").and_then(Value::as_bool) == Some(true),
            tainted: node
                .at("/spec/taints")
                .and_then(Value::as_array)
                .is_some_and(|t| !t.is_empty()),
            allocatable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn allocatable_wins_over_capacity_which_fills_what_it_lacks() {
        let node = json!({"spec": {"unschedulable": true},
            "status": {"capacity": {"cpu": "4", "pods": "110"}, "allocatable": {"cpu": "3500m"},
                "conditions": [{"type": "Ready", "status": "False"}]}});
        let f = Facts::of(&node);
        assert_eq!(f.allocatable[&pods::ResourceName::Cpu], 3500);
        assert_eq!(f.allocatable[&pods::ResourceName::Pods], 110_000);
        assert!(f.unschedulable && !f.ready);
        let bare = Facts::of(&json!({"metadata": {"name": "n"}}));
        assert!(bare.ready && !bare.unschedulable && bare.allocatable.is_empty());
    }
}
