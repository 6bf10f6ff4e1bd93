//! The attach/detach controller, for CSI volumes (kube-controller-manager's
//! pkg/controller/volume/attachdetach, and the external-attacher that marks
//! its VolumeAttachments attached): a VolumeAttachment for each CSI
//! PersistentVolume a pod bound to a node uses, attached at once; deleted
//! once no unfinished pod on that node uses the volume any more, after the
//! node's detach delay (`sandbox.kubectl-maintain.io/detach-seconds`, 0.5 s by
//! default: the kubelet's unmount and the driver's detach). Its name is
//! "csi-" and a hash of the volume, driver and node, as the controller names it.
//! The node's `status.volumesAttached` lists each attached volume, as the
//! controller's node status updater writes it
//! (pkg/controller/volume/attachdetach/statusupdater), under its unique
//! name `kubernetes.io/csi/<driver>^<volumeHandle>` (pkg/volume/csi,
//! `volNameSep`), with an empty `devicePath`; the entry goes when the
//! volume detaches.
//!
//! A node without a running kubelet never unmounts: the controller's
//! reconciler (pkg/controller/volume/attachdetach/reconciler/reconciler.go)
//! force-detaches a volume whose pod is gone only once
//! `maxWaitForUnmountDuration` (6 minutes) has passed and the node is
//! unhealthy, and at once (its 100 ms loop) when the node carries the
//! `node.kubernetes.io/out-of-service` taint. A volume that is not
//! ReadWriteMany or ReadOnlyMany attaches to one node at a time: another
//! node's pod waits until it detaches ("Multi-Attach error"), and the
//! kubelet starts no pod before its volumes are attached.

use crate::objects::path::At;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::work::{Changed, Work};
use crate::config::DETACH_SECONDS;
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::store::{Key, Store};

const DEFAULT_DETACH: Duration = Duration::from_millis(500);
/// `maxWaitForUnmountDuration`: how long a volume of an unhealthy node
/// waits for an unmount before it is force-detached.
pub(crate) const MAX_WAIT_FOR_UNMOUNT: Duration = Duration::from_secs(6 * 60);
/// The reconciler's loop period: an out-of-service node's volumes detach
/// on its next pass.
const RECONCILER_PERIOD: Duration = Duration::from_millis(100);

