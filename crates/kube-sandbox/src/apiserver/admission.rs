//! Admission the sandbox's apiserver runs: the NamespaceLifecycle plugin
//! (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/
//! lifecycle/admission.go), and, as a cluster with KubeVirt has it,
//! virt-api's eviction admitter
//! (kubevirt pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go).

use crate::objects::path::At;
use serde_json::{Value, json};

use crate::api_error::ApiError;

use crate::objects::kubevirt::{evacuates, vmi_of};
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::Store;

/// NamespaceLifecycle: no create (an eviction included: it is a create of
/// `pods/eviction`) in a namespace being deleted. 403 with the
/// `NamespaceTerminating` cause that kubectl drain looks for; deletes and
/// everything else go through.
pub(crate) fn namespace_lifecycle(
    store: &Store,
    res: Resource,
    namespace: &str,
    name: &str,
) -> Result<(), ApiError> {
    let ns = store.get(
        Resource::Namespaces,
        &(String::new(), namespace.to_string()),
    );
    if ns.is_none_or(|n| n.at("/status/phase").and_then(Value::as_str) != Some("Terminating")) {
        return Ok(());
    }
    let plural = res.info().plural;
    Err(ApiError::new(
        403,
        "Forbidden",
        format!(
            "{plural} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated"
        ),
    )
    .with_details(json!({
        "name": name,
        "kind": plural,
        "causes": [{
            "reason": "NamespaceTerminating",
            "message": format!("namespace {namespace} is being terminated"),
            "field": "metadata.namespace",
        }],
    })))
}

/// virt-api's eviction admitter: an eviction of a launcher pod whose VMI may
/// be moved marks the VMI for evacuation from the pod's node.
pub(crate) fn on_eviction(store: &mut Store, pod: &Value) {
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
        .at("/spec/evictionStrategy")
        .and_then(Value::as_str)
        .unwrap_or("None");
    let marked = obj
        .at("/status/evacuationNodeName")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty());
    if evacuates(strategy) && !marked {
        let node = pods::node_name(pod).unwrap_or_default().to_string();
        let _ = store.modify(Resource::VirtualMachineInstances, &key, |v| {
            v["status"]["evacuationNodeName"] = json!(node);
        });
    }
}
