//! A node whose kubelet died (issue #29): the real kubectl drain and ours
//! on two copies of one cluster, the soft path that ends without hanging,
//! and the hard path (`--node-shut-down`) that goes on only with proof of
//! power-off, after which the StatefulSet pod runs elsewhere with its
//! volume. The sandbox's node lifecycle controller is given a 0.3 s grace
//! period so that the node goes Unknown at once.

use std::time::Duration;

use kube_sandbox::resources::Resource;
use serde_json::json;

use crate::harness::Cluster;
use crate::scenario::{Scenario, template};

const FLAGS: [&str; 4] = [
    "--ignore-daemonsets",
    "--delete-emptydir-data",
    "--force",
    "--timeout=6s",
];

/// Prefers n1.
fn on_n1() -> serde_json::Value {
    json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
        "preference": {"matchExpressions": [{"key": "kubernetes.io/hostname",
            "operator": "In", "values": ["n1"]}]}}]}})
}

/// n1 holds the StatefulSet `db` (one pod, a ReadWriteOnce CSI volume) and
/// two pods of Deployment `web`; n2 starts cordoned, so that they go to n1.
fn scenario() -> Scenario {
    let node = |name: &str, ip: &str| {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
            "labels": {"topology.kubernetes.io/zone": "a"}},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}]}})
    };
    Scenario::new()
        .object(node("n1", "10.0.0.1"))
        .object({
            let mut n2 = node("n2", "10.0.0.2");
            n2["spec"] = json!({"unschedulable": true});
            n2
        })
        .zonal_db(|db| db["spec"]["template"]["spec"]["affinity"] = on_n1())
        .deployment_with("web", 2, |d| template(d)["spec"]["affinity"] = on_n1())
}

/// The scenario with n1's kubelet stopped and n1 Unknown.
fn dead_n1() -> Cluster {
    let c = Cluster::start_with(&scenario().yaml(), 33, |config| {
        config.node_monitor_grace_period_seconds = Some(0.3);
    });
    c.wait_settled();
    c.wait_for("db-0 and web running on n1", Duration::from_secs(20), |c| {
        c.pods_on("n1").len() == 3
    });
    c.kubectl(&["uncordon", "n2"]).success();
    assert!(c.sandbox.set_kubelet("n1", false));
    c.wait_for("n1 Unknown", Duration::from_secs(10), |c| {
        ready(c, "n1").as_deref() == Some("Unknown")
    });
    c
}

