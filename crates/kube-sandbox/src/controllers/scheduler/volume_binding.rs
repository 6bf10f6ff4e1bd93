//! VolumeBinding and VolumeZone, for the pod's PersistentVolumeClaims
//! (kubernetes pkg/scheduler/framework/plugins/volumebinding/
//! volume_binding.go and binder.go; volumezone/volume_zone.go):
//! - a claim that does not exist, or is unbound while its StorageClass
//!   binds at once (`Immediate`), makes the pod unschedulable everywhere;
//!   an unbound claim of a `WaitForFirstConsumer` class fits any node (its
//!   volume is provisioned where the pod lands);
//! - a bound claim's PersistentVolume must accept the node by its
//!   `spec.nodeAffinity` and by its zone and region labels;
//! - once the pod is bound, each of its unbound `WaitForFirstConsumer`
//!   claims gets a volume provisioned where it landed (the node's zone, or
//!   the node itself), as a CSI provisioner makes one, and is bound to it.

use crate::objects::path::At;
use serde_json::{Value, json};

use super::label;
use super::node_affinity;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::Store;

const ZONE_LABELS: [&str; 4] = [
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
];

/// The volumes of the pod's bound claims, or why it fits no node at all.
#[derive(Default)]
pub(super) struct Volumes {
    bound: Vec<std::sync::Arc<Value>>,
    /// Set when the pod can go nowhere (the PreFilter's refusal).
    nowhere: Option<String>,
    /// kube-scheduler 1.33 renamed the affinity reason.
    minor: u32,
}

pub(super) fn prefilter(store: &Store, pod: &Value, minor: u32) -> Volumes {
    let mut out = Volumes {
        minor,
        ..Volumes::default()
    };
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let claims = pods::claim_names(pod);
    for claim in claims {
        let Some(pvc) = store.get(
            Resource::PersistentVolumeClaims,
            &(ns.to_string(), claim.to_string()),
        ) else {
            out.nowhere = Some(format!("persistentvolumeclaim \"{claim}\" not found"));
            return out;
        };
        let volume = pvc
            .at("/spec/volumeName")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty());
        if let Some(pv) = volume
            .and_then(|v| store.get(Resource::PersistentVolumes, &(String::new(), v.to_string())))
        {
            out.bound.push(pv);
            continue;
        }
        let class = pvc
            .at("/spec/storageClassName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let waits = store
            .get(
                Resource::StorageClasses,
                &(String::new(), class.to_string()),
            )
            .is_some_and(|sc| sc["volumeBindingMode"] == "WaitForFirstConsumer");
        if !waits {
            out.nowhere = Some("pod has unbound immediate PersistentVolumeClaims".into());
            return out;
        }
    }
    out
}

/// Provisions and binds the pod's waiting claims on `node` (the volume
/// binder and external-provisioner's part after scheduling).
pub(super) fn provision(store: &mut Store, pod: &Value, node: &str) {
    let ns = pod["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let Some(node_obj) = store.get(Resource::Nodes, &(String::new(), node.to_string())) else {
        return;
    };
    let (key, value) = match label(&node_obj, "topology.kubernetes.io/zone") {
        Some(z) => ("topology.kubernetes.io/zone", z.to_string()),
        None => ("kubernetes.io/hostname", node.to_string()),
    };
    let claims: Vec<String> = pods::claim_names(pod).map(str::to_string).collect();
    for claim in claims {
        let pvc_key = (ns.clone(), claim);
        let Some(pvc) = store.get(Resource::PersistentVolumeClaims, &pvc_key) else {
            continue;
        };
        if pvc
            .at("/spec/volumeName")
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
        {
            continue;
        }
        let name = format!(
            "pvc-{}",
            pvc["metadata"]["uid"].as_str().unwrap_or_default()
        );
        let pv = json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {key: value}},
            "spec": {
                "capacity": {"storage": pvc.at("/spec/resources/requests/storage").cloned().unwrap_or(json!("1Gi"))},
                "accessModes": pvc.at("/spec/accessModes").cloned().unwrap_or(json!(["ReadWriteOnce"])),
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": pvc["spec"]["storageClassName"],
                "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": pvc_key.1, "uid": pvc["metadata"]["uid"]},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}},
            },
            "status": {"phase": "Bound"},
        });
        // A CSI provisioner's volume says so: the attach/detach controller
        // attaches it to the pod's node (controllers::attach_detach).
        let provisioner = store
            .get(
                Resource::StorageClasses,
                &(
                    String::new(),
                    pvc["spec"]["storageClassName"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                ),
            )
            .and_then(|sc| sc["provisioner"].as_str().map(str::to_string))
            .filter(|p| !p.starts_with("kubernetes.io/"));
        let mut pv = pv;
        if let Some(driver) = provisioner {
            pv["spec"]["csi"] = json!({"driver": driver, "volumeHandle": name});
        }
        let _ = store.create(Resource::PersistentVolumes, pv);
        let _ = store.modify(Resource::PersistentVolumeClaims, &pvc_key, |c| {
            c["spec"]["volumeName"] = json!(name);
            c["status"]["phase"] = json!("Bound");
            c["status"]["capacity"] = c["spec"]["resources"]["requests"].clone();
            c["status"]["accessModes"] = c["spec"]["accessModes"].clone();
        });
    }
}

