//! Defaulting on create, as the apiserver's defaulters do for the fields
//! the simulation reads (kubernetes pkg/apis/core/v1/defaults.go).

use serde_json::{Value, json};

use crate::resources::Resource;

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
