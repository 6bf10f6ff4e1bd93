//! KubeVirt, as much as a drain meets it. A refused eviction of a VM's
//! virt-launcher pod marks the VMI for evacuation (virt-api's eviction
//! admitter does that); then, after the VMI's migration time, KubeVirt
//! (LiveMigrate) starts the VM on another node and removes the old launcher
//! pod, or an external controller (External) shuts it down.

use std::time::Duration;

use serde_json::{Value, json};

use crate::sandbox::config::KNOB_PREFIX;
use crate::sandbox::deletion::{self, DeleteOptions};
use crate::sandbox::pods;
use crate::sandbox::resources::Resource;
use crate::sandbox::store::{Key, Store};

pub const LAUNCHER_LABEL: &str = "kubevirt.io";

/// Strategies under which an eviction starts an evacuation.
pub fn evacuates(strategy: &str) -> bool {
    matches!(
        strategy,
        "LiveMigrate" | "LiveMigrateIfPossible" | "External"
    )
}

/// The VMI of a virt-launcher pod, if it is one.
pub fn vmi_of(pod: &Value) -> Option<String> {
    let launcher = pod
        .pointer("/metadata/labels")
        .and_then(|l| l.get(LAUNCHER_LABEL))
        == Some(&json!("virt-launcher"));
    let owner = pods::controller_of(pod).filter(|o| o.kind == "VirtualMachineInstance")?;
    launcher.then_some(owner.name)
}

/// virt-api's eviction admitter: an eviction of a launcher pod whose VMI may
/// be moved marks the VMI for evacuation from the pod's node.
pub fn on_eviction(store: &mut Store, pod: &Value) {
    let Some(vmi) = vmi_of(pod) else { return };
    let key = (
        pod["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        vmi,
    );
    let Some(obj) = store.get(Resource::VirtualMachineInstances, &key) else {
        return;
    };
    let strategy = obj
        .pointer("/spec/evictionStrategy")
        .and_then(Value::as_str)
        .unwrap_or("None");
    let marked = obj
        .pointer("/status/evacuationNodeName")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty());
    if evacuates(strategy) && !marked {
        let node = pods::node_name(pod).unwrap_or_default().to_string();
        let _ = store.modify(Resource::VirtualMachineInstances, &key, |v| {
            v["status"]["evacuationNodeName"] = json!(node);
        });
    }
}

/// How long KubeVirt takes to move the VM (annotation on the VMI; default 2 s).
pub fn migration_delay(vmi: &Value) -> Duration {
    let secs = pods::annotation(vmi, &format!("{KNOB_PREFIX}migration-seconds"))
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(2.0);
    Duration::from_secs_f64(secs.max(0.0))
}

pub fn evacuation_started(old: Option<&Value>, new: &Value) -> bool {
    let target = |v: &Value| {
        v.pointer("/status/evacuationNodeName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    target(new).is_some() && old.and_then(target).is_none()
}

/// The evacuation ends: the VM runs elsewhere (LiveMigrate) or is shut down
/// (External), and the launcher pod on the evacuated node goes away.
pub fn evacuate(store: &mut Store, key: &Key, uid: &str) {
    let Some(vmi) = store.get(Resource::VirtualMachineInstances, key) else {
        return;
    };
    if vmi["metadata"]["uid"] != uid {
        return;
    }
    let Some(source) = vmi
        .pointer("/status/evacuationNodeName")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let strategy = vmi
        .pointer("/spec/evictionStrategy")
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
            if let Some(a) = old.pointer("/metadata/annotations") {
                target["metadata"]["annotations"] = a.clone();
            }
            if let Some(spec) = target["spec"].as_object_mut() {
                spec.remove("nodeName");
            }
            let _ = store.create(
                Resource::Pods,
                crate::sandbox::api::prepare_new(Resource::Pods, target),
            );
        }
        let _ = deletion::delete(store, Resource::Pods, k, &DeleteOptions::default());
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
