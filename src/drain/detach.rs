//! Waiting, once a node's pods are gone, until the volumes they used are
//! detached from it: a node is safe to power off only then. The evicted
//! pods' claims name their PersistentVolumes; the node's VolumeAttachments
//! (storage.k8s.io/v1, written by the attach/detach controller) for those
//! volumes must be gone, and so must their entries in the Node's
//! `status.volumesAttached`, where in-tree volumes and some CSI drivers
//! show only (as Cluster API's machine controller reads both since v1.13,
//! internal/controllers/machine/machine_controller.go). An entry there is
//! named `<plugin>/<volume name>` (kubernetes pkg/volume/util,
//! `GetUniqueVolumeName`), a CSI one `kubernetes.io/csi/<driver>^<handle>`
//! (pkg/volume/csi/csi_plugin.go, `volNameSep`); a volume's entry is found
//! by its identity at the end of that name (`status_ids`). VolumeAttachments take no field selector but
//! their name, so the nodes of one drain share one watch of them all
//! (`Attachments`), started when a node first waits: one list and one
//! watch, not a list of every attachment each second for each node. Said
//! on screen once with what is attached; `--detach-timeout` ends the wait
//! (the node is then reported timed out, naming the volumes);
//! `--skip-wait-for-detach` skips it. Without permission to read claims or
//! VolumeAttachments, one warning says so and the node counts as drained,
//! as kubectl drain would.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::Api;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::vocabulary::events::Announcer;
use crate::vocabulary::warning::Warning;

/// The attachments among `all` that hold one of `volumes` on `node`, by
/// (VolumeAttachment, volume).
pub(crate) fn attached<'a>(
    all: impl IntoIterator<Item = &'a VolumeAttachment>,
    node: &str,
    volumes: &BTreeSet<String>,
) -> Vec<(String, String)> {
    all.into_iter()
        .filter(|va| va.spec.node_name == node)
        .filter_map(|va| {
            let pv = va.spec.source.persistent_volume_name.as_ref()?;
            volumes
                .contains(pv)
                .then(|| (va.metadata.name.clone().unwrap_or_default(), pv.clone()))
        })
        .collect()
}

/// What a volume's entry in `Node.status.volumesAttached` ends with: its
/// CSI driver and handle, or its in-tree plugin's identity of it (an EBS
/// volume ID, a GCE PD or Azure disk name, a Cinder or Portworx volume ID,
/// a vSphere path, an iSCSI IQN and LUN, an RBD image), which a migrated
/// in-tree volume's CSI name ends with too.
pub(crate) fn status_ids(pv: &PersistentVolume) -> Vec<String> {
    let Some(spec) = pv.spec.as_ref() else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    if let Some(csi) = &spec.csi {
        ids.push(format!("{}^{}", csi.driver, csi.volume_handle));
    }
    if let Some(ebs) = &spec.aws_elastic_block_store {
        // `aws://us-east-1a/vol-0abc` in-tree; `vol-0abc` once migrated.
        ids.extend(ebs.volume_id.rsplit('/').next().map(str::to_string));
    }
    if let Some(pd) = &spec.gce_persistent_disk {
        ids.push(pd.pd_name.clone());
    }
    if let Some(disk) = &spec.azure_disk {
        ids.push(disk.disk_name.clone());
    }
    if let Some(cinder) = &spec.cinder {
        ids.push(cinder.volume_id.clone());
    }
    if let Some(px) = &spec.portworx_volume {
        ids.push(px.volume_id.clone());
    }
    if let Some(vs) = &spec.vsphere_volume {
        ids.push(vs.volume_path.clone());
    }
    if let Some(iscsi) = &spec.iscsi {
        ids.push(format!("{}:{}", iscsi.iqn, iscsi.lun));
    }
    if let Some(rbd) = &spec.rbd {
        ids.push(rbd.image.clone());
    }
    ids.retain(|id| !id.is_empty());
    ids
}

/// The entries of `attached` (a node's `status.volumesAttached` names)
/// that are one of `volumes`' (PersistentVolume, `status_ids`): a name
/// ending with an id where a separator begins it. A false match only waits
/// longer; a missed one would not wait at all.
pub(crate) fn attached_by_status(
    attached: &[String],
    volumes: &[(String, Vec<String>)],
) -> Vec<(String, String)> {
    let ends_with = |name: &str, id: &str| {
        name == id
            || name
                .strip_suffix(id)
                .is_some_and(|head| head.ends_with(['/', '^', ':']))
    };
    attached
        .iter()
        .filter_map(|name| {
            volumes
                .iter()
                .find(|(_, ids)| ids.iter().any(|id| ends_with(name, id)))
                .map(|(pv, _)| (name.clone(), pv.clone()))
        })
        .collect()
}

