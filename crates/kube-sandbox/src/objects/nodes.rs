//! Reading nodes: what the scheduler, the node lifecycle controller and
//! the kubelets need to know of one.

use serde_json::Value;

use super::pods;

/// Is the node Ready? A node that reports no Ready condition (a
/// hand-written one) counts as Ready.
pub(crate) fn is_ready(node: &Value) -> bool {
    pods::condition(node, "Ready").is_none_or(|c| c["status"] == "True")
}
