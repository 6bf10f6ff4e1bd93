//! The attach/detach controller, for CSI volumes (kube-controller-manager's
//! pkg/controller/volume/attachdetach, and the external-attacher that marks
//! its VolumeAttachments attached): a VolumeAttachment for each CSI
//! PersistentVolume a pod bound to a node uses, attached at once; deleted
//! once no unfinished pod on that node uses the volume any more, after the
//! node's detach delay (`sandbox.kubectl-maintain.io/detach-seconds`, 0.5 s by
//! default: the kubelet's unmount and the driver's detach). Its name is
//! "csi-" and a hash of the volume, driver and node, as the controller names it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::work::{Changed, Work};
use crate::config::DETACH_SECONDS;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

const DEFAULT_DETACH: Duration = Duration::from_millis(500);

/// The CSI volumes (PV name, driver) a pod uses through its claims.
pub(crate) fn csi_volumes(store: &Store, pod: &Value) -> Vec<(String, String)> {
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    pods::claim_names(pod)
        .filter_map(|claim| {
            let pvc = store.get(
                Resource::PersistentVolumeClaims,
                &(ns.to_string(), claim.to_string()),
            )?;
            let pv_name = pvc.pointer("/spec/volumeName")?.as_str()?.to_string();
            let pv = store.get(
                Resource::PersistentVolumes,
                &(String::new(), pv_name.clone()),
            )?;
            let driver = pv.pointer("/spec/csi/driver")?.as_str()?.to_string();
            Some((pv_name, driver))
        })
        .collect()
}

/// The VolumeAttachment's name for a volume on a node.
pub(crate) fn name(pv: &str, driver: &str, node: &str) -> String {
    let h = kube_conventions::fnv1a(format!("{pv}{driver}{node}").as_bytes());
    format!("csi-{h:016x}")
}

/// A pod with claims just bound to a node: its volumes attach there. One
/// that finished or left unfinished: its volumes may detach.
pub(crate) fn triggers(c: &Changed<'_>, work: &mut Work) {
    if c.resource != Resource::Pods {
        return;
    }
    match (c.old, c.new) {
        (old, Some(new)) => {
            let was_bound = old.and_then(pods::node_name).is_some();
            if !was_bound && pods::node_name(new).is_some() && pods::has_claims(new) {
                work.attach.insert(c.key.clone());
            }
            let finished = pods::is_terminal(new) && old.is_some_and(|o| !pods::is_terminal(o));
            if finished && pods::has_claims(new) {
                work.left.push(Arc::new(new.clone()));
            }
        }
        (Some(old), None) => {
            if !pods::is_terminal(old) && pods::has_claims(old) {
                work.left.push(Arc::new(old.clone()));
            }
        }
        (None, None) => {}
    }
}

/// Attaches the CSI volumes of a pod bound to a node (what is attached stays).
pub(crate) fn attach(store: &mut Store, pod: &Value) {
    let Some(node) = pods::node_name(pod).map(str::to_string) else {
        return;
    };
    if pods::is_terminal(pod) {
        return;
    }
    for (pv, driver) in csi_volumes(store, pod) {
        let name = name(&pv, &driver, &node);
        if store
            .get(Resource::VolumeAttachments, &(String::new(), name.clone()))
            .is_some()
        {
            continue;
        }
        let va = json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": name},
            "spec": {"attacher": driver, "nodeName": node, "source": {"persistentVolumeName": pv}},
            "status": {"attached": true},
        });
        let _ = store.create(Resource::VolumeAttachments, va);
    }
}

/// How long after its last pod a volume on this node detaches.
pub(crate) fn detach_delay(store: &Store, node: &str) -> Duration {
    store
        .get(Resource::Nodes, &(String::new(), node.to_string()))
        .and_then(|n| pods::annotation(&n, DETACH_SECONDS)?.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(DEFAULT_DETACH, Duration::from_secs_f64)
}

/// The VolumeAttachments of a pod that left (deleted or finished) that no
/// other unfinished pod on its node still needs: to be detached.
pub(crate) fn unneeded(store: &Store, pod: &Value) -> Vec<(String, Duration)> {
    let Some(node) = pods::node_name(pod) else {
        return Vec::new();
    };
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let delay = detach_delay(store, node);
    csi_volumes(store, pod)
        .into_iter()
        .filter(|(pv, _)| !in_use(store, node, pv, uid))
        .map(|(pv, driver)| (name(&pv, &driver, node), delay))
        .collect()
}

/// Does an unfinished pod on `node` (other than `except`) use volume `pv`?
fn in_use(store: &Store, node: &str, pv: &str, except: &str) -> bool {
    store.pods_on_node(node).iter().any(|k| {
        store.get(Resource::Pods, k).is_some_and(|p| {
            p["metadata"]["uid"].as_str() != Some(except)
                && !pods::is_terminal(&p)
                && csi_volumes(store, &p).iter().any(|(v, _)| v == pv)
        })
    })
}

/// Detaches: deletes the VolumeAttachment, unless a pod on its node took
/// the volume up again meanwhile.
pub(crate) fn detach(store: &mut Store, name: &str) {
    let key: Key = (String::new(), name.to_string());
    let Some(va) = store.get(Resource::VolumeAttachments, &key) else {
        return;
    };
    let node = va["spec"]["nodeName"].as_str().unwrap_or_default();
    let pv = va
        .pointer("/spec/source/persistentVolumeName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !in_use(store, node, pv, "") {
        store.remove(Resource::VolumeAttachments, &key);
    }
}
