//! The maintenance around a drain: uncordon that restores, resume after
//! SIGKILL, SIGINT, guard rails, Events on the nodes.

use std::time::Duration;

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use kubectl_maintain::policy::maintenance;

use crate::harness::{Asked, Cluster};
use crate::scenario::Scenario;

const WORKERS: &str = "
apiVersion: v1
kind: Node
metadata: {name: w1}
spec:
  taints: [{key: dedicated, value: db, effect: PreferNoSchedule}]
---
apiVersion: v1
kind: Node
metadata: {name: w2}
spec: {unschedulable: true}
---
apiVersion: v1
kind: Node
metadata: {name: w3}
";

fn spec_of(c: &Cluster, node: &str) -> serde_json::Value {
    c.get(Resource::Nodes, "", node).unwrap()["spec"].clone()
}

/// The node's `status.conditions` of these types, as (type, status), from
/// the real kubectl's `get node -o yaml`.
fn lifecycle_conditions(c: &Cluster, node: &str) -> (serde_json::Value, Vec<(String, String)>) {
    let out = c.kubectl(&["get", "node", node, "-o", "yaml"]);
    out.success();
    let node: serde_json::Value = serde_saphyr::from_str(&out.stdout).expect("a node in YAML");
    let conditions = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("type"), s("status"))
        })
        .collect();
    (node, conditions)
}

#[test]
fn node_conditions_and_the_load_balancer_label_come_and_go() {
    let c = Cluster::start(WORKERS, 33);
    c.wait_idle();
    let (before, _) = lifecycle_conditions(&c, "w1");
    let out = c.maintain(&["drain", "w1", "--exclude-from-load-balancers"]);
    out.success();
    let (during, conditions) = lifecycle_conditions(&c, "w1");
    let lb = "node.kubernetes.io/exclude-from-external-load-balancers";
    assert_eq!(during["metadata"]["labels"][lb], "true", "{during}");
    for want in [
        ("Ready", "True"),
        ("DrainInProgress", "False"),
        ("Drained", "True"),
    ] {
        let want = (want.0.to_string(), want.1.to_string());
        assert!(conditions.contains(&want), "{want:?} in {conditions:?}");
    }
    // Only through nodes/status, as a strategic merge of those two.
    let status_writes: Vec<_> = c
        .writes()
        .into_iter()
        .filter(|w| w.path.ends_with("/nodes/w1/status"))
        .collect();
    assert_eq!(status_writes.len(), 2, "{status_writes:?}");
    c.maintain(&["uncordon", "w1"]).success();
    let (after, conditions) = lifecycle_conditions(&c, "w1");
    assert_eq!(after["metadata"]["labels"], before["metadata"]["labels"]);
    assert_eq!(after["spec"], before["spec"]);
    for want in [
        ("Ready", "True"),
        ("DrainInProgress", "False"),
        ("Drained", "False"),
    ] {
        let want = (want.0.to_string(), want.1.to_string());
        assert!(conditions.contains(&want), "{want:?} in {conditions:?}");
    }
    // Turned off: nothing written to nodes/status.
    let out = c.maintain(&["drain", "w3", "--node-conditions=false"]);
    out.success();
    assert!(
        c.writes()
            .iter()
            .all(|w| !w.path.ends_with("/nodes/w3/status")),
        "{:?}",
        c.writes()
    );
}

