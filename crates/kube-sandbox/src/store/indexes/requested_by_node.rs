//! What the unfinished pods bound to each node request (the scheduler's
//! NodeInfo): kube-scheduler drops terminal pods from it.

use std::collections::HashMap;

use serde_json::Value;

use super::node_of;
use crate::objects::pods;

/// What the unfinished pods bound to a node request, in thousandths.
#[derive(Debug, Clone, Default)]
pub(crate) struct Requested {
    pub(crate) pods: i64,
    pub(crate) resources: pods::Requests,
}

#[derive(Default)]
pub(crate) struct RequestedByNode(HashMap<String, Requested>);

impl RequestedByNode {
    pub(super) fn apply(&mut self, pod: &Value, add: bool) {
        let Some(node) = node_of(pod) else { return };
        if pods::is_terminal(pod) {
            return;
        }
        let used = self.0.entry(node.to_string()).or_default();
        let sign = if add { 1 } else { -1 };
        used.pods += sign;
        for (k, v) in pods::requests(pod) {
            *used.resources.entry(k).or_default() += sign * v;
        }
    }

    pub(crate) fn on(&self, node: &str) -> Option<&Requested> {
        self.0.get(node)
    }
}