/// The CSI volumes (PV name, driver) a pod uses through its claims.
pub(crate) fn csi_volumes(store: &Store, pod: &Value) -> Vec<(String, String)> {
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    pods::claim_names(pod)
        .filter_map(|claim| {
            let pvc = store.get(
                Resource::PersistentVolumeClaims,
                &(ns.to_string(), claim.to_string()),
            )?;
            let pv_name = pvc.at("/spec/volumeName")?.as_str()?.to_string();
            let pv = store.get(
                Resource::PersistentVolumes,
                &(String::new(), pv_name.clone()),
            )?;
            let driver = pv.at("/spec/csi/driver")?.as_str()?.to_string();
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
    if c.resource == Resource::Nodes {
        let oos = |n: Option<&Value>| n.is_some_and(nodes::out_of_service);
        if oos(c.new) && !oos(c.old) {
            work.out_of_service.insert(c.key.1.clone());
        }
        return;
    }
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

/// May the volume attach to more than one node at once?
fn multi_attach(store: &Store, pv: &str) -> bool {
    store
        .get(
            Resource::PersistentVolumes,
            &(String::new(), pv.to_string()),
        )
        .and_then(|v| v.at("/spec/accessModes").cloned())
        .and_then(|m| m.as_array().cloned())
        .is_some_and(|modes| {
            modes
                .iter()
                .any(|m| m == "ReadWriteMany" || m == "ReadOnlyMany")
        })
}

/// The node another VolumeAttachment of this volume names, if any.
fn attached_elsewhere(store: &Store, pv: &str, node: &str) -> Option<String> {
    store
        .iter(Resource::VolumeAttachments, None, None)
        .map(|(_, va)| va)
        .find(|va| {
            va.at("/spec/source/persistentVolumeName")
                .and_then(Value::as_str)
                == Some(pv)
                && va["spec"]["nodeName"].as_str() != Some(node)
        })
        .and_then(|va| va["spec"]["nodeName"].as_str().map(str::to_string))
}

/// Are all the pod's CSI volumes attached to its node (so its kubelet can
/// mount them)?
pub(crate) fn volumes_attached(store: &Store, pod: &Value) -> bool {
    let Some(node) = pods::node_name(pod) else {
        return true;
    };
    csi_volumes(store, pod).iter().all(|(pv, driver)| {
        store
            .get(
                Resource::VolumeAttachments,
                &(String::new(), name(pv, driver, node)),
            )
            .is_some()
    })
}

/// Attaches the CSI volumes of a pod bound to a node (what is attached
/// stays); returns the volumes that must first detach from another node.
pub(crate) fn attach(store: &mut Store, pod: &Value) -> Vec<String> {
    let mut blocked = Vec::new();
    let Some(node) = pods::node_name(pod).map(str::to_string) else {
        return blocked;
    };
    if pods::is_terminal(pod) || pods::is_terminating(pod) {
        return blocked;
    }
    for (pv, driver) in csi_volumes(store, pod) {
        let name = name(&pv, &driver, &node);
        if store
            .get(Resource::VolumeAttachments, &(String::new(), name.clone()))
            .is_some()
        {
            continue;
        }
        if !multi_attach(store, &pv) && attached_elsewhere(store, &pv, &node).is_some() {
            blocked.push(pv);
            continue;
        }
        let va = json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": name},
            "spec": {"attacher": driver, "nodeName": node, "source": {"persistentVolumeName": pv}},
            "status": {"attached": true},
        });
        let _ = store.create(Resource::VolumeAttachments, va);
        in_node_status(store, &node, &pv, true);
    }
    blocked
}

/// Lists the volume `pv` in the node's `status.volumesAttached`, or takes
/// it out, under its unique name.
fn in_node_status(store: &mut Store, node: &str, pv: &str, attached: bool) {
    let Some(entry) = store
        .get(
            Resource::PersistentVolumes,
            &(String::new(), pv.to_string()),
        )
        .and_then(|v| {
            let csi = v.at("/spec/csi")?;
            Some(format!(
                "kubernetes.io/csi/{}^{}",
                csi["driver"].as_str()?,
                csi["volumeHandle"].as_str()?
            ))
        })
    else {
        return;
    };
    let key = (String::new(), node.to_string());
    let listed = |n: &Value| {
        n.at("/status/volumesAttached")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|e| e["name"] == entry.as_str()))
    };
    if store
        .get(Resource::Nodes, &key)
        .is_none_or(|n| listed(&n) == attached)
    {
        return;
    }
    let _ = store.modify(Resource::Nodes, &key, |n| {
        let status = &mut n["status"];
        let mut list = status["volumesAttached"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if attached {
            list.push(json!({"name": entry, "devicePath": ""}));
        } else {
            list.retain(|e| e["name"] != entry.as_str());
        }
        if list.is_empty() {
            if let Some(s) = status.as_object_mut() {
                s.remove("volumesAttached");
            }
        } else {
            status["volumesAttached"] = Value::Array(list);
        }
    });
}

