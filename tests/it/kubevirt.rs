//! A node running a KubeVirt VM: the refused eviction starts the VM's
//! evacuation; the drain waits for it and says so.

use std::time::Duration;

use kube_sandbox::resources::Resource;

use serde_json::json;

use crate::harness::Cluster;

fn scenario(strategy: &str, migration_seconds: &str) -> String {
    const VMI_UID: &str = "0f6e1a32-0000-4000-8000-00000000a001";
    crate::drain::two_nodes()
        .object(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {
                "name": "vm1", "namespace": "vms", "uid": VMI_UID,
                "annotations": {"sandbox.kubectl-maintain.io/migration-seconds": migration_seconds},
            },
            "spec": {"evictionStrategy": strategy},
            "status": {"phase": "Running", "nodeName": "n1"},
        }))
        .pod("vms", "virt-launcher-vm1-x7k2p", "n1", |p| {
            p["metadata"]["labels"] =
                json!({"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": VMI_UID});
            p["metadata"]["annotations"]["sandbox.kubectl-maintain.io/ready-seconds"] = json!("0.2");
            crate::scenario::shutdown(p, 0.3);
            p["metadata"]["ownerReferences"] = json!([{"apiVersion": "kubevirt.io/v1",
                "kind": "VirtualMachineInstance", "name": "vm1", "uid": VMI_UID, "controller": true}]);
        })
        .object(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "kubevirt-disruption-budget-vm1", "namespace": "vms"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"kubevirt.io/created-by": VMI_UID}}},
        }))
        .yaml()
}

fn launcher_on(c: &Cluster, node: &str) -> bool {
    c.pods_on(node)
        .iter()
        .any(|p| p.starts_with("vms/virt-launcher-vm1-"))
}

#[test]
fn the_drain_waits_for_kubevirt_to_move_the_vm() {
    let c = Cluster::start(&scenario("LiveMigrate", "1.5"), 33);
    c.wait_settled();
    assert_eq!(c.kubectl(&["uncordon", "n2"]).code, 0);
    let out = c.maintain(&["drain", "n1", "--timeout", "30s"]);
    out.success();
    assert!(
        out.stderr.contains("pod/vms/virt-launcher-vm1-x7k2p waiting: handed over to KubeVirt (VMI vms/vm1, evictionStrategy LiveMigrate): migrating the VM off node n1"),
        "{out:?}"
    );
    assert!(!launcher_on(&c, "n1"));
    c.wait_for(
        "the VM's new launcher pod on n2",
        Duration::from_secs(10),
        |c| launcher_on(c, "n2"),
    );
    let vmi = c
        .get(Resource::VirtualMachineInstances, "vms", "vm1")
        .unwrap();
    assert_eq!(vmi["status"]["migrationState"]["sourceNode"], "n1");
    // kubectl sees the VMI too.
    let get = c.kubectl(&["get", "vmi", "-n", "vms"]);
    assert!(get.stdout.contains("vm1"), "{get:?}");
}

#[test]
fn a_slow_evacuation_is_reported_as_such_at_the_timeout() {
    let c = Cluster::start(&scenario("External", "600"), 33);
    c.wait_settled();
    assert_eq!(c.kubectl(&["uncordon", "n2"]).code, 0);
    let out = c.maintain(&["drain", "n1", "--timeout", "3s", "-o", "json"]);
    out.code(3);
    let report = out.report();
    let cause = &report.nodes[0].pods[0].result["cause"];
    // One kind for every eviction something else took over.
    assert_eq!(cause["kind"], "handedOver", "{out:?}");
    assert_eq!(cause["handler"], "kubevirt");
    assert_eq!(cause["subject"], "VMI vms/vm1, evictionStrategy External");
    assert_eq!(
        cause["progress"],
        "an external controller stops the VM on node n1"
    );
    // KubeVirt's budget refuses as its way of taking the pod over: it
    // held nothing back, and the report does not say it did.
    assert!(
        report.nodes[0].budget_holds.is_empty(),
        "{:?}",
        report.nodes[0].budget_holds
    );
    assert!(launcher_on(&c, "n1"));
}
