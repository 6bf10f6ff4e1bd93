//! The sandbox as a rehearsal: the outcome of a drain on it is the outcome
//! a real cluster would reach, because its scheduler applies
//! kube-scheduler's rules. Each test runs the real kubectl on one copy and
//! kubectl maintain on another.

use std::time::Duration;

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use serde_json::json;

use crate::harness::Cluster;
use crate::scenario::{Scenario, template};

/// Three nodes, three web replicas that may not share a node, and a budget
/// that keeps two of them.
fn anti_affine_web() -> String {
    Scenario::new()
        .node("n1")
        .node("n2")
        .node("n3")
        .deployment_with("web", 3, |d| {
            template(d)["spec"]["affinity"] = json!({"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "kubernetes.io/hostname",
            }]}});
        })
        .pdb("web", "minAvailable: 2")
        .yaml()
}

/// The same drain by kubectl on one copy and by us on the other; both
/// succeed.
fn drain_both(theirs: &Cluster, ours: &Cluster, node: &str) {
    let args = ["drain", node, "--timeout", "20s"];
    theirs.kubectl(&args).success();
    ours.maintain(&args).success();
}

fn pending_web(c: &Cluster) -> Vec<std::sync::Arc<serde_json::Value>> {
    c.pods()
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["app"] == "web" && pods::node_name(p).is_none())
        .collect()
}

#[test]
fn anti_affine_replicas_stay_pending_and_the_next_drain_blocks() {
    let theirs = Cluster::start(&anti_affine_web(), 33);
    let ours = Cluster::start(&anti_affine_web(), 33);
    for c in [&theirs, &ours] {
        c.wait_settled();
        let nodes: std::collections::BTreeSet<String> = c
            .pods()
            .iter()
            .filter_map(|p| pods::node_name(p).map(str::to_string))
            .collect();
        assert_eq!(nodes.len(), 3, "one replica per node");
    }
    drain_both(&theirs, &ours, "n1");
    for c in [&theirs, &ours] {
        c.wait_for("the replacement to be tried", Duration::from_secs(5), |c| {
            pending_web(c)
                .iter()
                .any(|p| pods::condition(p, "PodScheduled").is_some())
        });
        let pending = pending_web(c);
        assert_eq!(pending.len(), 1, "the replacement has nowhere to go");
        let scheduled = pods::condition(&pending[0], "PodScheduled").unwrap();
        assert_eq!(scheduled["status"], "False");
        assert_eq!(
            scheduled["message"],
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match pod anti-affinity rules."
        );
    }
    // The operator sees it as on a real cluster.
    let events = ours.kubectl(&[
        "get",
        "events",
        "-n",
        "apps",
        "--field-selector",
        "reason=FailedScheduling",
    ]);
    events.success();
    assert!(
        events
            .stdout
            .contains("didn't match pod anti-affinity rules"),
        "{events:?}"
    );
    // The budget has two healthy pods and needs two: n2 cannot be drained.
    let k = theirs.kubectl(&["drain", "n2", "--timeout", "3s"]);
    assert_ne!(k.code, 0, "{k:?}");
    let m = ours.maintain(&["drain", "n2", "--timeout", "3s"]);
    m.code(3);
    assert!(
        m.stderr.contains("blocked by PodDisruptionBudget apps/web"),
        "{m:?}"
    );
    for c in [&theirs, &ours] {
        assert_eq!(
            c.pods_on("n2")
                .iter()
                .filter(|p| p.starts_with("apps/web-"))
                .count(),
            1,
            "web stays on n2"
        );
        let pdb = c
            .get(Resource::PodDisruptionBudgets, "apps", "web")
            .unwrap();
        assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    }
}

/// Requests count against allocatable: a replacement that fits nowhere
/// stays Pending with the scheduler's words, and `kubectl describe` shows it.
#[test]
fn requests_that_fit_nowhere_stay_pending() {
    let scenario = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("big", 2, |d| {
            template(d)["spec"]["containers"][0]["resources"] =
                json!({"requests": {"cpu": "5", "memory": "1Gi"}});
        })
        .yaml();
    for minor in [27, 33] {
        let c = Cluster::start(&scenario, minor);
        c.wait_settled();
        // Nodes are 8 cpu each: one big pod per node, the replacement of
        // the one drained fits nowhere.
        c.maintain(&["drain", "n1", "--timeout", "20s"]).success();
        c.wait_for("a pending replacement", Duration::from_secs(5), |c| {
            c.pods().iter().any(|p| pods::node_name(p).is_none())
        });
        let out = c.kubectl(&["describe", "pods", "-n", "apps", "-l", "app=big"]);
        out.success();
        assert!(
            out.stdout.contains(
                "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."
            ),
            "kubectl 1.{minor}: {out:?}"
        );
    }
}

