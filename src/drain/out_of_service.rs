//! `--node-shut-down`: the hard path for a node whose kubelet is down.
//! The `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute` taint
//! (KEP-2268, GA in 1.28) has the pod garbage collector force-delete the
//! node's terminating pods (kubernetes pkg/controller/podgc,
//! `gcTerminating`) and the attach/detach controller detach their volumes
//! at once, so StatefulSet pods are recreated elsewhere and ReadWriteOnce
//! volumes attach there. On a node that is only partitioned, its kubelet
//! still runs its pods and writes to those volumes: the taint goes on only
//! with proof that the node is powered off, never on NotReady alone:
//! - the cloud provider's `node.kubernetes.io/shutdown` taint on it;
//! - `--fence-command CMD` exiting 0 (an IPMI, Redfish or cloud CLI
//!   power-off), run with `NODE` and the node's addresses in its
//!   environment;
//! - the node's name typed at a prompt (`--yes` is not proof).
//!
//! The taint is added with the cordon and recorded with it
//! (crate::policy::maintenance), so `uncordon` removes it, and only once
//! the node is Ready again and nothing still acts on the taint (`release`):
//! no pod on the node terminating (Pod GC force-deletes them,
//! pkg/controller/podgc/gc_controller.go) and no VolumeAttachment naming it
//! (the attach/detach controller force-detaches them,
//! pkg/controller/volume/attachdetach/reconciler/reconciler.go). Both act
//! on the taint as their informers last saw it: removed while they still
//! act, they race with the node's own kubelet (kubernetes PRs #141887 and
//! #141888, open at the time of writing).

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::Api;
use kube::api::ListParams;

use crate::policy::maintenance::TaintSpec;
use crate::policy::node_health::{self, NodeDown};

/// How the operator proves that nodes without the cloud's shutdown taint
/// are powered off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Proof {
    /// `--fence-command`: run for each node; exit 0 is proof.
    Fence(String),
    /// The node's name typed at a terminal.
    Typed,
}

/// The taint, as uncordon's record keeps it.
pub(crate) fn taint() -> TaintSpec {
    TaintSpec {
        key: node_health::OUT_OF_SERVICE.into(),
        value: "nodeshutdown".into(),
        effect: "NoExecute".into(),
    }
}

/// What proves one node powered off, once its health is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodeProof {
    /// The cloud's shutdown taint is on it.
    CloudShutdown,
    /// It is out of service already (an earlier run, killed before its
    /// end, or the operator took it so): that proof was given.
    AlreadyOutOfService,
    /// The fence command, still to be run.
    Fence(String),
    /// Its name, still to be typed.
    Typed,
}

/// The proof asked of each selected node, in their order, or why
/// `--node-shut-down` cannot apply: a node that is Ready (a live kubelet),
/// or no way to prove power-off (no terminal to type at, no fence command).
pub(crate) fn plan(
    proof: &Proof,
    nodes: &[(&str, Option<&NodeDown>)],
    can_type: bool,
) -> Result<Vec<NodeProof>, String> {
    let mut out = Vec::new();
    for (name, down) in nodes {
        let Some(down) = down else {
            return Err(format!(
                "node/{name} is Ready: --node-shut-down applies only to a node whose kubelet is down (a live kubelet still writes to its volumes); nothing was changed"
            ));
        };
        let proof = if down.out_of_service() {
            NodeProof::AlreadyOutOfService
        } else if down.shut_down() {
            NodeProof::CloudShutdown
        } else {
            match proof {
                Proof::Fence(cmd) => NodeProof::Fence(cmd.clone()),
                Proof::Typed if can_type => NodeProof::Typed,
                Proof::Typed => {
                    return Err(format!(
                        "no proof that node/{name} is powered off: it has no node.kubernetes.io/shutdown taint, no --fence-command was given, and there is no terminal to type its name at (--yes is not proof; NotReady alone may be a network partition); nothing was changed"
                    ));
                }
            }
        };
        out.push(proof);
    }
    Ok(out)
}

/// The environment a fence command runs with: `NODE`, and the node's
/// addresses (`NODE_ADDRESSES` all of them, space-separated, and one
/// variable per type: `NODE_INTERNALIP`, `NODE_EXTERNALIP`, `NODE_HOSTNAME`...).
pub(crate) fn fence_env(node: &Node) -> Vec<(String, String)> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let addresses = node
        .status
        .as_ref()
        .and_then(|s| s.addresses.clone())
        .unwrap_or_default();
    let mut env = vec![("NODE".to_string(), name)];
    env.push((
        "NODE_ADDRESSES".into(),
        addresses
            .iter()
            .map(|a| a.address.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    ));
    for a in &addresses {
        let var = format!("NODE_{}", a.type_.to_uppercase());
        if !env.iter().any(|(k, _)| *k == var) {
            env.push((var, a.address.clone()));
        }
    }
    env
}

