//! Pods made from a workload's pod template, as the controllers make them.

use crate::objects::path::At;
use serde_json::{Value, json};

use crate::apiserver::defaults::prepare_new;
use crate::objects::pods::owner_reference;
use crate::resources::Resource;

/// A new pod for `owner` from its `spec.template`: labels, annotations and
/// spec copied, the owner as controller. `name` or a generated name.
pub(crate) fn pod_from_template(owner: &Value, name: Option<String>) -> Value {
    let template = owner
        .at("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let ns = owner["metadata"]["namespace"].clone();
    let mut meta = json!({
        "namespace": ns,
        "labels": template.at("/metadata/labels").cloned().unwrap_or_else(|| json!({})),
        "ownerReferences": [owner_reference(owner, true)],
    });
    if let Some(a) = template.at("/metadata/annotations") {
        meta["annotations"] = a.clone();
    }
    match name {
        Some(n) => meta["name"] = json!(n),
        None => {
            meta["generateName"] = json!(format!(
                "{}-",
                owner["metadata"]["name"].as_str().unwrap_or("pod")
            ));
        }
    }
    let spec = template
        .get("spec")
        .cloned()
        .unwrap_or_else(|| json!({"containers": []}));
    prepare_new(Resource::Pods, json!({"metadata": meta, "spec": spec}))
}