/// Each volume's identities in the nodes' status (`status_ids`), read once:
/// none when a volume cannot be read, so the wait follows the
/// VolumeAttachments alone (said once).
async fn status_ids_of(
    client: &kube::Client,
    events: &Announcer,
    volumes: &BTreeSet<String>,
) -> Vec<(String, Vec<String>)> {
    let mut ids = Vec::new();
    let pvs: Api<PersistentVolume> = Api::all(client.clone());
    for pv in volumes {
        match pvs.get_opt(pv).await {
            Ok(Some(found)) => ids.push((pv.clone(), status_ids(&found))),
            Ok(None) => {}
            Err(e) => {
                let error = crate::vocabulary::api_error::api_error(
                    "get",
                    "persistentvolumes",
                    Some(pv),
                    e,
                );
                events.warn_once(Warning::CannotReadVolumes {
                    error: error.to_string(),
                });
                return Vec::new();
            }
        }
    }
    ids
}

/// The names in the node's `status.volumesAttached`, read now.
async fn status_attached(client: &kube::Client, node: &str) -> Result<Vec<String>, kube::Error> {
    let nodes: Api<Node> = Api::all(client.clone());
    let node = nodes.get(node).await?;
    Ok(node
        .status
        .and_then(|s| s.volumes_attached)
        .unwrap_or_default()
        .into_iter()
        .map(|v| v.name)
        .collect())
}