/// Runs the fence command for one node (through `sh -c`): Ok when it
/// exited 0, otherwise why it is no proof.
pub(crate) async fn fence(cmd: &str, node: &Node) -> Result<(), String> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let status = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .envs(fence_env(node))
        .stdin(std::process::Stdio::null())
        .status()
        .await
        .map_err(|e| format!("--fence-command for node/{name} could not run: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let how = status
        .code()
        .map_or_else(|| "was killed".to_string(), |c| format!("exited {c}"));
    Err(format!(
        "--fence-command for node/{name} {how}: no proof that it is powered off, so it is not taken out of service; nothing was changed"
    ))
}

/// At most this many names in a line of what still acts on the taint.
const NAMED: usize = 3;

/// `names`, at most `NAMED` of them, then how many more.
fn some_of(names: &[String]) -> String {
    let shown = names[..names.len().min(NAMED)].join(", ");
    match names.len().checked_sub(NAMED).filter(|more| *more > 0) {
        Some(more) => format!("{shown} and {more} more"),
        None => shown,
    }
}

/// What still acts on `node`'s out-of-service taint, in words, or `None`
/// when nothing does: its pods still terminating, the VolumeAttachments
/// naming it. What cannot be read counts as acting (the taint stays).
pub(crate) async fn still_acting(client: &kube::Client, node: &str) -> Option<String> {
    let mut acting = Vec::new();
    let pods: Api<Pod> = Api::all(client.clone());
    let on_node = ListParams::default().fields(&format!("spec.nodeName={node}"));
    match pods.list(&on_node).await {
        Ok(list) => {
            let going: Vec<String> = list
                .items
                .iter()
                .filter(|p| p.metadata.deletion_timestamp.is_some())
                .map(|p| crate::vocabulary::pod_key::PodKey::of(p).to_string())
                .collect();
            if !going.is_empty() {
                acting.push(format!(
                    "{} terminating on it ({})",
                    kube_conventions::count(going.len(), "pod"),
                    some_of(&going)
                ));
            }
        }
        Err(e) => acting.push(format!(
            "its pods cannot be read ({})",
            crate::vocabulary::api_error::api_error("list", "pods", None, e)
        )),
    }
    let attachments: Api<VolumeAttachment> = Api::all(client.clone());
    match attachments.list(&ListParams::default()).await {
        Ok(list) => {
            let naming: Vec<String> = list
                .items
                .iter()
                .filter(|va| va.spec.node_name == node)
                .map(|va| va.metadata.name.clone().unwrap_or_default())
                .collect();
            if !naming.is_empty() {
                acting.push(format!(
                    "{} naming it ({})",
                    kube_conventions::count(naming.len(), "VolumeAttachment"),
                    some_of(&naming)
                ));
            }
        }
        Err(e) => acting.push(format!(
            "its VolumeAttachments cannot be read ({})",
            crate::vocabulary::api_error::api_error("list", "volumeattachments", None, e)
        )),
    }
    (!acting.is_empty()).then(|| acting.join("; "))
}

/// Waits, up to `limit`, until nothing acts on `node`'s out-of-service
/// taint (`still_acting`), telling `waiting` what it waits on each time
/// that changes: `None` once nothing does, or what still did at the limit.
pub(crate) async fn release(
    client: &kube::Client,
    node: &str,
    limit: Duration,
    mut waiting: impl FnMut(&str),
) -> Option<String> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut said: Option<String> = None;
    loop {
        let acting = still_acting(client, node).await?;
        if tokio::time::Instant::now() >= deadline {
            return Some(acting);
        }
        if said.as_ref() != Some(&acting) {
            waiting(&acting);
            said = Some(acting);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn down(taints: &[&str]) -> NodeDown {
        NodeDown {
            ready: "Unknown".into(),
            reason: String::new(),
            since: None,
            kubelet_last_heard: None,
            taints: taints.iter().map(|t| (*t).to_string()).collect(),
        }
    }

    #[test]
    fn what_acts_on_the_taint_is_named_a_few_at_a_time() {
        let names: Vec<String> = (1..=5).map(|i| format!("p{i}")).collect();
        assert_eq!(some_of(&names[..2]), "p1, p2");
        assert_eq!(some_of(&names), "p1, p2, p3 and 2 more");
    }

    #[test]
    fn never_on_a_ready_node_and_never_without_a_proof() {
        let dead = down(&[node_health::UNREACHABLE]);
        let fence = Proof::Fence("ipmitool power off".into());
        let err = plan(&fence, &[("a", Some(&dead)), ("b", None)], true).unwrap_err();
        assert!(err.contains("node/b is Ready"), "{err}");
        let err = plan(&Proof::Typed, &[("a", Some(&dead))], false).unwrap_err();
        assert!(err.contains("no terminal"), "{err}");
        assert_eq!(
            plan(&Proof::Typed, &[("a", Some(&dead))], true).unwrap(),
            [NodeProof::Typed]
        );
        let cloud = down(&[node_health::SHUTDOWN]);
        assert_eq!(
            plan(&Proof::Typed, &[("a", Some(&cloud))], false).unwrap(),
            [NodeProof::CloudShutdown]
        );
        // Out of service already: a rerun asks no proof again.
        let taken = down(&[node_health::OUT_OF_SERVICE]);
        assert_eq!(
            plan(&Proof::Typed, &[("a", Some(&taken))], false).unwrap(),
            [NodeProof::AlreadyOutOfService]
        );
    }

    #[test]
    fn a_fence_command_sees_the_node_and_its_addresses() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "w1"},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.5"},
                                     {"type": "Hostname", "address": "w1"}]},
        }))
        .unwrap();
        let env = fence_env(&node);
        assert!(env.contains(&("NODE".into(), "w1".into())));
        assert!(env.contains(&("NODE_ADDRESSES".into(), "10.0.0.5 w1".into())));
        assert!(env.contains(&("NODE_INTERNALIP".into(), "10.0.0.5".into())));
    }
}
