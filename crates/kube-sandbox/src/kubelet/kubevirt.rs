//! KubeVirt, as much as a drain meets it. A refused eviction of a VM's
//! virt-launcher pod marks the VMI for evacuation (virt-api's eviction
//! admitter does that); then, after the VMI's migration time, KubeVirt
//! (LiveMigrate) starts the VM on another node, or an external controller
//! (External) shuts it down, and the old launcher pod completes.

use crate::objects::path::At;
use std::time::Duration;

use serde_json::{Value, json};

use crate::config::KNOB_PREFIX;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

/// How long KubeVirt takes to move the VM (annotation on the VMI; default 2 s).
pub(crate) fn migration_delay(vmi: &Value) -> Duration {
    let secs = pods::annotation(vmi, &format!("{KNOB_PREFIX}migration-seconds"))
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(2.0);
    Duration::from_secs_f64(secs.max(0.0))
}

pub(crate) fn evacuation_started(old: Option<&Value>, new: &Value) -> bool {
    let target = |v: &Value| {
        v.at("/status/evacuationNodeName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    target(new).is_some() && old.and_then(target).is_none()
}

/// The evacuation ends: the VM runs elsewhere (LiveMigrate) or is shut down
/// (External), and the launcher pod on the evacuated node completes.
pub(crate) fn evacuate(store: &mut Store, key: &Key, uid: &str) {
    let Some(vmi) = store.get(Resource::VirtualMachineInstances, key) else {
        return;
    };
    if vmi["metadata"]["uid"] != uid {
        return;
    }
    let Some(source) = vmi
        .at("/status/evacuationNodeName")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let strategy = vmi
        .at("/spec/evictionStrategy")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let launchers: Vec<Key> = store
        .pods_owned_by(uid)
        .into_iter()
        .filter(|k| {
            store.get(Resource::Pods, k).is_some_and(|p| {
                pods::node_name(&p) == Some(source.as_str()) && !pods::is_terminating(&p)
            })
        })
        .collect();
    for k in &launchers {
        let Some(old) = store.get(Resource::Pods, k) else {
            continue;
        };
        if strategy != "External" {
            // The migration target: a new launcher pod, scheduled elsewhere.
            let mut target = json!({
                "metadata": {
                    "generateName": format!("virt-launcher-{}-", key.1),
                    "namespace": key.0,
                    "labels": old["metadata"]["labels"],
                    "ownerReferences": old["metadata"]["ownerReferences"],
                },
                "spec": old["spec"].clone(),
            });
            if let Some(a) = old.at("/metadata/annotations") {
                target["metadata"]["annotations"] = a.clone();
            }
            if let Some(spec) = target["spec"].as_object_mut() {
                spec.remove("nodeName");
            }
            let _ = store.create(
                Resource::Pods,
                crate::apiserver::defaults::prepare_new(Resource::Pods, target),
            );
        }
        // The VM's process has left the old launcher (moved, or shut
        // down): its containers exit 0 and the pod is Completed, not
        // deleted (kubevirt issues #5657 and #10695 show the Completed
        // source pod after a migration). A drain then evicts it: the
        // eviction of a finished pod is a delete before any budget or
        // webhook is asked (apiserver/eviction.rs), and virt-api admits it
        // too (kubevirt PR #12451).
        let uid = old["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        super::complete(store, k, &uid);
    }
    let _ = store.modify(Resource::VirtualMachineInstances, key, |v| {
        let st = &mut v["status"];
        if let Some(m) = st.as_object_mut() {
            m.remove("evacuationNodeName");
        }
        if strategy == "External" {
            st["phase"] = json!("Succeeded");
        } else {
            st["migrationState"] = json!({"sourceNode": source, "completed": true});
        }
    });
}
