//! KubeVirt's objects as the sandbox reads them: which pod is a VM's
//! virt-launcher, and which eviction strategies evacuate the VM.

use crate::objects::path::At;
use serde_json::{Value, json};

use super::pods;

pub(crate) const LAUNCHER_LABEL: &str = "kubevirt.io";

/// Strategies under which an eviction starts an evacuation.
pub(crate) fn evacuates(strategy: &str) -> bool {
    matches!(
        strategy,
        "LiveMigrate" | "LiveMigrateIfPossible" | "External"
    )
}

/// The VMI of a virt-launcher pod, if it is one.
pub(crate) fn vmi_of(pod: &Value) -> Option<String> {
    let launcher = pod
        .at("/metadata/labels")
        .and_then(|l| l.get(LAUNCHER_LABEL))
        == Some(&json!("virt-launcher"));
    let owner = pods::controller_of(pod).filter(|o| o.kind == "VirtualMachineInstance")?;
    launcher.then_some(owner.name)
}