/// The pod's refusal before any node is looked at, if any.
pub(super) fn nowhere(v: &Volumes) -> Option<&str> {
    v.nowhere.as_deref()
}

pub(super) fn filter(v: &Volumes, node: &Value) -> Result<(), String> {
    for pv in &v.bound {
        let required = pv.at("/spec/nodeAffinity/required");
        if let Some(required) = required.filter(|r| !r.is_null()) {
            // A PV's node affinity reads as a pod's required node affinity.
            let as_pod = json!({"spec": {"affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": required}}}});
            if !node_affinity::matches(&as_pod, node) {
                return Err(if v.minor >= 33 {
                    "node(s) didn't match PersistentVolume's node affinity".into()
                } else {
                    "node(s) had volume node affinity conflict".into()
                });
            }
        }
    }
    for pv in &v.bound {
        for key in ZONE_LABELS {
            if let Some(want) = label(pv, key) {
                let allowed: Vec<&str> = want.split("__").collect();
                if !label(node, key).is_some_and(|have| allowed.contains(&have)) {
                    return Err("node(s) had no available volume zone".into());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(objects: &[(Resource, Value)]) -> Store {
        let mut s = Store::new(100);
        for (r, o) in objects {
            s.load(*r, o.clone()).unwrap();
        }
        s
    }

    fn pod_with_claim(claim: &str) -> Value {
        json!({"metadata": {"name": "db-0", "namespace": "apps"},
            "spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}})
    }

    fn zone(z: &str) -> Value {
        json!({"metadata": {"name": format!("n-{z}"), "labels": {"topology.kubernetes.io/zone": z}}})
    }

    #[test]
    fn a_bound_volume_keeps_its_pod_in_its_zone() {
        let s = store(&[
            (
                Resource::PersistentVolumes,
                json!({"metadata": {"name": "pv-1"}, "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}}}}),
            ),
            (
                Resource::PersistentVolumeClaims,
                json!({"metadata": {"name": "data-db-0", "namespace": "apps"}, "spec": {"volumeName": "pv-1"}}),
            ),
        ]);
        let v = prefilter(&s, &pod_with_claim("data-db-0"), 33);
        assert_eq!(filter(&v, &zone("a")), Ok(()));
        assert_eq!(
            filter(&v, &zone("b")),
            Err("node(s) didn't match PersistentVolume's node affinity".into())
        );
        let v = prefilter(&s, &pod_with_claim("data-db-0"), 27);
        assert_eq!(
            filter(&v, &zone("b")),
            Err("node(s) had volume node affinity conflict".into())
        );
    }

    #[test]
    fn missing_and_unbound_immediate_claims_fit_nowhere() {
        let s = store(&[
            (
                Resource::StorageClasses,
                json!({"metadata": {"name": "late"}, "provisioner": "x", "volumeBindingMode": "WaitForFirstConsumer"}),
            ),
            (
                Resource::PersistentVolumeClaims,
                json!({"metadata": {"name": "late-0", "namespace": "apps"}, "spec": {"storageClassName": "late"}}),
            ),
            (
                Resource::PersistentVolumeClaims,
                json!({"metadata": {"name": "now-0", "namespace": "apps"}, "spec": {}}),
            ),
        ]);
        assert_eq!(
            nowhere(&prefilter(&s, &pod_with_claim("gone"), 33)),
            Some("persistentvolumeclaim \"gone\" not found")
        );
        assert_eq!(
            nowhere(&prefilter(&s, &pod_with_claim("now-0"), 33)),
            Some("pod has unbound immediate PersistentVolumeClaims")
        );
        assert_eq!(nowhere(&prefilter(&s, &pod_with_claim("late-0"), 33)), None);
    }
}
