//! Leases as readers see them: a node's heartbeat lease (in
//! `kube-node-lease`, renewed by its kubelet every 10 s, see
//! crate::kubelet::heartbeat) reads as renewed now while its node is Ready
//! and its kubelet runs.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::clock::now_rfc3339_micros;
use crate::objects::nodes;
use crate::resources::Resource;

/// Where kubelets keep their heartbeat leases.
pub(crate) const NAMESPACE: &str = "kube-node-lease";

/// A lease as a reader sees it: a Ready node's is renewed now. `node`
/// finds a node by its name.
pub(crate) fn as_read(
    res: Resource,
    obj: Arc<Value>,
    node: impl FnOnce(&str) -> Option<Arc<Value>>,
) -> Arc<Value> {
    if res != Resource::Leases || obj["metadata"]["namespace"] != NAMESPACE {
        return obj;
    }
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let up = node(name).is_some_and(|n| nodes::kubelet_running(&n));
    if !up {
        return obj;
    }
    let mut renewed = (*obj).clone();
    renewed["spec"]["renewTime"] = json!(now_rfc3339_micros());
    Arc::new(renewed)
}