/// The node lifecycle as a real control plane runs it: a cordon brings the
/// unschedulable taint and an uncordon takes it away; a node whose kubelet
/// is down gets the not-ready taints, and its pods, once evicted, stay
/// Terminating (no kubelet confirms), so a drain of a dead node needs
/// `--skip-wait-for-delete-timeout` with kubectl, and with us
/// `--lost-pod-timeout=0` to wait as kubectl does (its default counts them
/// gone, tests/it/dead_node.rs).
#[test]
fn a_dead_node_drains_as_on_a_real_cluster() {
    // A 1 s grace period: a deletion's deadline (deletionTimestamp) is its
    // start plus the grace period, and skipping counts from the deadline.
    let scenario = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("web", 2, |d| {
            template(d)["spec"]["terminationGracePeriodSeconds"] = json!(1);
        })
        .yaml();
    let theirs = Cluster::start(&scenario, 33);
    let ours = Cluster::start(&scenario, 33);
    let taints = |c: &Cluster| -> Vec<String> {
        c.get(Resource::Nodes, "", "n1").unwrap()["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                format!(
                    "{}:{}",
                    t["key"].as_str().unwrap(),
                    t["effect"].as_str().unwrap()
                )
            })
            .collect()
    };
    for c in [&theirs, &ours] {
        c.wait_settled();
        c.kubectl(&["cordon", "n1"]).success();
        c.wait_for("the unschedulable taint", Duration::from_secs(5), |c| {
            taints(c) == ["node.kubernetes.io/unschedulable:NoSchedule"]
        });
        c.kubectl(&["uncordon", "n1"]).success();
        c.wait_for("no taint", Duration::from_secs(5), |c| taints(c).is_empty());
        // The kubelet of n1 stops posting: its node goes NotReady.
        c.kubectl(&[
            "patch", "node", "n1", "--subresource=status", "--type=merge", "-p",
            r#"{"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}}"#,
        ])
        .success();
        c.wait_for("the not-ready taints", Duration::from_secs(5), |c| {
            let t = taints(c);
            t.contains(&"node.kubernetes.io/not-ready:NoSchedule".to_string())
                && t.contains(&"node.kubernetes.io/not-ready:NoExecute".to_string())
        });
    }
    let on_n1 = |c: &Cluster| {
        c.pods_on("n1")
            .iter()
            .filter(|p| p.starts_with("apps/web-"))
            .count()
    };
    assert!(on_n1(&ours) > 0, "a web pod runs on n1");
    // Without skipping, neither drain ends: the evicted pods stay Terminating.
    let k = theirs.kubectl(&["drain", "n1", "--timeout", "3s"]);
    assert_ne!(k.code, 0, "{k:?}");
    let m = ours.maintain(&["drain", "n1", "--timeout", "3s", "--lost-pod-timeout=0"]);
    m.code(3);
    for c in [&theirs, &ours] {
        assert!(on_n1(c) > 0, "still there, Terminating");
        assert!(
            c.pods()
                .iter()
                .filter(|p| pods::node_name(p) == Some("n1"))
                .all(|p| pods::is_terminating(p) || p["metadata"]["labels"]["app"] != "web")
        );
    }
    // Skipping pods deleted more than a second ago, both finish.
    let skip = [
        "drain",
        "n1",
        "--skip-wait-for-delete-timeout=1",
        "--timeout",
        "20s",
    ];
    theirs.kubectl(&skip).success();
    let mut ours_skip = skip.to_vec();
    ours_skip.push("--lost-pod-timeout=0");
    ours.maintain(&ours_skip).success();
}

/// A dump is loaded as it was, not healed: a pod stuck in ImagePullBackOff
/// stays Pending and not Ready, and a budget over pods of a controller the
/// sandbox does not run (here a ReplicationController) keeps the expected
/// count the dump recorded, so it allows what the real cluster allowed.
const DUMPED: &str = "
apiVersion: v1
kind: Pod
metadata:
  name: stuck
  namespace: apps
  labels: {app: stuck}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: stuck-rs, uid: u-stuck, controller: true}]
spec:
  nodeName: n1
  containers: [{name: c, image: registry.example/missing:1}]
status:
  phase: Pending
  conditions: [{type: Ready, status: 'False'}, {type: PodScheduled, status: 'True'}]
  containerStatuses:
  - name: c
    ready: false
    restartCount: 0
    image: registry.example/missing:1
    imageID: ''
    state: {waiting: {reason: ImagePullBackOff, message: 'Back-off pulling image'}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: legacy, namespace: apps}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: legacy}}
