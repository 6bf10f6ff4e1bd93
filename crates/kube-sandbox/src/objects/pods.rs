//! Reading pods (and owners) as JSON: the few facts the simulation needs.

use serde_json::{Value, json};

pub struct OwnerRef {
    pub kind: String,
    pub name: String,
    pub uid: String,
}

/// The ownerReference with `controller: true`.
pub fn controller_of(obj: &Value) -> Option<OwnerRef> {
    obj.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|o| o["controller"].as_bool() == Some(true))
        .map(|o| OwnerRef {
            kind: o["kind"].as_str().unwrap_or_default().to_string(),
            name: o["name"].as_str().unwrap_or_default().to_string(),
            uid: o["uid"].as_str().unwrap_or_default().to_string(),
        })
}

pub(crate) fn owner_reference(owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": true,
        "blockOwnerDeletion": block,
    })
}

pub fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub fn is_terminal(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

pub fn is_terminating(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

pub fn is_ready(pod: &Value) -> bool {
    condition_true(pod, "Ready")
}

pub fn condition_true(obj: &Value, kind: &str) -> bool {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

pub fn node_name(pod: &Value) -> Option<&str> {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A static pod's API mirror: the kubelet owns it, the API cannot evict it.
pub fn is_mirror(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some()
}

pub fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/annotations")?.get(key)?.as_str()
}

/// Sets or replaces a status condition, keeping its transition time when
/// the status does not change.
pub(crate) fn set_condition(
    obj: &mut Value,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    let st = obj
        .as_object_mut()
        .expect("object")
        .entry("status")
        .or_insert_with(|| json!({}));
    let conds = st
        .as_object_mut()
        .expect("status object")
        .entry("conditions")
        .or_insert_with(|| json!([]));
    let Some(list) = conds.as_array_mut() else {
        return;
    };
    let new = json!({
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastProbeTime": null,
        "lastTransitionTime": now,
    });
    let mut new = new;
    if reason.is_empty() {
        new.as_object_mut().expect("object").remove("reason");
    }
    if message.is_empty() {
        new.as_object_mut().expect("object").remove("message");
    }
    match list.iter_mut().find(|c| c["type"] == kind) {
        Some(c) if c["status"] == status => {
            new["lastTransitionTime"] = c["lastTransitionTime"].clone();
            *c = new;
        }
        Some(c) => *c = new,
        None => list.push(new),
    }
}
