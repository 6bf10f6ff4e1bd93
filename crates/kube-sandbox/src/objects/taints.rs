//! Taints and tolerations: the well-known taint keys the node lifecycle
//! controller and the scheduler share (k8s.io/api core/v1
//! well_known_taints.go), and whether a toleration tolerates a taint (core/v1
//! toleration.go, `ToleratesTaint`).

use serde_json::Value;

/// A cordoned node's taint (`spec.unschedulable`).
pub(crate) const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// A node whose Ready condition is False.
pub(crate) const NOT_READY: &str = "node.kubernetes.io/not-ready";
/// A node whose Ready condition is Unknown (its kubelet stopped reporting).
pub(crate) const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Does one toleration tolerate one taint?
pub(crate) fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or_default();
    if !effect.is_empty() && Some(effect) != taint["effect"].as_str() {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or_default();
    let op = toleration["operator"].as_str().unwrap_or("Equal");
    if key.is_empty() {
        return op == "Exists";
    }
    if Some(key) != taint["key"].as_str() {
        return false;
    }
    match op {
        "Exists" => true,
        _ => {
            toleration["value"].as_str().unwrap_or_default()
                == taint["value"].as_str().unwrap_or_default()
        }
    }
}

/// Put on a node by an operator who knows it is powered off (KEP-2268,
/// GA in 1.28): its terminating pods are force-deleted by the pod garbage
/// collector and its volumes detached at once.
pub(crate) const OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";
