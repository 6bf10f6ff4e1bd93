//! A node's graceful shutdown, asked for with the node annotation
//! `sandbox.kubectl-maintain.io/graceful-shutdown-seconds: "N"`: as the
//! kubelet's node shutdown manager does it (kubernetes
//! pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go), the node goes
//! NotReady ("node is shutting down") with Kubernetes 1.37's
//! `GracefulNodeShutdownInProgress` True (KEP-5683), every pod on it is
//! terminated and marked Failed ("Terminated", in response to imminent node
//! shutdown); N seconds later the machine is off and its kubelet silent, so
//! the node lifecycle controller marks it Unknown after its grace period.
//! The annotation is removed when the shutdown begins.

use std::time::Duration;

use serde_json::{Value, json};

use crate::clock::now_rfc3339;
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::store::Store;

/// The node annotation that asks for a graceful shutdown.
pub(crate) const ANNOTATION: &str = "sandbox.kubectl-maintain.io/graceful-shutdown-seconds";
/// The node condition of a shutdown in progress (1.37).
pub(crate) const CONDITION: &str = "GracefulNodeShutdownInProgress";

/// How long the node asks to take before it is off, when it asks for a
/// graceful shutdown and is up to take one.
pub(crate) fn asked(node: &Value) -> Option<Duration> {
    let secs = pods::annotation(node, ANNOTATION)?.parse::<f64>().ok()?;
    nodes::is_ready(node).then(|| Duration::from_secs_f64(secs.max(0.0)))
}

/// The shutdown begins: the node says so, its pods are terminated.
pub(crate) fn begin(store: &mut Store, node: &str, minor: u32) {
    let now = now_rfc3339();
    let key = (String::new(), node.to_string());
    let _ = store.modify(Resource::Nodes, &key, |n| {
        if let Some(a) = n["metadata"]["annotations"].as_object_mut() {
            a.remove(ANNOTATION);
        }
        pods::set_condition(
            n,
            "Ready",
            "False",
            "KubeletNotReady",
            "node is shutting down",
            &now,
        );
        if minor >= 37 {
            pods::set_condition(
                n,
                CONDITION,
                "True",
                "GracefulNodeShutdownInProgress",
                "the kubelet is shutting the node down gracefully",
                &now,
            );
        }
    });
    for key in store.pods_on_node(node) {
        let _ = store.modify(Resource::Pods, &key, |p| {
            if pods::is_terminal(p) {
                return;
            }
            pods::set_ready(p, false, &now);
            p["status"]["phase"] = json!("Failed");
            p["status"]["reason"] = json!("Terminated");
            p["status"]["message"] =
                json!("Pod was terminated in response to imminent node shutdown.");
        });
    }
}

/// The machine is off: its kubelet posts no more.
pub(crate) fn power_off(store: &mut Store, node: &str) {
    let key = (String::new(), node.to_string());
    let _ = store.modify(Resource::Nodes, &key, |n| {
        n["metadata"]["annotations"][crate::config::KUBELET] = json!("stopped");
    });
}