/// How long after its last pod a volume on this node detaches: the
/// kubelet's unmount and the driver's detach; without a kubelet, the
/// controller's force detach (at once out of service, else after 6 minutes).
pub(crate) fn detach_delay(store: &Store, node: &str) -> Duration {
    let n = store.get(Resource::Nodes, &(String::new(), node.to_string()));
    match n {
        Some(n) if nodes::out_of_service(&n) => RECONCILER_PERIOD,
        Some(n) if !nodes::kubelet_running(&n) => MAX_WAIT_FOR_UNMOUNT,
        _ => n
            .and_then(|n| pods::annotation(&n, DETACH_SECONDS)?.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(DEFAULT_DETACH, Duration::from_secs_f64),
    }
}

/// The VolumeAttachments of a node just taken out of service that no pod
/// there uses any more: they detach on the reconciler's next pass.
pub(crate) fn out_of_service_detaches(store: &Store, node: &str) -> Vec<(String, Duration)> {
    store
        .iter(Resource::VolumeAttachments, None, None)
        .map(|(_, va)| va)
        .filter(|va| va["spec"]["nodeName"].as_str() == Some(node))
        .filter(|va| {
            let pv = va
                .at("/spec/source/persistentVolumeName")
                .and_then(Value::as_str)
                .unwrap_or_default();
            !in_use(store, node, pv, "")
        })
        .filter_map(|va| va["metadata"]["name"].as_str().map(str::to_string))
        .map(|name| (name, RECONCILER_PERIOD))
        .collect()
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
/// the volume up again meanwhile. Returns the volume when it detached.
pub(crate) fn detach(store: &mut Store, name: &str) -> Option<String> {
    let key: Key = (String::new(), name.to_string());
    let va = store.get(Resource::VolumeAttachments, &key)?;
    let node = va["spec"]["nodeName"].as_str().unwrap_or_default();
    let pv = va
        .at("/spec/source/persistentVolumeName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if in_use(store, node, pv, "") {
        return None;
    }
    let (pv, node) = (pv.to_string(), node.to_string());
    store.remove(Resource::VolumeAttachments, &key);
    in_node_status(store, &node, &pv, false);
    Some(pv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(store: &mut Store, res: Resource, obj: Value) {
        store.load(res, obj).unwrap();
    }

    /// Node `n1`; volume `pv-i` (driver `d.csi`, handle `h-i`) behind claim
    /// `c-i` in `apps`, for each i in `volumes`.
    fn cluster(volumes: &[u32]) -> Store {
        let mut store = Store::new(100);
        load(
            &mut store,
            Resource::Nodes,
            json!({"metadata": {"name": "n1"}}),
        );
        for i in volumes {
            load(
                &mut store,
                Resource::PersistentVolumes,
                json!({"metadata": {"name": format!("pv-{i}")},
                       "spec": {"csi": {"driver": "d.csi", "volumeHandle": format!("h-{i}")},
                                "accessModes": ["ReadWriteOnce"]}}),
            );
            load(
                &mut store,
                Resource::PersistentVolumeClaims,
                json!({"metadata": {"name": format!("c-{i}"), "namespace": "apps"},
                       "spec": {"volumeName": format!("pv-{i}")}}),
            );
        }
        store
    }

    /// A running pod on n1 using the claims `c-i`.
    fn pod(store: &mut Store, name: &str, claims: &[u32]) -> Arc<Value> {
        let volumes: Vec<Value> = claims
            .iter()
            .map(|i| json!({"name": format!("v{i}"), "persistentVolumeClaim": {"claimName": format!("c-{i}")}}))
            .collect();
        load(
            store,
            Resource::Pods,
            json!({"metadata": {"name": name, "namespace": "apps", "uid": name},
                   "spec": {"nodeName": "n1", "volumes": volumes},
                   "status": {"phase": "Running"}}),
        );
        store
            .get(Resource::Pods, &("apps".into(), name.into()))
            .unwrap()
    }

    fn listed(store: &Store) -> Vec<String> {
        let node = store.node("n1").unwrap();
        node.at("/status/volumesAttached")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn the_node_lists_each_attached_volume_once_until_it_detaches() {
        let mut store = cluster(&[1, 2]);
        let a = pod(&mut store, "a", &[1, 2]);
        assert!(attach(&mut store, &a).is_empty());
        let b = pod(&mut store, "b", &[1]);
        attach(&mut store, &b);
        assert_eq!(
            listed(&store),
            ["kubernetes.io/csi/d.csi^h-1", "kubernetes.io/csi/d.csi^h-2"]
        );
        let (one, two) = (name("pv-1", "d.csi", "n1"), name("pv-2", "d.csi", "n1"));
        assert_eq!(detach(&mut store, &one), None, "its pods still run");
        store.remove(Resource::Pods, &("apps".into(), "a".into()));
        assert_eq!(detach(&mut store, &two).as_deref(), Some("pv-2"));
        assert_eq!(listed(&store), ["kubernetes.io/csi/d.csi^h-1"]);
        store.remove(Resource::Pods, &("apps".into(), "b".into()));
        detach(&mut store, &one);
        assert!(listed(&store).is_empty());
        let node = store.node("n1").unwrap();
        assert!(node.at("/status/volumesAttached").is_none(), "{node}");
    }
}