fn ready(c: &Cluster, node: &str) -> Option<String> {
    let n = c.get(Resource::Nodes, "", node)?;
    n["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .and_then(|c| c["status"].as_str().map(str::to_string))
}

fn taints(c: &Cluster, node: &str) -> Vec<String> {
    c.get(Resource::Nodes, "", node).unwrap()["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["key"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn db_ready_on(c: &Cluster, node: &str) -> bool {
    c.get(Resource::Pods, "apps", "db-0").is_some_and(|p| {
        p["spec"]["nodeName"] == node
            && p["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

#[test]
fn kubectl_drain_waits_out_a_dead_node_where_ours_ends_and_names_what_cannot_move() {
    let theirs = dead_n1();
    let ours = dead_n1();
    // What runbooks grep: kube-apiserver's table says NotReady.
    let nodes = theirs.kubectl(&["get", "nodes", "n1", "--no-headers"]);
    assert!(nodes.stdout.contains(" NotReady"), "{nodes:?}");

    let mut args = vec!["drain", "n1"];
    args.extend(FLAGS);
    let k = theirs.kubectl(&args);
    assert_ne!(
        k.code, 0,
        "kubectl drain waits for pods no kubelet stops: {k:?}"
    );
    assert!(
        k.stderr.contains("global timeout") || k.stderr.contains("context deadline"),
        "{k:?}"
    );

    args.extend(["-o", "json"]);
    let out = ours.maintain(&args);
    out.success();
    // Said before anything changed: the node's state and what we do about it.
    let warned = out
        .stderr
        .find("node/n1 is NotReady (Ready Unknown")
        .expect("warned");
    let cordoned = out.stderr.find("node/n1 cordoned").expect("cordoned");
    assert!(warned < cordoned, "{out:?}");
    assert!(out.stderr.contains("--lost-pod-timeout"), "{out:?}");
    assert!(out.stderr.contains("counted as gone"), "{out:?}");
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let node = &report["nodes"][0];
    assert_eq!(node["status"], "drained", "{out:?}");
    assert_eq!(node["notReady"]["ready"], "Unknown");
    assert!(node["notReady"]["since"].is_string());
    assert!(
        node["notReady"]["taints"]
            .to_string()
            .contains("node.kubernetes.io/unreachable")
    );
    let pods = node["pods"].as_array().unwrap();
    let db = pods.iter().find(|p| p["pod"] == "apps/db-0").unwrap();
    assert_eq!(db["result"]["state"], "lost", "{db}");
    let stuck = db["result"]["stuck"].to_string();
    assert!(
        stuck.contains("\"statefulSet\"") && stuck.contains("\"db\""),
        "{stuck}"
    );
    assert!(
        stuck.contains("\"volume\"") && stuck.contains("csi-"),
        "{stuck}"
    );
    let web: Vec<_> = pods
        .iter()
        .filter(|p| p["pod"].as_str().unwrap().starts_with("apps/web-"))
        .collect();
    assert!(
        web.iter()
            .all(|p| p["result"]["state"] == "lost" && p["result"].get("stuck").is_none()),
        "{web:?}"
    );
    // The Deployment's replacements start elsewhere at once; db-0 does not
    // move (its pod object is still there).
    ours.wait_for("web running on n2", Duration::from_secs(15), |c| {
        c.pods_on("n2")
            .iter()
            .filter(|p| p.starts_with("apps/web-"))
            .count()
            == 2
    });
    assert!(!db_ready_on(&ours, "n2"));
    assert!(!taints(&ours, "n1").contains(&"node.kubernetes.io/out-of-service".to_string()));

    // With 0, it waits as kubectl drain does, and says why pods stay.
    let again = ours.maintain(&[
        "drain",
        "n1",
        "--force",
        "--ignore-daemonsets",
        "--timeout=2s",
        "--lost-pod-timeout=0",
        "-o",
        "json",
    ]);
    assert_ne!(again.code, 0, "{again:?}");
    assert!(
        again.stdout.contains("\"kind\": \"nodeNotReady\""),
        "{again:?}"
    );
}

#[test]
fn with_proof_of_power_off_the_statefulset_pod_runs_elsewhere_with_its_volume() {
    let c = dead_n1();
    let mut args = vec![
        "drain",
        "n1",
        "--node-shut-down",
        "--fence-command",
        "test \"$NODE $NODE_INTERNALIP\" = \"n1 10.0.0.1\"",
    ];
    args.extend(&FLAGS[..3]);
    args.push("--timeout=60s");
    let out = c.maintain(&args);
    out.success();
    assert!(
        taints(&c, "n1").contains(&"node.kubernetes.io/out-of-service".to_string()),
        "{out:?}"
    );
    // The pod garbage collector's 20 s period, then the volume moves.
    c.wait_for("db-0 Ready on n2", Duration::from_secs(40), |c| {
        db_ready_on(c, "n2")
    });
    let va = c.kubectl(&[
        "get",
        "volumeattachments",
        "-o",
        "jsonpath={.items[*].spec.nodeName}",
    ]);
    assert_eq!(va.stdout.trim(), "n2", "{va:?}");

    // uncordon refuses while n1 is down; once it is back, the taint goes.
    let refused = c.maintain(&["uncordon", "n1"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(refused.stderr.contains("NotReady"), "{refused:?}");
    assert!(taints(&c, "n1").contains(&"node.kubernetes.io/out-of-service".to_string()));
    assert!(c.sandbox.set_kubelet("n1", true));
    c.wait_for("n1 Ready", Duration::from_secs(10), |c| {
        ready(c, "n1").as_deref() == Some("True")
    });
    let back = c.maintain(&["uncordon", "n1"]);
    back.success();
    assert!(
        !taints(&c, "n1").contains(&"node.kubernetes.io/out-of-service".to_string()),
        "{back:?}"
    );
}

#[test]
fn without_proof_the_out_of_service_taint_never_goes_on() {
    let c = dead_n1();
    let untouched = |c: &Cluster| {
        let n = c.get(Resource::Nodes, "", "n1").unwrap();
        n["spec"].get("unschedulable").is_none()
            && !taints(c, "n1").contains(&"node.kubernetes.io/out-of-service".to_string())
    };
    // A fence command that fails: no proof, nothing changed.
    let failed = c.maintain(&[
        "drain",
        "n1",
        "--force",
        "--node-shut-down",
        "--fence-command",
        "exit 3",
    ]);
    assert_eq!(failed.code, 1, "{failed:?}");
    assert!(failed.stderr.contains("exited 3"), "{failed:?}");
    assert!(untouched(&c));
    // No terminal to type the name at, and --yes is no proof.
    for yes in [false, true] {
        let mut args = vec!["drain", "n1", "--force", "--node-shut-down"];
        if yes {
            args.push("--yes");
        }
        let out = c.maintain(&args);
        assert_eq!(out.code, 2, "{out:?}");
        assert!(
            out.stderr.contains("no proof that node/n1 is powered off"),
            "{out:?}"
        );
        assert!(untouched(&c));
    }
    // A node that is Ready is never taken out of service.
    let live = c.maintain(&["drain", "n2", "--node-shut-down", "--fence-command", "true"]);
    assert_eq!(live.code, 2, "{live:?}");
    assert!(live.stderr.contains("node/n2 is Ready"), "{live:?}");
    assert!(!taints(&c, "n2").contains(&"node.kubernetes.io/out-of-service".to_string()));
}

#[test]
fn a_rolled_node_that_does_not_come_back_is_reported_down_with_its_remedy() {
    let yaml = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment("web", 2)
        .yaml();
    let c = Cluster::start_with(&yaml, 33, |config| {
        config.node_monitor_grace_period_seconds = Some(0.3);
    });
    c.wait_settled();
    // The action's "reboot" never ends: the kubelet stops for good.
    let exec = format!(
        "{} annotate node \"$NODE\" sandbox.kubectl-maintain.io/kubelet=stopped",
        crate::harness::kubectl_path().display()
    );
    let out = c.maintain(&[
        "roll",
        "n1",
        "--ignore-daemonsets",
        "--exec",
        &exec,
        "--wait-for-reboot",
        "--ready-timeout",
        "3s",
        "-o",
        "json",
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let n1 = &report["nodes"][0];
    assert_eq!(n1["status"], "blocked", "{out:?}");
    let message = n1["message"].as_str().unwrap_or_default();
    assert!(
        message
            .contains("not back within --ready-timeout 3.0s: the node is NotReady (Ready Unknown"),
        "{message}"
    );
    assert!(message.contains("bring the machine back"), "{message}");
    assert_eq!(n1["notReady"]["ready"], "Unknown", "{n1}");
    assert!(
        c.get(Resource::Nodes, "", "n1").unwrap()["spec"]["unschedulable"] == true,
        "left cordoned"
    );
}

#[test]
fn plan_simulate_predicts_what_a_dead_node_keeps_with_and_without_the_hard_path() {
    let c = dead_n1();
    let mut args = vec!["plan", "n1", "--simulate"];
    args.extend(&FLAGS[..3]);
    let table = c.maintain(&args);
    table.success();
    eprintln!("{}", table.stdout);
    args.extend(["-o", "json"]);
    let out = c.maintain(&args);
    out.success();
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let node = &report["nodes"][0];
    assert_eq!(node["notReady"]["ready"], "Unknown", "{out:?}");
    let db = node["pods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pod"] == "apps/db-0")
        .unwrap();
    assert_eq!(db["result"]["state"], "lost", "{db}");
    let recovery = report["prediction"]["recovery"].as_array().unwrap();
    assert_eq!(recovery.len(), 1, "only db-0 is kept: {recovery:?}");
    let r = &recovery[0];
    assert_eq!(r["pod"], "apps/db-0");
    assert_eq!(r["holds"], "StatefulSet/db");
    // Left down, it never moves; with the taint, the pod garbage collector
    // (20 s period) and the attach/detach controller (at once) let it.
    assert!(r.get("softMs").is_none(), "{r}");
    let hard = r["hardMs"].as_u64().unwrap();
    assert!(hard <= 40_000, "{r}");
    assert_eq!(r["on"], "n2");
    assert!(
        table.stdout.contains("KEPT BY A DEAD NODE") && table.stdout.contains("after the taint"),
        "{table:?}"
    );
    // Nothing changed on the cluster.
    assert!(!taints(&c, "n1").contains(&"node.kubernetes.io/out-of-service".to_string()));
}

#[test]
fn killed_after_the_taint_a_rerun_reaches_the_same_end_without_a_second_fence() {
    let c = dead_n1();
    let fenced = c.dir.path().join("fenced");
    let fence = format!("echo \"$NODE\" >> {}", fenced.display());
    let mut args = vec!["drain", "n1", "--node-shut-down", "--fence-command", &fence];
    args.extend(&FLAGS[..3]);
    args.push("--timeout=60s");
    let mut child = c.maintain_spawn(&args);
    c.wait_for("the out-of-service taint", Duration::from_secs(20), |c| {
        taints(c, "n1").contains(&"node.kubernetes.io/out-of-service".to_string())
    });
    child.kill().expect("kill -9");
    let _ = child.wait();
    let out = c.maintain(&args);
    out.success();
    assert!(out.stdout.contains("node/n1 drained"), "{out:?}");
    let runs = std::fs::read_to_string(&fenced).unwrap_or_default();
    assert_eq!(runs.lines().count(), 1, "fenced once: {runs:?} {out:?}");
    c.wait_for("db-0 Ready on n2", Duration::from_secs(40), |c| {
        db_ready_on(c, "n2")
    });
}

/// Kubernetes 1.37: a node whose kubelet is shutting it down gracefully
/// (`GracefulNodeShutdownInProgress`) is said first and treated as going
/// away: its pods, terminated by its kubelet, are not waited on as if it
/// would come back, and the drain ends once they are gone or lost.
#[test]
fn a_node_shutting_down_gracefully_is_said_first_and_not_waited_for() {
    let c = Cluster::start_with(&scenario().yaml(), 37, |config| {
        config.node_monitor_grace_period_seconds = Some(0.3);
    });
    c.wait_settled();
    c.wait_for("db-0 and web running on n1", Duration::from_secs(20), |c| {
        c.pods_on("n1").len() == 3
    });
    c.kubectl(&["uncordon", "n2"]).success();
    c.kubectl(&[
        "annotate",
        "node",
        "n1",
        "sandbox.kubectl-maintain.io/graceful-shutdown-seconds=20",
    ])
    .success();
    c.wait_for("n1 shutting down", Duration::from_secs(10), |c| {
        c.get(Resource::Nodes, "", "n1").is_some_and(|n| {
            n["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|x| x["type"] == "GracefulNodeShutdownInProgress" && x["status"] == "True")
            })
        })
    });
    let out = c.maintain(&[&["drain", "n1", "--yes"][..], &FLAGS].concat());
    // First of the warnings, which come before any change.
    let first = out.stderr.lines().find(|l| l.starts_with("warning: node/"));
    assert!(
        first.is_some_and(
            |l| l.contains("node/n1 is shutting down (GracefulNodeShutdownInProgress)")
        ),
        "{out:?}"
    );
    assert!(
        !out.stderr.contains("timed out"),
        "not waited on until --timeout: {out:?}"
    );
    out.success();
}

/// Kubernetes 1.37: a graceful shutdown that begins while the drain waits
/// on a budget (nothing evicted yet, so nothing read the node) is said at
/// once: the kubelet failing the node's pods makes the drain read the node
/// then, not at its next period, nor never.
#[test]
fn a_graceful_shutdown_that_begins_mid_drain_is_said_at_once() {
    let c = Cluster::start_with(
        &scenario().pdb("web", "minAvailable: 2").yaml(),
        37,
        |config| {
            config.node_monitor_grace_period_seconds = Some(0.3);
        },
    );
    c.wait_settled();
    c.wait_for("db-0 and web running on n1", Duration::from_secs(20), |c| {
        c.pods_on("n1").len() == 3
    });
    let mut run = c.maintain_watched(&[
        "drain",
        "n1",
        "--yes",
        "--ignore-daemonsets",
        "--force",
        "--delete-emptydir-data",
        "--timeout=60s",
    ]);
    run.wait_for_stderr("disruption budget", Duration::from_secs(15));
    let asked = std::time::Instant::now();
    c.kubectl(&[
        "annotate",
        "node",
        "n1",
        "sandbox.kubectl-maintain.io/graceful-shutdown-seconds=30",
    ])
    .success();
    run.wait_for_stderr(
        "node/n1 is shutting down (GracefulNodeShutdownInProgress)",
        Duration::from_secs(8),
    );
    // Said before the period a node is read at while its pods go
    // (src/drain/dead_node.rs, HEALTH_EVERY: 10 s).
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );
    // Its pods, failed by the shutdown, go: the drain ends, not at
    // --timeout.
    let end = run.finish(Duration::from_secs(20));
    assert_eq!(end.code, 0, "{end:?}");
    assert!(!end.stderr.contains("timed out"), "{end:?}");
}

/// Back in service, the out-of-service taint comes off only once nothing
/// acts on it (#67): while a pod on the node is still terminating, uncordon
/// says what it waits on, and leaves the node as it is past
/// `--out-of-service-timeout`; once the pod is gone the taint comes off.
#[test]
fn the_out_of_service_taint_comes_off_only_once_nothing_acts_on_it() {
    let c = dead_n1();
    let mut args = vec!["drain", "n1", "--node-shut-down", "--fence-command", "true"];
    args.extend(&FLAGS[..3]);
    args.push("--timeout=60s");
    c.maintain(&args).success();
    // A pod its finalizer keeps terminating on n1 (the taint's NoExecute
    // evicts it, Pod GC force-deletes it; the finalizer stays).
    let held = c.dir.path().join("held.yaml");
    std::fs::write(
        &held,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: held, namespace: default, finalizers: [example.com/cleanup]}\nspec: {nodeName: n1, containers: [{name: c, image: x}]}\n",
    )
    .unwrap();
    c.kubectl(&["create", "-f", held.to_str().unwrap()])
        .success();
    // Its own grace is short, so that only the finalizer keeps it.
    c.kubectl(&["delete", "pod", "held", "--wait=false", "--grace-period=1"])
        .success();
    assert!(c.sandbox.set_kubelet("n1", true));
    c.wait_for("n1 Ready", Duration::from_secs(10), |c| {
        ready(c, "n1").as_deref() == Some("True")
    });
    let oos = "node.kubernetes.io/out-of-service".to_string();
    // Past the limit: nothing changed, and what still acts is named.
    let early = c.maintain(&["uncordon", "n1", "--out-of-service-timeout", "1s"]);
    early.code(3);
    assert!(
        early
            .stderr
            .contains("waiting to remove taint node.kubernetes.io/out-of-service: 1 pod terminating on it (default/held)"),
        "{early:?}"
    );
    assert!(
        early
            .stderr
            .contains("error: unable to uncordon node \"n1\""),
        "{early:?}"
    );
    assert!(taints(&c, "n1").contains(&oos), "{early:?}");
    assert_eq!(
        c.get(Resource::Nodes, "", "n1").unwrap()["spec"]["unschedulable"],
        true,
        "{early:?}"
    );
    // Waiting: once the pod is gone, the taint comes off.
    let mut run = c.maintain_watched(&["uncordon", "n1"]);
    run.wait_for_stderr("default/held", Duration::from_secs(20));
    assert!(taints(&c, "n1").contains(&oos));
    c.kubectl(&[
        "patch",
        "pod",
        "held",
        "--type=merge",
        "-p",
        "{\"metadata\":{\"finalizers\":null}}",
    ])
    .success();
    let back = run.finish(Duration::from_secs(30));
    back.success();
    assert!(!taints(&c, "n1").contains(&oos), "{back:?}");
    assert!(back.stdout.contains("node/n1 uncordoned"), "{back:?}");
}

/// At a terminal, `--node-shut-down` asks for the node's name even with
/// `--yes`, in a question fitted to the terminal (a word the terminal
/// split would not copy); the name typed is the proof.
#[test]
fn the_typed_proof_is_asked_in_lines_that_fit_the_terminal() {
    let c = dead_n1();
    let t = crate::terminal::Terminal::start(
        &c,
        60,
        "drain n1 --force --node-shut-down --yes --timeout 20s",
    );
    t.wait_for("Type its name", Duration::from_secs(20));
    let written = t.written_lines();
    for row in written.lines() {
        assert!(
            row.chars().count() <= 60,
            "{row:?} is wider than 60:\n{written}"
        );
    }
    assert!(
        written.contains("node/n1 will be taken out of service"),
        "{written}"
    );
    t.keys(&["n1", "Enter"]);
    t.wait_for("EXIT=0", Duration::from_secs(30));
    assert!(taints(&c, "n1").contains(&"node.kubernetes.io/out-of-service".to_string()));
}

/// Kubernetes 1.37: a graceful shutdown that begins while the drain is at
/// work on the node (one pod terminating on its long grace period, one
/// held back by its budget) is said at once, and the pod the shutdown
/// failed is not left blocked by its budget: the eviction API lets a
/// failed pod go whatever its budget says (kube-apiserver
/// pkg/registry/core/pod/storage/eviction.go, canIgnorePDB).
#[test]
fn a_graceful_shutdown_among_evictions_is_said_and_frees_the_budgets_pod() {
    let c = Cluster::start_with(
        &Scenario::new()
            .node("n1")
            .node("n2")
            .deployment_with("solo", 1, |d| {
                template(d)["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
            })
            .pdb("solo", "minAvailable: 1")
            .pod("apps", "slow", "n1", |p| {
                crate::scenario::owned_by_a_gone_replicaset(p, 30.0);
            })
            .yaml(),
        37,
        |config| {
            config.node_monitor_grace_period_seconds = Some(0.3);
        },
    );
    c.wait_settled();
    c.wait_for("solo's budget counting it", Duration::from_secs(10), |c| {
        c.get(Resource::PodDisruptionBudgets, "apps", "solo")
            .is_some_and(|b| b["status"]["currentHealthy"] == 1)
    });
    let mut run = c.maintain_watched(&["drain", "n1", "--yes", "--timeout=20s"]);
    run.wait_for_stderr("disruption budget", Duration::from_secs(15));
    c.kubectl(&[
        "annotate",
        "node",
        "n1",
        "sandbox.kubectl-maintain.io/graceful-shutdown-seconds=2",
    ])
    .success();
    run.wait_for_stderr(
        "node/n1 is shutting down (GracefulNodeShutdownInProgress)",
        Duration::from_secs(5),
    );
    let end = run.finish(Duration::from_secs(30));
    assert!(!end.stderr.contains("timed out"), "{end:?}");
    assert_eq!(end.code, 0, "{end:?}");
}