/// Every VolumeAttachment of the cluster, kept current by one watch that
/// the nodes of a drain share, and told when one changes.
#[derive(Default)]
pub(crate) struct Attachments {
    /// The store once listed, or the RBAC refusal that means it never will
    /// be. Any other failure is not kept: the next node's wait lists again,
    /// so one failed list does not turn the wait off for the whole drain.
    store: tokio::sync::Mutex<Option<Result<Store<VolumeAttachment>, String>>>,
    changed: Arc<Notify>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Attachments {
    /// Every VolumeAttachment, listed once and watched, or why not.
    pub(crate) async fn store(
        &self,
        client: &kube::Client,
    ) -> Result<Store<VolumeAttachment>, String> {
        let mut kept = self.store.lock().await;
        if let Some(kept) = kept.as_ref() {
            return kept.clone();
        }
        match self.watch(client).await {
            Ok(store) => kept.insert(Ok(store)).clone(),
            Err(e) if e.forbidden => kept.insert(Err(e.message)).clone(),
            Err(e) => Err(e.message),
        }
    }

    async fn watch(
        &self,
        client: &kube::Client,
    ) -> Result<Store<VolumeAttachment>, super::mirror::Unlisted> {
        let changed = self.changed.clone();
        let (task, store) = super::mirror::start(Api::all(client.clone()), move |event| {
            if let watcher::Event::InitDone | watcher::Event::Apply(_) | watcher::Event::Delete(_) =
                event
            {
                changed.notify_waiters();
            }
        })
        .await;
        *self.task.lock().expect("attachments task") = Some(task);
        store
    }
}

impl Drop for Attachments {
    fn drop(&mut self) {
        if let Some(task) = self.task.lock().expect("attachments task").take() {
            task.abort();
        }
    }
}

/// Waits until the claims' volumes are detached from `node`: Ok, or why
/// not within `limit`.
pub(crate) async fn wait(
    client: &kube::Client,
    attachments: &Attachments,
    events: &Announcer,
    node: &str,
    claims: &[(String, String)],
    limit: std::time::Duration,
) -> Result<(), String> {
    let mut volumes = BTreeSet::new();
    for (ns, claim) in claims {
        let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), ns);
        match api.get_opt(claim).await {
            Ok(Some(pvc)) => {
                if let Some(v) = pvc
                    .spec
                    .and_then(|s| s.volume_name)
                    .filter(|v| !v.is_empty())
                {
                    volumes.insert(v);
                }
            }
            Ok(None) => {}
            Err(e) => {
                // The API server's words (verb, resource, user), not the
                // client's debug dump of its Status.
                let error = crate::vocabulary::api_error::api_error(
                    "get",
                    "persistentvolumeclaims",
                    Some(claim),
                    e,
                );
                events.warn_once(Warning::CannotReadClaims {
                    error: error.to_string(),
                });
                return Ok(());
            }
        }
    }
    if volumes.is_empty() {
        return Ok(());
    }
    let store = match attachments.store(client).await {
        Ok(store) => store,
        Err(e) => {
            events.warn_once(Warning::CannotListAttachments { error: e });
            return Ok(());
        }
    };
    let ids = status_ids_of(client, events, &volumes).await;
    let deadline = tokio::time::Instant::now() + limit;
    let mut said = false;
    loop {
        // Asked for before the store is read, so no change is missed.
        let changed = attachments.changed.notified();
        // By volume, what still holds each on the node.
        let mut left = std::collections::BTreeMap::<String, Vec<String>>::new();
        for (va, pv) in attached(store.state().iter().map(|va| &**va), node, &volumes) {
            left.entry(pv)
                .or_default()
                .push(format!("VolumeAttachment {va}"));
        }
        if !ids.is_empty() {
            // Unread this once, read again on the next pass; the
            // VolumeAttachments still count meanwhile.
            if let Ok(names) = status_attached(client, node).await {
                for (entry, pv) in attached_by_status(&names, &ids) {
                    left.entry(pv)
                        .or_default()
                        .push(format!("volumesAttached {entry}"));
                }
            }
        }
        if left.is_empty() {
            return Ok(());
        }
        let held: Vec<(String, String)> = left
            .into_iter()
            .map(|(pv, by)| (pv, by.join(", ")))
            .collect();
        if tokio::time::Instant::now() >= deadline {
            let names: Vec<String> = held.iter().map(|(pv, by)| format!("{pv} ({by})")).collect();
            return Err(format!(
                "volumes still attached after {}: {}",
                crate::duration::human(limit),
                names.join(", ")
            ));
        }
        if !said {
            said = true;
            events.warn(Warning::AwaitingDetach {
                node: node.to_string(),
                volumes: held,
            });
        }
        // The VolumeAttachments are watched; the node's status is read
        // again each second while it is part of the wait.
        let wake = if ids.is_empty() {
            deadline
        } else {
            deadline.min(tokio::time::Instant::now() + std::time::Duration::from_secs(1))
        };
        let _ = tokio::time::timeout_at(wake, changed).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn va(name: &str, node: &str, pv: &str) -> VolumeAttachment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "spec": {"attacher": "csi", "nodeName": node, "source": {"persistentVolumeName": pv}},
        }))
        .unwrap()
    }

    #[test]
    fn a_volume_is_found_in_the_nodes_status_by_its_identity_there() {
        let pv = |spec: serde_json::Value| -> PersistentVolume {
            serde_json::from_value(serde_json::json!({"metadata": {"name": "x"}, "spec": spec}))
                .unwrap()
        };
        let csi =
            pv(serde_json::json!({"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}}));
        let ebs =
            pv(serde_json::json!({"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-2"}}));
        let iscsi = pv(
            serde_json::json!({"iscsi": {"targetPortal": "10.0.0.9:3260",
            "iqn": "iqn.2001-04.com.example:storage", "lun": 0}}),
        );
        let volumes = vec![
            ("pv-csi".to_string(), status_ids(&csi)),
            ("pv-ebs".to_string(), status_ids(&ebs)),
            ("pv-iscsi".to_string(), status_ids(&iscsi)),
        ];
        let names: Vec<String> = [
            "kubernetes.io/csi/ebs.csi.aws.com^vol-1",
            // Migrated in-tree EBS, and the same volume named in-tree.
            "kubernetes.io/csi/ebs.csi.aws.com^vol-2",
            "kubernetes.io/aws-ebs/aws://us-east-1a/vol-2",
            "kubernetes.io/iscsi/10.0.0.9:3260:iqn.2001-04.com.example:storage:0",
            // Another volume whose id only ends the same way: not one of ours.
            "kubernetes.io/csi/ebs.csi.aws.com^xvol-1",
            "kubernetes.io/csi/other^vol-9",
        ]
        .map(String::from)
        .into();
        let found = attached_by_status(&names, &volumes);
        let pvs: Vec<&str> = found.iter().map(|(_, pv)| pv.as_str()).collect();
        assert_eq!(pvs, ["pv-csi", "pv-ebs", "pv-ebs", "pv-iscsi"], "{found:?}");
    }

    #[test]
    fn only_the_evicted_pods_volumes_on_this_node_count() {
        let all = [
            va("a", "n1", "pv-1"),
            va("b", "n2", "pv-1"),
            va("c", "n1", "pv-9"),
        ];
        let volumes: BTreeSet<String> = ["pv-1".to_string()].into();
        assert_eq!(
            attached(&all, "n1", &volumes),
            [("a".to_string(), "pv-1".to_string())]
        );
        assert!(attached(&all, "n3", &volumes).is_empty());
    }
}
