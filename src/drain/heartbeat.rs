//! Reads a node and its heartbeat Lease for crate::policy::node_health to
//! judge: the lease only for a node not Ready (a Ready node's lease says
//! nothing the condition does not, but for the grace period); a lease that
//! cannot be read (RBAC, none) is done without.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;

use crate::policy::node_health::{NodeDown, assess, is_ready};

/// Reads the node and its heartbeat lease again, for a drain under way.
pub(crate) async fn read(client: &kube::Client, node: &str) -> Option<NodeDown> {
    let nodes: kube::Api<Node> = kube::Api::all(client.clone());
    let node = nodes.get_opt(node).await.ok()??;
    check(client, &node).await
}

/// Whether a node just read is down, reading its lease when it is not Ready.
pub(crate) async fn check(client: &kube::Client, node: &Node) -> Option<NodeDown> {
    let lease = if is_ready(node) {
        None
    } else {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        let leases: kube::Api<Lease> = kube::Api::namespaced(client.clone(), "kube-node-lease");
        leases.get_opt(name).await.ok().flatten()
    };
    assess(node, lease.as_ref(), kube_conventions::time::now())
}
