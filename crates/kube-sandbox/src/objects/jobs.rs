//! Jobs as the API server stores them.

use serde_json::{Value, json};

use crate::objects::path::At as _;

/// A Job's selector and its pods' labels, made from its uid unless it
/// brings its own (`manualSelector`), as kubernetes
/// pkg/registry/batch/job/strategy.go `generateSelector` does: the
/// `batch.kubernetes.io/` labels and their legacy twins.
pub(crate) fn selector(job: &mut Value) {
    if job.at("/spec/manualSelector") == Some(&json!(true)) || job.at("/spec/selector").is_some() {
        return;
    }
    let uid = job["metadata"]["uid"].clone();
    let name = job["metadata"]["name"].clone();
    let Some(template) = job.pointer_mut("/spec/template").filter(|t| t.is_object()) else {
        return;
    };
    for (key, value) in [
        ("batch.kubernetes.io/controller-uid", &uid),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("job-name", &name),
    ] {
        template["metadata"]["labels"][key] = value.clone();
    }
    job["spec"]["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
}