#[test]
fn uncordon_restores_the_exact_earlier_spec() {
    let c = Cluster::start(WORKERS, 33);
    // The node lifecycle controller's taints are part of the spec too.
    c.wait_idle();
    let before_w1 = spec_of(&c, "w1");
    let before_w2 = spec_of(&c, "w2");
    let out = c.maintain(&[
        "drain",
        "w1",
        "w2",
        "--taint",
        "piraeus.io/evacuate=true:NoSchedule",
        "--taint",
        "maintenance:NoExecute",
        "--reason",
        "firmware",
    ]);
    out.success();
    for n in ["w1", "w2"] {
        let spec = spec_of(&c, n);
        assert_eq!(spec["unschedulable"], true);
        let taints: Vec<&str> = spec["taints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["key"].as_str().unwrap())
            .collect();
        assert!(
            taints.contains(&"piraeus.io/evacuate") && taints.contains(&"maintenance"),
            "{taints:?}"
        );
        let node: k8s_openapi::api::core::v1::Node =
            serde_json::from_value((*c.get(Resource::Nodes, "", n).unwrap()).clone()).unwrap();
        let record = maintenance::record_of(&node).expect("record");
        assert_eq!(record.reason.as_deref(), Some("firmware"));
        assert_eq!(record.was_unschedulable, n == "w2");
    }
    let status = c.maintain(&["status", "-o", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    let nodes: Vec<&str> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert_eq!(nodes, ["w1", "w2"], "{status:?}");
    assert!(
        doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["state"] == "drained"),
        "{status:?}"
    );

    let out = c.maintain(&["uncordon", "w1", "w2"]);
    out.success();
    assert!(
        out.stdout
            .contains("node/w2 left cordoned, as it was before the maintenance"),
        "{out:?}"
    );
    // Once the node lifecycle controller followed the uncordon (it takes
    // the unschedulable taint away, as a real one does, shortly after).
    c.wait_idle();
    assert_eq!(
        spec_of(&c, "w1"),
        before_w1,
        "w1 is as it was: schedulable, its own taint kept"
    );
    assert_eq!(
        spec_of(&c, "w2"),
        before_w2,
        "w2 is as it was: still cordoned, its unschedulable taint only"
    );
    let status = c.maintain(&["status", "-o", "json"]);
    assert!(status.stdout.contains("\"nodes\": []"), "{status:?}");
}

/// n1 and n2 (cordoned) from the drain tests, then the apps.
fn apps() -> String {
    crate::drain::two_nodes().raw(APPS).yaml()
}

const APPS: &str = "
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {sandbox.kubectl-maintain.io/ready-seconds: \"0.6\", sandbox.kubectl-maintain.io/shutdown-seconds: \"0.8\"}
    spec:
      containers: [{name: c, image: x}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: apps}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: logs, namespace: apps}
spec:
  replicas: 1
  selector: {matchLabels: {app: logs}}
  template:
    metadata:
      labels: {app: logs}
      annotations: {sandbox.kubectl-maintain.io/ready-seconds: \"0.2\"}
    spec:
      containers: [{name: c, image: x}]
";

const SKIP_LOGS: &str = "apiVersion: kubectl-maintain.io/v1alpha1
kind: DrainPlan
spec:
  rules:
  - name: keep-logs
    action: skip
    podSelector: {matchLabels: {app: logs}}
";

fn apps_on_n1() -> Cluster {
    let c = Cluster::start(&apps(), 33);
    c.wait_settled();
    assert_eq!(c.kubectl(&["uncordon", "n2"]).code, 0);
    c
}

fn web_on(c: &Cluster, node: &str) -> usize {
    c.pods_on(node)
        .iter()
        .filter(|p| p.starts_with("apps/web-"))
        .count()
}

#[test]
fn a_drain_killed_halfway_resumes_to_the_same_end() {
    let c = apps_on_n1();
    let plan = c.dir.path().join("plan.yaml");
    std::fs::write(&plan, SKIP_LOGS).unwrap();
    let logs_pod = c
        .pods_on("n1")
        .into_iter()
        .find(|p| p.starts_with("apps/logs-"))
        .unwrap();
    let child = c.maintain_spawn(&[
        "drain",
        "n1",
        "--plan",
        plan.to_str().unwrap(),
        "--reason",
        "resume test",
    ]);
    c.wait_for("the first eviction", Duration::from_secs(10), |c| {
        !c.evictions().is_empty()
    });
    let pid = child.id();
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    let killed = Cluster::finish(child, Duration::from_secs(5));
    assert_ne!(killed.code, 0, "killed");
    assert!(web_on(&c, "n1") > 0, "killed before the drain finished");

    let out = c.maintain(&["drain", "n1", "--plan", plan.to_str().unwrap()]);
    out.success();
    assert_eq!(web_on(&c, "n1"), 0);
    assert!(c.pods_on("n1").contains(&logs_pod), "the skipped pod stays");
    let evicted: Vec<String> = c.evictions().into_iter().map(|(p, _)| p).collect();
    assert!(
        evicted.iter().all(|p| p.starts_with("apps/web-")),
        "nothing the plan leaves alone was evicted: {evicted:?}"
    );
    let unique: std::collections::BTreeSet<&String> = evicted.iter().collect();
    assert_eq!(
        unique.len(),
        evicted.len(),
        "no pod was evicted twice: {evicted:?}"
    );
    // The record is the first run's: the node was schedulable before the maintenance.
    let node: k8s_openapi::api::core::v1::Node =
        serde_json::from_value((*c.get(Resource::Nodes, "", "n1").unwrap()).clone()).unwrap();
    let record = maintenance::record_of(&node).unwrap();
    assert!(!record.was_unschedulable);
    assert_eq!(record.reason.as_deref(), Some("resume test"));
    // kubectl's line, where kubectl prints it.
    assert!(out.stdout.contains("node/n1 already cordoned"), "{out:?}");
}

#[test]
fn sigint_stops_evicting_reports_and_exits_130() {
    a_signal_stops_evicting_and_reports("-INT", 130);
}

/// A cancelled CI job sends SIGTERM: the same stop, and the shell's 143.
#[test]
fn sigterm_stops_evicting_reports_and_exits_143() {
    a_signal_stops_evicting_and_reports("-TERM", 143);
}

fn a_signal_stops_evicting_and_reports(signal: &str, code: i32) {
    let scenario = apps().replace("maxUnavailable: 1", "minAvailable: 3");
    let c = Cluster::start(&scenario, 33);
    c.wait_settled();
    assert_eq!(c.kubectl(&["uncordon", "n2"]).code, 0);
    let child = c.maintain_spawn(&["drain", "n1", "--force"]);
    c.wait_for("a refused eviction", Duration::from_secs(10), |c| {
        c.requests()
            .iter()
            .any(|r| r.path.ends_with("/eviction") && r.status == 429)
    });
    // The drain has read the refusal once it follows the refusing budget
    // (the watch's first list); interrupted before that, the eviction would
    // still be in flight.
    c.wait_for(
        "the refusing budget followed",
        Duration::from_secs(10),
        |c| {
            c.requests().iter().any(|r| {
                r.user_agent.starts_with("kubectl-maintain/")
                    && r.method == "GET"
                    && r.path.ends_with("/poddisruptionbudgets")
                    && r.query.contains("metadata.name")
            })
        },
    );
    let _ = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status();
    let out = Cluster::finish(child, Duration::from_secs(10));
    out.code(code);
    // Piped: kubectl's lines on stdout, the report after them on stderr.
    assert!(out.stderr.contains("interrupted"), "the report: {out:?}");
    assert!(
        out.stderr
            .contains("blocked by PodDisruptionBudget apps/web"),
        "{out:?}"
    );
    assert_eq!(spec_of(&c, "n1")["unschedulable"], true, "left cordoned");
    assert_eq!(web_on(&c, "n1"), 3);
}

/// `--max-unavailable` means in `drain` what it means in `roll`: a node
/// is held while too many nodes are out (saying so and until what), each
/// node cordoned at its turn; a hold only this run's nodes cause cannot
/// end, and the nodes left are reported not started, never cordoned.
#[test]
fn max_unavailable_holds_the_next_node_and_stops_when_only_its_own_are_out() {
    let cluster = "
apiVersion: v1
kind: Node
metadata: {name: cp1, labels: {node-role.kubernetes.io/control-plane: \"\"}}
spec: {unschedulable: true}
---
apiVersion: v1
kind: Node
metadata: {name: w1}
---
apiVersion: v1
kind: Node
metadata: {name: w2}
---
apiVersion: v1
kind: Node
metadata: {name: w3}
---
apiVersion: v1
kind: Node
metadata: {name: w4}
";
    let c = Cluster::start(cluster, 33);
    let unschedulable =
        |n: &str| c.get(Resource::Nodes, "", n).unwrap()["spec"]["unschedulable"] == true;
    // cp1 is cordoned already: one of five out, and 1 allowed.
    let mut run = c.maintain_watched(&["drain", "w1", "--max-unavailable", "1", "-o", "json"]);
    run.wait_for_stderr(
        "1 of 5 nodes is unavailable; --max-unavailable allows 1: waiting for nodes to be Ready and uncordoned",
        Duration::from_secs(20),
    );
    run.wait_for_stderr(
        "each node is cordoned when its turn comes",
        Duration::from_secs(5),
    );
    assert!(!unschedulable("w1"), "held, not cordoned");
    c.maintain(&["uncordon", "cp1"]).success();
    run.finish(Duration::from_secs(60)).success();
    assert!(unschedulable("w1"));
    c.maintain(&["uncordon", "w1"]).success();
    // Two allowed; w1 and w2 drained stay out, so w3 never can go.
    let out = c.maintain(&[
        "drain",
        "w1",
        "w2",
        "w3",
        "--max-unavailable",
        "2",
        "-o",
        "json",
    ]);
    out.code(3);
    let report = out.report();
    assert_eq!(report.node("w1").status, "drained", "{out:?}");
    assert_eq!(report.node("w2").status, "drained", "{out:?}");
    let w3 = report.node("w3");
    assert_eq!(w3.status, "notStarted", "{out:?}");
    assert_eq!(
        w3.message.as_deref(),
        Some(
            "not started: node/w3 cannot be taken out: 2 of 5 nodes are unavailable (2 of them this run's); --max-unavailable allows 2; the node was not cordoned"
        )
    );
    assert!(!unschedulable("w3"));
    assert!(
        out.stderr
            .contains("warning: drain stopped: node/w3 cannot be taken out"),
        "{out:?}"
    );
}

/// kubectl drain refuses neither the last schedulable worker nor a control
/// plane (the kubeadm upgrade procedure drains the only one); neither do we.
/// Leaving no schedulable node is said before anything changes, naming the
/// pods that will stay Pending.
#[test]
fn what_kubectl_drains_is_not_refused() {
    let scenario = Scenario::new()
        .labelled_node("cp", &[("node-role.kubernetes.io/control-plane", "")])
        .node("w1")
        .deployment("web", 2)
        .yaml();
    let theirs = Cluster::start(&scenario, 33);
    let ours = Cluster::start(&scenario, 33);
    for c in [&theirs, &ours] {
        c.wait_settled();
    }
    theirs
        .kubectl(&["drain", "cp", "--ignore-daemonsets"])
        .success();
    ours.maintain(&["drain", "cp", "--ignore-daemonsets"])
        .success();

    // Now w1 is the last schedulable node.
    theirs
        .kubectl(&["drain", "w1", "--ignore-daemonsets"])
        .success();
    let out = ours.maintain(&["drain", "w1", "--ignore-daemonsets"]);
    out.success();
    assert!(
        out.stderr
            .contains("warning: no schedulable node would be left")
            && out
                .stderr
                .contains("the 2 pods this drain evicts will stay Pending")
            && out.stderr.contains("apps/web-"),
        "{out:?}"
    );
    for c in [&theirs, &ours] {
        c.wait_for("the replacements Pending", Duration::from_secs(10), |c| {
            let web: Vec<_> = c
                .pods()
                .into_iter()
                .filter(|p| p["metadata"]["namespace"] == "apps")
                .collect();
            web.len() == 2 && web.iter().all(|p| pods::node_name(p).is_none())
        });
    }
}

#[test]
fn events_follow_the_maintenance() {
    let c = apps_on_n1();
    // The logs pod has no shutdown knob: it would use its whole 30 s grace.
    let out = c.maintain(&[
        "drain",
        "n1",
        "--reason",
        "kernel upgrade",
        "--grace-period=1",
    ]);
    out.success();
    assert_eq!(c.maintain(&["uncordon", "n1"]).code, 0);
    let events = c.kubectl(&[
        "get",
        "events",
        "-n",
        "default",
        "--field-selector",
        "involvedObject.name=n1",
    ]);
    events.success();
    for want in [
        "MaintenanceStarted   node/n1   Cordoned by kubectl maintain for maintenance: kernel upgrade",
        "DrainWaveStarted     node/n1   Wave user started",
        "Drained              node/n1",
        "MaintenanceEnded     node/n1",
    ] {
        let words: Vec<&str> = want.split_whitespace().collect();
        assert!(
            events
                .stdout
                .lines()
                .any(|l| words.iter().all(|w| l.contains(w))),
            "missing {want:?} in\n{}",
            events.stdout
        );
    }
    // A blocked pod is a Warning naming the pod and the budget.
    let scenario = apps().replace("maxUnavailable: 1", "minAvailable: 3");
    let c = Cluster::start(&scenario, 33);
    c.wait_settled();
    assert_eq!(c.kubectl(&["uncordon", "n2"]).code, 0);
    assert_eq!(c.maintain(&["drain", "n1", "--timeout", "2s"]).code, 3);
    let events = c.kubectl(&["get", "events", "-n", "default"]);
    assert!(
        events
            .stdout
            .lines()
            .any(|l| l.contains("Warning") && l.contains("DrainBlocked") && l.contains("PDB web")),
        "{}",
        events.stdout
    );
}

/// A plain `kubectl uncordon` leaves our record behind: `status` says it is
/// stale, and the next drain replaces it.
#[test]
fn a_record_left_by_kubectl_uncordon_is_stale() {
    let c = apps_on_n1();
    // The logs pod has no shutdown knob: it would use its whole 30 s grace.
    c.maintain(&["drain", "n1", "--reason", "first", "--grace-period=1"])
        .success();
    c.kubectl(&["uncordon", "n1"]).success();
    let status = c.maintain(&["status", "-o", "json"]);
    status.success();
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(doc["nodes"][0]["stale"], true, "{status:?}");
    c.maintain(&["drain", "n1", "--reason", "second"]).success();
    let node: k8s_openapi::api::core::v1::Node =
        serde_json::from_value((*c.get(Resource::Nodes, "", "n1").unwrap()).clone()).unwrap();
    let record = maintenance::record_of(&node).unwrap();
    assert_eq!(record.reason.as_deref(), Some("second"));
    assert!(!maintenance::is_stale(&node));
}

/// `kubectl uncordon` then `kubectl cordon` during our maintenance: the
/// node's managedFields say a person cordoned it after us, so our uncordon
/// removes its record but leaves the node cordoned, and says so (exit 3).
#[test]
fn uncordon_never_undoes_a_cordon_made_after_ours() {
    let c = apps_on_n1();
    c.maintain(&["drain", "n1", "--grace-period=1"]).success();
    c.kubectl(&["uncordon", "n1"]).success();
    c.kubectl(&["cordon", "n1"]).success();
    let out = c.maintain(&["uncordon", "n1"]);
    out.code(3);
    assert!(
        out.stdout.contains("node/n1 left cordoned: kubectl")
            && out
                .stdout
                .contains("kubectl uncordon n1 makes it schedulable"),
        "{out:?}"
    );
    let node: k8s_openapi::api::core::v1::Node =
        serde_json::from_value((*c.get(Resource::Nodes, "", "n1").unwrap()).clone()).unwrap();
    assert!(maintenance::unschedulable(&node));
    assert!(
        maintenance::record_of(&node).is_none(),
        "our record is gone"
    );

    // Without a later cordon, our uncordon is the whole undo.
    c.kubectl(&["uncordon", "n1"]).success();
    c.maintain(&["drain", "n1", "--grace-period=1"]).success();
    c.maintain(&["uncordon", "n1"]).success();
    let node = c.get(Resource::Nodes, "", "n1").unwrap();
    assert_ne!(node["spec"]["unschedulable"], true);
}

/// `uncordon --dry-run`, client and server, says what kubectl uncordon says
/// and changes nothing (the server's check is a `dryRun=All` patch).
#[test]
fn uncordon_dry_run_says_what_kubectl_says_and_changes_nothing() {
    let c = crate::drain::two_nodes().start(33);
    c.kubectl(&["cordon", "n1"]).success();
    c.kubectl(&["uncordon", "n2"]).success();
    let mark = c.mark();
    for mode in ["--dry-run", "--dry-run=client", "--dry-run=server"] {
        let theirs = c.kubectl(&["uncordon", "n1", "n2", mode]);
        let ours = c.maintain(&["uncordon", "n1", "n2", mode]);
        theirs.success();
        ours.success();
        assert_eq!(ours.stdout, theirs.stdout, "{mode}: {ours:?}");
    }
    c.assert_asked(mark, Asked::NoWrite, "uncordon's dry runs");
    assert_eq!(spec_of(&c, "n1")["unschedulable"], true, "still cordoned");
}

/// A second terminal answers "why is it stuck" mid-drain: `status NODE`
/// says the node is draining and names each pod left with its cause (#54).
#[test]
fn status_of_a_node_names_each_pod_left_and_why_while_it_drains() {
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("solo", 1, |d| {
            crate::scenario::template(d)["spec"]["nodeSelector"] =
                serde_json::json!({"kubernetes.io/hostname": "n1"});
        })
        .pdb("solo", "minAvailable: 1")
        .start(33);
    c.wait_settled();
    let mut run = c.maintain_watched(&["drain", "n1", "--timeout", "60s"]);
    run.wait_for_stderr("solo", Duration::from_secs(20));
    let status = c.maintain(&["status", "n1"]);
    status.success();
    let row = status.stdout.lines().nth(1).unwrap_or_default();
    assert!(
        row.split_whitespace().nth(1) == Some("draining"),
        "{status:?}"
    );
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l.starts_with("node/n1 pod/apps/solo-")
                && l.ends_with(
                    "PDB solo allows no disruption now (1 healthy, 1 needed of 1 expected)"
                )),
        "{status:?}"
    );
    let _ = run.finish(Duration::from_millis(200));
}

/// The node's metadata as the real kubectl reads it.
fn metadata_of(c: &Cluster, node: &str) -> serde_json::Value {
    let out = c.kubectl(&["get", "node", node, "-o", "json"]);
    out.success();
    serde_json::from_str::<serde_json::Value>(&out.stdout).expect("a node in JSON")["metadata"]
        .clone()
}

const MARKED: &str = "
apiVersion: v1
kind: Node
metadata:
  name: w1
  labels: {bgp: 'on'}
  annotations: {cluster-autoscaler.kubernetes.io/scale-down-disabled: 'false'}
---
apiVersion: v1
kind: Node
metadata: {name: w2}
";

#[test]
fn labels_and_autoscaler_annotations_during_a_drain_are_put_back_exactly() {
    let c = Cluster::start(MARKED, 33);
    c.wait_idle();
    let before = metadata_of(&c, "w1");
    let out = c.maintain(&[
        "drain",
        "w1",
        "--label-during",
        "bgp=off",
        "--label-during",
        "example.com/maintenance=now",
        "--protect-from-autoscalers",
    ]);
    out.success();
    let during = metadata_of(&c, "w1");
    assert_eq!(during["labels"]["bgp"], "off", "{during}");
    assert_eq!(
        during["labels"]["example.com/maintenance"], "now",
        "{during}"
    );
    for key in [
        maintenance::SCALE_DOWN_DISABLED,
        maintenance::DO_NOT_DISRUPT,
    ] {
        assert_eq!(during["annotations"][key], "true", "{key}: {during}");
    }
    let out = c.maintain(&["uncordon", "w1"]);
    out.success();
    assert!(
        out.stdout.contains("restored label bgp to \"on\""),
        "{out:?}"
    );
    let after = metadata_of(&c, "w1");
    assert_eq!(after["labels"], before["labels"]);
    assert_eq!(after["annotations"], before["annotations"]);
    // A drain leaves the autoscalers free by default: the node may be on
    // its way out.
    c.maintain(&["drain", "w2"]).success();
    let w2 = metadata_of(&c, "w2");
    for key in [
        maintenance::SCALE_DOWN_DISABLED,
        maintenance::DO_NOT_DISRUPT,
    ] {
        assert!(w2["annotations"].get(key).is_none(), "{key}: {w2}");
    }
    // A bad label is refused before any request.
    let out = c.maintain(&["drain", "w2", "--label-during", "no value"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--label-during"), "{out:?}");
}

#[test]
fn a_roll_keeps_autoscalers_off_each_node_until_it_is_back() {
    let c = crate::pool::four_nodes().start(33);
    c.wait_settled();
    let before = metadata_of(&c, "r1");
    let seen = c.dir.path().join("during.json");
    let exec = format!(
        "{} get node \"$NODE\" -o json > {}",
        crate::harness::kubectl_path().display(),
        seen.display()
    );
    let out = c.maintain(&[
        "roll",
        "r1",
        "--ignore-daemonsets",
        "--exec",
        &exec,
        "--label-during",
        "example.com/bgp=off",
        "-o",
        "json",
    ]);
    out.success();
    let during: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).expect("the action ran")).unwrap();
    let during = &during["metadata"];
    assert_eq!(during["labels"]["example.com/bgp"], "off", "{during}");
    for key in [
        maintenance::SCALE_DOWN_DISABLED,
        maintenance::DO_NOT_DISRUPT,
    ] {
        assert_eq!(during["annotations"][key], "true", "{key}: {during}");
    }
    let after = metadata_of(&c, "r1");
    assert_eq!(after["labels"], before["labels"]);
    for key in [
        maintenance::SCALE_DOWN_DISABLED,
        maintenance::DO_NOT_DISRUPT,
    ] {
        assert!(after["annotations"].get(key).is_none(), "{key}: {after}");
    }
}

/// A cluster-autoscaler that deletes a node a second after it is emptied
/// (the sandbox's, as cluster-autoscaler's scale-down decides): a node
/// drained with `--protect-from-autoscalers` is kept while it is under
/// maintenance and let go once `uncordon` restores it; one drained without
/// is taken; a roll keeps the node it has through a reboot longer than that.
#[test]
fn an_autoscaler_takes_an_emptied_node_unless_it_is_under_maintenance() {
    use crate::scenario::owned_by_a_gone_replicaset;
    let mut scenario = Scenario::new();
    for node in ["kept", "taken", "rolled", "spare"] {
        scenario = scenario
            .node(node)
            .pod("apps", &format!("on-{node}"), node, |p| {
                owned_by_a_gone_replicaset(p, 0.1);
            });
    }
    let c = Cluster::start_with(&scenario.yaml(), 33, |cfg| {
        cfg.cluster_autoscaler = Some(kube_sandbox::ClusterAutoscaler {
            scan_interval_seconds: 0.2,
            scale_down_unneeded_seconds: 1.0,
            scale_down_unready_seconds: 1.0,
        });
    });
    c.wait_settled();
    let exists = |c: &Cluster, node: &str| c.get(Resource::Nodes, "", node).is_some();
    c.maintain(&["drain", "kept", "--protect-from-autoscalers"])
        .success();
    c.maintain(&["drain", "taken"]).success();
    c.wait_for(
        "the autoscaler to take the node left to it",
        Duration::from_secs(10),
        |c| !exists(c, "taken"),
    );
    assert!(
        exists(&c, "kept"),
        "emptied first, kept while under maintenance"
    );
    c.maintain(&["uncordon", "kept"]).success();
    c.wait_for(
        "the autoscaler to take it once restored",
        Duration::from_secs(10),
        |c| !exists(c, "kept"),
    );
    // The node is looked up after a reboot three times the autoscaler's
    // wait: the roll ends only if it is still there.
    let exec = format!(
        "sleep 3; {} get node \"$NODE\"",
        crate::harness::kubectl_path().display()
    );
    let out = c.maintain(&["roll", "rolled", "--exec", &exec]);
    out.success();
}
