//! Admission webhooks the sandbox's apiserver runs, as a cluster with
//! KubeVirt has them: virt-api's eviction admitter
//! (kubevirt pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go).

use serde_json::{Value, json};

use crate::objects::kubevirt::{evacuates, vmi_of};
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::Store;

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
