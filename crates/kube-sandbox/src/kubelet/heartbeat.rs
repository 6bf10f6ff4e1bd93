//! Node heartbeats: each kubelet holds a Lease named after its node in
//! `kube-node-lease` (kubernetes pkg/kubelet/nodelease, component-helpers
//! apimachinery/lease/controller.go): holder the node, 40 s duration, owned
//! by the Node so that it goes with it, renewed every 10 s while the kubelet
//! runs. The sandbox does not write a renewal every 10 s (5,000 nodes would
//! flood every watch's history): the stored `renewTime` is written when the
//! lease is made and whenever the node changes while Ready, and a reader of
//! a Ready node's lease sees it renewed now. A NotReady node's lease keeps
//! its last renewal, so it goes stale as a dead kubelet's does
//! (crate::objects::leases).

use serde_json::json;

use crate::clock::now_rfc3339_micros;
use crate::objects::leases::NAMESPACE;
use crate::objects::nodes;
use crate::resources::Resource;
use crate::store::{Key, Store};

const DURATION_SECONDS: u32 = 40;

fn key(node: &str) -> Key {
    (NAMESPACE.to_string(), node.to_string())
}

/// Makes the node's lease when it has none, and renews it while the node is
/// Ready.
pub(crate) fn sync(store: &mut Store, node_name: &str) {
    let Some(node) = store.get(Resource::Nodes, &(String::new(), node_name.to_string())) else {
        return;
    };
    let ready = nodes::kubelet_running(&node);
    if store.get(Resource::Leases, &key(node_name)).is_some() {
        if ready {
            let _ = store.modify(Resource::Leases, &key(node_name), |l| {
                l["spec"]["renewTime"] = json!(now_rfc3339_micros());
            });
        }
        return;
    }
    let lease = json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": node_name,
            "namespace": NAMESPACE,
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "Node",
                "name": node_name,
                "uid": node["metadata"]["uid"],
            }],
        },
        "spec": {
            "holderIdentity": node_name,
            "leaseDurationSeconds": DURATION_SECONDS,
            "renewTime": now_rfc3339_micros(),
        },
    });
    let _ = store.create(Resource::Leases, lease);
}