status:
  currentHealthy: 2
  desiredHealthy: 1
  expectedPods: 2
  disruptionsAllowed: 1
  observedGeneration: 1
";

fn legacy_pod(name: &str, node: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "apps", "labels": {"app": "legacy"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ReplicationController",
                "name": "legacy", "uid": "u-legacy", "controller": true}]},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]},
    })
}

#[test]
fn a_dump_loads_as_it_was() {
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .raw(DUMPED)
        .object(legacy_pod("legacy-a", "n1"))
        .object(legacy_pod("legacy-b", "n2"))
        .start(33);
    c.wait_for("the legacy pods Ready", Duration::from_secs(10), |c| {
        ["legacy-a", "legacy-b"].iter().all(|n| {
            c.get(Resource::Pods, "apps", n)
                .is_some_and(|p| pods::is_ready(&p))
        })
    });
    // The kubelet reports the image it cannot pull, and the disruption
    // controller counts the legacy pods: then nothing else is to come.
    c.wait_for("the dump's status settled", Duration::from_secs(10), |c| {
        let stuck = c.get(Resource::Pods, "apps", "stuck").unwrap();
        let budget = c.get(Resource::PodDisruptionBudgets, "apps", "legacy");
        stuck["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ImagePullBackOff"
            && budget.is_some_and(|b| b["status"]["expectedPods"] == 2)
    });
    let stuck = c.get(Resource::Pods, "apps", "stuck").unwrap();
    assert_eq!(pods::phase(&stuck), "Pending");
    assert!(!pods::is_ready(&stuck));
    assert_eq!(
        stuck["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "ImagePullBackOff"
    );
    let pdb = c
        .get(Resource::PodDisruptionBudgets, "apps", "legacy")
        .unwrap();
    assert_eq!(pdb["status"]["expectedPods"], 2, "{pdb}");
    assert_eq!(pdb["status"]["disruptionsAllowed"], 1, "{pdb}");
    // kubectl get pdb shows it: ALLOWED DISRUPTIONS 1.
    let out = c.kubectl(&["get", "pdb", "-n", "apps", "legacy"]);
    out.success();
    assert!(
        out.stdout
            .lines()
            .nth(1)
            .is_some_and(|l| l.split_whitespace().nth(3) == Some("1")),
        "{out:?}"
    );
}

/// A StatefulSet pod's zonal volume keeps it in its zone: its volume is
/// provisioned where it first lands (WaitForFirstConsumer), a drain moves it
/// only to a node of that zone, and with none left it stays Pending with
/// the scheduler's words, with kubectl as with us.
fn zonal_node(name: &str, zone: &str, cordoned: bool) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
        "spec": {"unschedulable": cordoned}})
}

fn zonal_db() -> String {
    Scenario::new()
        .object(zonal_node("n1", "a", false))
        .object(zonal_node("n2", "b", true))
        .object(zonal_node("n3", "a", true))
        .zonal_db(|_| {})
        .yaml()
}

#[test]
fn a_zonal_volume_keeps_its_pod_in_its_zone() {
    let theirs = Cluster::start(&zonal_db(), 33);
    let ours = Cluster::start(&zonal_db(), 33);
    let db_node = |c: &Cluster| {
        c.get(Resource::Pods, "apps", "db-0")
            .and_then(|p| pods::node_name(&p).map(str::to_string))
    };
    for c in [&theirs, &ours] {
        c.wait_settled();
        assert_eq!(db_node(c).as_deref(), Some("n1"));
        let pvc = c
            .get(Resource::PersistentVolumeClaims, "apps", "data-db-0")
            .unwrap();
        assert_eq!(
            pvc["status"]["phase"], "Bound",
            "provisioned where db-0 landed"
        );
        c.kubectl(&["uncordon", "n2", "n3"]).success();
    }
    drain_both(&theirs, &ours, "n1");
    for c in [&theirs, &ours] {
        c.wait_for("db-0 back", Duration::from_secs(5), |c| {
            db_node(c).is_some()
        });
        assert_eq!(
            db_node(c).as_deref(),
            Some("n3"),
            "zone a, not n2 in zone b"
        );
    }
    drain_both(&theirs, &ours, "n3");
    for c in [&theirs, &ours] {
        c.wait_for("db-0 pending", Duration::from_secs(5), |c| {
            c.get(Resource::Pods, "apps", "db-0").is_some_and(|p| {
                pods::condition(&p, "PodScheduled").is_some_and(|s| s["status"] == "False")
            })
        });
        let pod = c.get(Resource::Pods, "apps", "db-0").unwrap();
        assert_eq!(
            pods::condition(&pod, "PodScheduled").unwrap()["message"],
            "0/3 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 2 node(s) were unschedulable."
        );
    }
}
