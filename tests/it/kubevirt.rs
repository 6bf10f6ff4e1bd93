//! A node running a KubeVirt VM: the refused eviction starts the VM's
//! evacuation; the drain waits for it and says so.

use std::time::Duration;

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;

use serde_json::json;

use crate::harness::Cluster;

fn scenario(strategy: &str, migration_seconds: &str) -> String {
    scenario_stopping_in(strategy, migration_seconds, 0.3)
}

/// The VM's launcher pod on n1 takes `shutdown` seconds to stop once
/// deleted.
fn scenario_stopping_in(strategy: &str, migration_seconds: &str, shutdown: f64) -> String {
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
            crate::scenario::shutdown(p, shutdown);
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

/// Once the VM has moved, its old launcher is Completed, not deleted (its
/// process is gone): kubectl drain's next try evicts it, free of the
/// budget, and ours asks again as soon as the pod changes rather than at
/// the refusal's retry time (20 s without a Retry-After).
#[test]
fn the_old_launcher_completes_once_the_vm_has_moved_and_both_drains_evict_it() {
    // Deleted while it ran, the launcher would take a minute to stop.
    let yaml = scenario_stopping_in("LiveMigrate", "1", 60.0);
    let kubectl_side = Cluster::start(&yaml, 33);
    let ours = Cluster::start(&yaml, 33);
    for c in [&kubectl_side, &ours] {
        c.wait_settled();
        assert_eq!(c.kubectl(&["uncordon", "n2"]).code, 0);
    }
    let k = kubectl_side.kubectl(&["drain", "n1", "--timeout", "40s"]);
    let m = ours.maintain(&["drain", "n1", "--timeout", "12s"]);
    assert_eq!(k.code, 0, "{k:?}");
    m.success();
    let old = "vms/virt-launcher-vm1-x7k2p";
    for c in [&kubectl_side, &ours] {
        let completed = c.history(Resource::Pods).iter().any(|e| {
            let p = e.object();
            pods::key(&p) == old && pods::phase(&p) == "Succeeded" && !pods::is_terminating(&p)
        });
        assert!(
            completed,
            "the old launcher completed before it was evicted"
        );
        let evicted: Vec<_> = c
            .evictions()
            .into_iter()
            .filter(|(p, _)| p == old)
            .collect();
        assert_eq!(evicted.len(), 1, "{evicted:?}");
        assert!(!launcher_on(c, "n1"));
        assert!(launcher_on(c, "n2"));
    }
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

/// Asked before anything changes, a VM's launcher is not among the pods a
/// budget refuses: KubeVirt's own budget refuses as its way of taking the
/// VM over, and the question says who moves it.
#[test]
fn the_question_says_kubevirt_moves_the_vm() {
    let c = Cluster::start(&scenario("LiveMigrate", "600"), 33);
    c.wait_settled();
    assert_eq!(c.kubectl(&["uncordon", "n2"]).code, 0);
    let (screen, code) = crate::operator::in_terminal(&c, "drain n1 --timeout 2s", "n\n");
    assert!(screen.contains("Drain now?"), "{screen}");
    let handed = screen
        .find("Evicting these hands each to its operator")
        .expect(&screen);
    assert!(
        screen[handed..].contains("vms/virt-launcher-vm1-x7k2p: KubeVirt migrates VMI vms/vm1"),
        "{screen}"
    );
    assert!(
        !screen.contains("refuses these evictions right now"),
        "{screen}"
    );
    // Declined: nothing changed.
    assert_ne!(code, 0, "{screen}");
    assert!(c.evictions().is_empty());
}
