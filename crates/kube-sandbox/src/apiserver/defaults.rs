//! Defaulting on create, as the apiserver's defaulters do for the fields
//! the simulation reads (kubernetes pkg/apis/core/v1/defaults.go).

use serde_json::{Value, json};

use crate::resources::Resource;

/// The DefaultTolerationSeconds admission plugin: a pod that does not
/// tolerate the not-ready and unreachable NoExecute taints itself tolerates
/// them for 300 s (kubernetes plugin/pkg/admission/defaulttolerationseconds).
fn default_tolerations(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let list = spec.entry("tolerations").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return;
    };
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let has = list.iter().any(|t| {
            let any = |f: &str| t[f].as_str().is_none_or(str::is_empty);
            (t["key"] == key || any("key")) && (t["effect"] == "NoExecute" || any("effect"))
        });
        if !has {
            list.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
}

/// Defaulting on create, as the apiserver's defaulters do for the fields
/// the simulation reads.
pub(crate) fn prepare_new(res: Resource, mut obj: Value) -> Value {
    if res == Resource::Pods {
        if obj.pointer("/spec/terminationGracePeriodSeconds").is_none() {
            obj["spec"]["terminationGracePeriodSeconds"] = json!(30);
        }
        if obj.pointer("/status/phase").is_none() {
            obj["status"]["phase"] = json!("Pending");
            obj["status"]["qosClass"] = json!("BestEffort");
        }
        default_tolerations(&mut obj);
        if obj.pointer("/spec/priority").is_none() {
            let prio = match obj
                .pointer("/spec/priorityClassName")
                .and_then(Value::as_str)
            {
                Some("system-node-critical") => 2_000_001_000,
                Some("system-cluster-critical") => 2_000_000_000,
                _ => 0,
            };
            obj["spec"]["priority"] = json!(prio);
        }
    }
    if res == Resource::Namespaces && obj.pointer("/status/phase").is_none() {
        obj["status"]["phase"] = json!("Active");
    }
    obj
}
