//! A node's reboot, asked for with the node annotation
//! `sandbox.kubectl-maintain.io/reboot-seconds: "N"` (by `kubectl annotate`,
//! or by whatever a `roll --exec` runs). As a real reboot looks from the API:
//! the kubelet stops posting, so the node goes NotReady and the node
//! lifecycle controller marks its pods not Ready (kubernetes
//! pkg/controller/nodelifecycle, `MarkPodsNotReady`); after N seconds the
//! kubelet registers again with a new `status.nodeInfo.bootID` and Ready,
//! and restarts the containers of every pod still bound to the node
//! (DaemonSet and static pods), each with one restart more, Ready again
//! after its readiness time. The annotation is removed when the node goes
//! down, so one annotation is one reboot.

use crate::objects::path::At;
use std::time::Duration;

use serde_json::{Value, json};

use crate::clock::now_rfc3339;
use crate::config::REBOOT_SECONDS;
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::store::{Key, Store};

fn node_key(node: &str) -> Key {
    (String::new(), node.to_string())
}

/// How long the node asks to be down for, when it asks for a reboot and is
/// up to take one.
pub(crate) fn asked(node: &Value) -> Option<Duration> {
    let secs = pods::annotation(node, REBOOT_SECONDS)?
        .parse::<f64>()
        .ok()?;
    nodes::is_ready(node).then(|| Duration::from_secs_f64(secs.max(0.0)))
}

/// The kubelet stops: the node NotReady, its pods not Ready.
pub(crate) fn shut_down(store: &mut Store, node: &str) {
    let _ = store.modify(Resource::Nodes, &node_key(node), |n| {
        if let Some(a) = n["metadata"]["annotations"].as_object_mut() {
            a.remove(REBOOT_SECONDS);
        }
    });
    crate::controllers::node_lifecycle::mark_unknown(store, node);
}

/// The kubelet is back after the reboot: a new boot ID, Ready.
pub(crate) fn boot(store: &mut Store, node: &str) {
    let now = now_rfc3339();
    let boot_id = store.ids.uid();
    let _ = store.modify(Resource::Nodes, &node_key(node), |n| {
        n["status"]["nodeInfo"]["bootID"] = json!(boot_id);
        super::outage::posting_ready(n, &now);
    });
    if let Some(n) = store.get(Resource::Nodes, &node_key(node)) {
        crate::events::record(
            store,
            &n,
            "Warning",
            "Rebooted",
            &format!("Node {node} has been rebooted, boot id: {boot_id}"),
            "kubelet",
        );
    }
}

/// Did the node boot again between these two versions of it?
pub(crate) fn rebooted(old: &Value, new: &Value) -> bool {
    let id = |n: &Value| n.at("/status/nodeInfo/bootID").cloned();
    id(old) != id(new) && id(old).is_some()
}

/// The kubelet restarts a running pod's containers after a reboot (ready
/// again when `ready`).
pub(crate) fn restart(store: &mut Store, key: &Key, uid: &str, ready: bool) {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return;
    };
    if pod["metadata"]["uid"] != uid || pods::is_terminating(&pod) || pods::phase(&pod) != "Running"
    {
        return;
    }
    let now = now_rfc3339();
    let _ = store.modify(Resource::Pods, key, |p| {
        for c in p["status"]["containerStatuses"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            let restarts = c["restartCount"].as_i64().unwrap_or(0) + 1;
            c["restartCount"] = json!(restarts);
            c["state"] = json!({"running": {"startedAt": now}});
        }
        pods::set_ready(p, ready, &now);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reboot_is_asked_of_a_ready_node_and_changes_its_boot_id() {
        let node = |ready: &str, boot: &str| {
            json!({
                "metadata": {"name": "n", "annotations": {REBOOT_SECONDS: "2.5"}},
                "status": {"conditions": [{"type": "Ready", "status": ready}],
                           "nodeInfo": {"bootID": boot}},
            })
        };
        assert_eq!(asked(&node("True", "a")), Some(Duration::from_millis(2500)));
        assert_eq!(asked(&node("Unknown", "a")), None);
        assert!(rebooted(&node("True", "a"), &node("True", "b")));
        assert!(!rebooted(&node("True", "a"), &node("Unknown", "a")));
    }
}
