//! KubeVirt VMs: a virt-launcher pod's eviction is refused by the PDB
//! KubeVirt keeps for it, and the refusal starts an evacuation (the VMI's
//! `status.evacuationNodeName`); KubeVirt then migrates the VM, or an
//! external controller shuts it down, and the pod goes away. That refusal
//! is progress, not a block: the drain waits and says so.

use kube::api::{Api, ApiResource, DynamicObject};

use crate::vocabulary::outcome::{Cause, Handler};

const EVACUATING: &[&str] = &["LiveMigrate", "LiveMigrateIfPossible", "External"];

/// The evacuation in progress for the VM `vmi` in `ns`, if there is one;
/// the API server's refusal when the VM may not be read.
pub(crate) async fn evacuation(
    client: &kube::Client,
    ns: &str,
    vmi: &str,
) -> Result<Option<Cause>, String> {
    match read(client, ns, vmi).await {
        Err(kube::Error::Api(s)) if s.code == 403 => Err(s.message),
        Err(_) => Ok(None),
        Ok(obj) => Ok(cause(ns, vmi, &obj)),
    }
}

async fn read(client: &kube::Client, ns: &str, vmi: &str) -> Result<DynamicObject, kube::Error> {
    let resource = ApiResource {
        group: "kubevirt.io".into(),
        version: "v1".into(),
        api_version: "kubevirt.io/v1".into(),
        kind: "VirtualMachineInstance".into(),
        plural: "virtualmachineinstances".into(),
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource);
    api.get(vmi).await
}

/// The VM's evacuation, as its object says.
fn cause(ns: &str, vmi: &str, obj: &DynamicObject) -> Option<Cause> {
    let strategy = obj
        .data
        .pointer("/spec/evictionStrategy")
        .and_then(|v| v.as_str())?
        .to_string();
    let node = obj
        .data
        .pointer("/status/evacuationNodeName")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())?
        .to_string();
    EVACUATING
        .contains(&strategy.as_str())
        .then(|| Cause::HandedOver {
            handler: Handler::Kubevirt,
            operator: "KubeVirt".into(),
            progress: if strategy == "External" {
                format!("an external controller stops the VM on node {node}")
            } else {
                format!("migrating the VM off node {node}")
            },
            subject: format!("VMI {ns}/{vmi}, evictionStrategy {strategy}"),
        })
}
