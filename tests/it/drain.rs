//! `kubectl maintain drain` and `plan` through the real binary against the
//! sandbox: waves, PDBs, rules, kubectl's filters, dry runs, bad input, and
//! the same end state as kubectl drain.

use std::collections::BTreeSet;
use std::time::Duration;

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;

use serde_json::json;

use crate::harness::{Asked, Cluster};
use crate::scenario::{self, Scenario, template};

/// n1 takes the scenario's pods; the spare n2 starts cordoned, and tests
/// uncordon it before draining n1.
pub(crate) fn two_nodes() -> Scenario {
    Scenario::new().node("n1").cordoned_node("n2")
}

/// n1 running `replicas` web pods behind a PDB with `rule`, n2 open.
pub(crate) fn web_on_n1(replicas: u32, rule: &str) -> Cluster {
    let c = two_nodes()
        .deployment("web", replicas)
        .pdb("web", rule)
        .start(33);
    settle_on_n1(&c);
    c
}

fn settle_on_n1(c: &Cluster) {
    c.wait_settled();
    // DaemonSets tolerate the cordon: their pods are on n2 as well.
    let not_daemons = c
        .pods()
        .into_iter()
        .filter(|p| pods::controller_of(p).is_none_or(|o| o.kind != "DaemonSet"));
    assert!(
        not_daemons
            .into_iter()
            .all(|p| pods::node_name(&p) == Some("n1")),
        "every pod starts on n1"
    );
    let out = c.kubectl(&["uncordon", "n2"]);
    out.success();
}

fn app_of(key: &str) -> String {
    // apps/web-xxxxxxxxxx-yyyyy -> web
    let name = key.split('/').nth(1).unwrap_or_default();
    name.split('-').next().unwrap_or_default().to_string()
}

#[test]
fn waves_run_in_priority_order() {
    let priority = |class: &'static str| {
        move |d: &mut serde_json::Value| template(d)["spec"]["priorityClassName"] = json!(class)
    };
    let c = two_nodes()
        .deployment("user", 2)
        .deployment_with("critical", 1, priority("system-cluster-critical"))
        .deployment_with("nodecritical", 1, priority("system-node-critical"))
        .start(33);
    settle_on_n1(&c);
    let out = c.maintain(&["drain", "n1", "-o", "json"]);
    out.success();
    let report = out.report();
    let waves: Vec<&str> = report
        .node("n1")
        .waves
        .iter()
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(waves, ["user", "cluster-critical", "node-critical"]);
    assert_eq!(report.waves, ["user", "cluster-critical", "node-critical"]);

    let gone = c.deletion_times();
    let evictions = c.evictions();
    assert_eq!(evictions.len(), 4, "{evictions:?}");
    let order = ["user", "critical", "nodecritical"];
    let rank = |key: &str| {
        order
            .iter()
            .position(|a| *a == app_of(key))
            .expect("known app")
    };
    for (pod, at) in &evictions {
        // Every pod of an earlier wave was gone before this eviction was sent.
        for (earlier, _) in evictions.iter().filter(|(p, _)| rank(p) < rank(pod)) {
            let gone_at = gone
                .get(earlier)
                .unwrap_or_else(|| panic!("{earlier} was deleted"));
            assert!(
                gone_at <= at,
                "{pod} evicted at {at} before {earlier} was gone at {gone_at}"
            );
        }
    }
}

#[test]
fn pdb_paced_drain_follows_readiness_not_a_timer() {
    let c = web_on_n1(3, "maxUnavailable: 1");
    let out = c.maintain(&["drain", "n1"]);
    out.success();
    let evictions = c.evictions();
    assert_eq!(
        evictions.len(),
        3,
        "one successful eviction per pod: {evictions:?}"
    );
    c.wait_settled();
    let ready_on_n2: Vec<u128> = c
        .ready_times()
        .into_iter()
        .filter(|(_, n, _)| n == "n2")
        .map(|(_, _, t)| t)
        .collect();
    assert_eq!(
        ready_on_n2.len(),
        3,
        "three replacements became Ready on n2"
    );
    // One at a time: the budget allows one disruption, so each eviction
    // after the first follows a replacement becoming Ready. (How promptly is
    // a benchmark's business: `cargo bench --bench drain`.)
    for w in evictions.windows(2) {
        let (prev, next) = (w[0].1, w[1].1);
        assert!(
            ready_on_n2.iter().any(|t| *t >= prev && *t <= next),
            "a replacement became Ready between evictions at {prev} and {next}"
        );
    }
    // Each node's pods are listed once; the watch that follows them asks
    // for metadata only (the drain waits for no pod to complete). A watch
    // is logged when its stream ends, after the drain closed it.
    let node_watch = |r: &kube_sandbox::request_log::Entry| {
        r.path == "/api/v1/pods"
            && r.query.contains("spec.nodeName")
            && r.query.contains("watch=true")
    };
    c.wait_for(
        "the pod watch in the request log",
        Duration::from_secs(10),
        |c| c.requests().iter().any(node_watch),
    );
    let pod_requests: Vec<_> = c
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/pods" && r.query.contains("spec.nodeName"))
        .collect();
    let lists = pod_requests
        .iter()
        .filter(|r| !r.query.contains("watch"))
        .count();
    assert_eq!(lists, 1, "{pod_requests:#?}");
    let watches: Vec<_> = pod_requests.iter().filter(|r| node_watch(r)).collect();
    // One watch for the whole drain: answers arriving while it starts
    // must not cancel and restart it.
    assert_eq!(watches.len(), 1, "{watches:#?}");
    assert!(
        watches[0].accept.contains("as=PartialObjectMetadata"),
        "{watches:#?}"
    );
    // Every request names the tool and its version, as kubectl's do.
    let unnamed: Vec<_> = c
        .requests()
        .into_iter()
        .filter(|r| !r.user_agent.starts_with("kubectl-maintain/v"))
        .filter(|r| !r.user_agent.starts_with("kubectl/"))
        // kubectl on our machines is a dispatcher that asks /version first.
        .filter(|r| !r.user_agent.starts_with("kubectl-dispatcher/"))
        .collect();
    assert!(unnamed.is_empty(), "{unnamed:#?}");
    // The refused attempts stay few: retries follow the budget's watch, not a timer.
    let refused = c
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/eviction") && r.status == 429)
        .count();
    assert!(refused <= 6, "{refused} refused evictions");
}

#[test]
fn skip_and_wait_completed_rules_hold() {
    let scenario = two_nodes()
        .deployment("web", 1)
        .deployment("logging", 1)
        .deployment("cache", 1)
        .pod("apps", "pinned", "n1", |p| {
            p["metadata"]["labels"] = json!({"cluster.x-k8s.io/drain": "skip"});
        })
        .pod("apps", "report", "n1", |p| {
            p["metadata"]["labels"] = json!({"app": "report"});
            p["metadata"]["annotations"]["sandbox.kubectl-maintain.io/ready-seconds"] =
                json!("0.1");
            scenario::completes_after(p, 1.5);
        });
    let plan = "apiVersion: kubectl-maintain.io/v1alpha1
kind: DrainPlan
spec:
  rules:
  - name: keep-logging
    action: skip
    podSelector: {matchLabels: {app: logging}}
  - name: let-reports-finish
    action: waitCompleted
    podSelector: {matchLabels: {app: report}}
";
    let c = scenario.start(33);
    c.wait_for("report running", Duration::from_secs(10), |c| {
        c.get(Resource::Pods, "apps", "report")
            .is_some_and(|p| pods::is_ready(&p))
    });
    settle_on_n1(&c);
    // The cache pod is marked do-not-disrupt after it started: wait, never evict.
    let cache = c
        .pods_on("n1")
        .into_iter()
        .find(|p| app_of(p) == "cache")
        .expect("cache pod");
    let out = c.kubectl(&[
        "annotate",
        "pod",
        "-n",
        "apps",
        cache.split('/').nth(1).unwrap(),
        "karpenter.sh/do-not-disrupt=true",
    ]);
    out.success();
    let plan_path = c.dir.path().join("plan.yaml");
    std::fs::write(&plan_path, plan).unwrap();

    // do-not-disrupt waits forever; a short timeout shows it held and what it waits for.
    let out = c.maintain(&[
        "drain",
        "n1",
        "--force",
        "--plan",
        plan_path.to_str().unwrap(),
        "--timeout",
        "4s",
        "-o",
        "json",
    ]);
    out.code(3);
    let report = out.report();
    let result = |name: &str| {
        report.nodes[0]
            .pods
            .iter()
            .find(|p| p.pod.contains(name))
            .unwrap_or_else(|| panic!("{name} in report"))
            .result
            .clone()
    };
    assert_eq!(result("report")["state"], "completed", "{out:?}");
    assert_eq!(result("pinned")["state"], "skipped");
    assert_eq!(result("logging")["state"], "skipped");
    assert_eq!(result("logging")["reason"]["detail"], "keep-logging");
    assert_eq!(result("web")["state"], "evicted");
    assert_eq!(result("cache")["state"], "remaining");
    assert_eq!(result("cache")["cause"]["kind"], "waitingForCompletion");

    let evicted: BTreeSet<String> = c.evictions().into_iter().map(|(p, _)| app_of(&p)).collect();
    assert_eq!(
        evicted,
        BTreeSet::from(["web".to_string()]),
        "only web was evicted"
    );
    let still: Vec<String> = c.pods_on("n1");
    assert!(
        still.iter().any(|p| p == "apps/pinned")
            && still.iter().any(|p| app_of(p) == "logging")
            && still.contains(&cache)
    );
}

/// Pod markers are our deliberate difference: said before anything
/// changes, the held pod waited for with its release on screen, and
/// `--ignore-markers` gives kubectl's outcome.
#[test]
fn markers_are_said_before_and_ignore_markers_drains_as_kubectl() {
    let scenario = || {
        two_nodes()
            .deployment("web", 1)
            .deployment_with("cache", 1, |d| {
                template(d)["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] =
                    json!("true");
            })
            .deployment_with("pinned", 1, |d| {
                template(d)["metadata"]["labels"]["cluster.x-k8s.io/drain"] = json!("skip");
            })
            .yaml()
    };
    let theirs = Cluster::start(&scenario(), 33);
    let held = Cluster::start(&scenario(), 33);
    let ignored = Cluster::start(&scenario(), 33);
    for c in [&theirs, &held, &ignored] {
        settle_on_n1(c);
    }
    theirs
        .kubectl(&["drain", "n1", "--ignore-daemonsets", "--timeout", "30s"])
        .success();

    let out = held.maintain(&["drain", "n1", "--ignore-daemonsets", "--timeout", "3s"]);
    out.code(3);
    let warning = out
        .stderr
        .lines()
        .find(|l| l.contains("drain markers that kubectl drain ignores"))
        .unwrap_or_else(|| panic!("{out:?}"));
    assert!(warning.contains("2 pods carry") && warning.contains("--ignore-markers"));
    assert!(warning.contains("annotation karpenter.sh/do-not-disrupt=true"));
    assert!(warning.contains("label cluster.x-k8s.io/drain=skip"));
    let before_any_eviction =
        out.stderr.find(warning).unwrap() < out.stderr.find("evicted").unwrap_or(usize::MAX);
    assert!(before_any_eviction, "{out:?}");
    assert!(
        out.stderr.lines().any(|l| l.contains("apps/cache-")
            && l.contains("waiting for it to complete")
            && l.contains(" -n apps karpenter.sh/do-not-disrupt-")),
        "the wait is on screen with its release: {out:?}"
    );
    let kept: BTreeSet<String> = held.pods_on("n1").iter().map(|p| app_of(p)).collect();
    assert!(
        kept.contains("cache") && kept.contains("pinned"),
        "{kept:?}"
    );

    let out = ignored.maintain(&[
        "drain",
        "n1",
        "--ignore-daemonsets",
        "--ignore-markers",
        "--timeout",
        "30s",
    ]);
    out.success();
    assert!(!out.stderr.contains("markers that"), "{out:?}");
    let left = |c: &Cluster| -> BTreeSet<String> {
        c.pods_on("n1")
            .iter()
            .map(|p| app_of(p))
            .filter(|a| a != "agent")
            .collect()
    };
    assert_eq!(left(&ignored), left(&theirs), "kubectl's outcome");
    assert!(left(&theirs).is_empty(), "{:?}", left(&theirs));
}

const FILTERED: &str = "
---
apiVersion: v1
kind: Pod
metadata:
  name: bare
  namespace: default
  annotations: {sandbox.kubectl-maintain.io/ready-seconds: \"0.1\", sandbox.kubectl-maintain.io/shutdown-seconds: \"0.2\"}
spec:
  nodeName: n1
  containers: [{name: c, image: x}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata:
      labels: {app: agent}
      annotations: {sandbox.kubectl-maintain.io/ready-seconds: \"0.1\", sandbox.kubectl-maintain.io/shutdown-seconds: \"0.1\"}
    spec:
      containers: [{name: c, image: x}]
";

fn filtered_scenario() -> String {
    two_nodes()
        .deployment("web", 1)
        .deployment_with("scratch", 1, |d| {
            template(d)["spec"]["volumes"] = json!([{"name": "tmp", "emptyDir": {}}]);
        })
        .raw(FILTERED)
        .yaml()
}

#[test]
fn kubectl_filters_refuse_what_kubectl_refuses() {
    let kubectl_side = Cluster::start(&filtered_scenario(), 33);
    let ours = Cluster::start(&filtered_scenario(), 33);
    for c in [&kubectl_side, &ours] {
        settle_on_n1(c);
    }
    let k = kubectl_side.kubectl(&["drain", "n1", "--timeout", "20s"]);
    let m = ours.maintain(&["drain", "n1", "--timeout", "20s"]);
    assert_ne!(k.code, 0, "{k:?}");
    m.code(3);
    for msg in [
        "cannot delete Pods that declare no controller (use --force to override): default/bare",
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/agent-",
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): apps/scratch-",
    ] {
        assert!(k.stderr.contains(msg), "kubectl says {msg}: {k:?}");
        assert!(
            m.stdout.contains(msg) || m.stderr.contains(msg),
            "we say {msg}: {m:?}"
        );
    }
    // Neither evicted anything; both leave the node cordoned.
    for c in [&kubectl_side, &ours] {
        assert!(c.evictions().is_empty());
        assert_eq!(
            c.get(Resource::Nodes, "", "n1").unwrap()["spec"]["unschedulable"],
            true
        );
    }
    // With kubectl's override flags both go through.
    let flags = [
        "drain",
        "n1",
        "--force",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout",
        "30s",
    ];
    let k = kubectl_side.kubectl(&flags);
    let m = ours.maintain(&flags);
    k.success();
    m.success();
}

#[test]
fn same_end_state_as_kubectl_drain() {
    let kubectl_side = Cluster::start(&filtered_scenario(), 33);
    let ours = Cluster::start(&filtered_scenario(), 33);
    for c in [&kubectl_side, &ours] {
        settle_on_n1(c);
    }
    let flags = [
        "drain",
        "n1",
        "--force",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout",
        "30s",
    ];
    let before = ours.requests().len();
    let before_k = kubectl_side.requests().len();
    let theirs = kubectl_side.kubectl(&flags);
    theirs.success();
    let out = ours.maintain(&flags);
    out.success();
    // Runbooks grep kubectl's last line; ours ends the same way.
    assert!(theirs.stdout.contains("node/n1 drained"), "{theirs:?}");
    assert!(out.stdout.ends_with("node/n1 drained\n"), "{out:?}");
    // People read counts: "1 pod", "2 pods".
    assert!(!out.stderr.contains(" 1 pods"), "{out:?}");
    let end_state = |c: &Cluster| {
        let on_n1: BTreeSet<String> = c.pods_on("n1").iter().map(|p| app_of(p)).collect();
        let cordoned = c.get(Resource::Nodes, "", "n1").unwrap()["spec"]["unschedulable"] == true;
        let bare = c.get(Resource::Pods, "default", "bare").is_some();
        (on_n1, cordoned, bare)
    };
    // Wait for both clusters to settle (replacements Ready) before comparing.
    for c in [&kubectl_side, &ours] {
        c.wait_settled();
    }
    assert_eq!(end_state(&kubectl_side), end_state(&ours));
    assert_eq!(
        end_state(&ours).0,
        BTreeSet::from(["agent".to_string()]),
        "only the DaemonSet pod stays"
    );

    let evicted = ours.evictions().len() as f64;
    let ours_requests = (ours.requests().len() - before) as f64;
    let kubectl_requests = (kubectl_side.requests().len() - before_k) as f64;
    eprintln!(
        "requests for a 3-pod drain: kubectl-maintain {ours_requests} ({:.1} per evicted pod), kubectl drain {kubectl_requests} ({:.1} per evicted pod)",
        ours_requests / evicted,
        kubectl_requests / evicted
    );
}

#[test]
fn dry_runs_change_nothing() {
    let c = web_on_n1(2, "minAvailable: 2");
    let before: Vec<String> = c
        .pods()
        .iter()
        .map(|p| p["metadata"]["uid"].as_str().unwrap().to_string())
        .collect();
    let pdb_before = c
        .get(Resource::PodDisruptionBudgets, "apps", "web")
        .unwrap()["status"]
        .clone();
    let mark = c.mark();

    let client = c.maintain(&["drain", "n1", "--dry-run=client"]);
    client.success();
    assert!(client.stdout.contains("evict"), "{client:?}");
    let server = c.maintain(&["plan", "n1", "--dry-run=server", "-o", "json"]);
    assert_eq!(server.code, 3, "the PDB would block: {server:?}");
    let blocked = server.report().nodes[0]
        .pods
        .iter()
        .filter(|p| p.result["state"] == "wouldBlock")
        .count();
    assert_eq!(blocked, 2, "{server:?}");
    // `plan` reads the budget's status and says what the server dry run
    // says, in the same words, without asking an eviction (#54).
    let evictions = |c: &Cluster| {
        c.requests()
            .iter()
            .filter(|r| r.path.ends_with("/eviction"))
            .count()
    };
    let asked = evictions(&c);
    let plan = c.maintain(&["plan", "n1", "-o", "json"]);
    assert_eq!(plan.code, 3, "the PDB would block: {plan:?}");
    assert_eq!(evictions(&c), asked, "plan asks no eviction");
    let causes = |r: &crate::harness::Run| -> Vec<serde_json::Value> {
        r.report().nodes[0]
            .pods
            .iter()
            .filter(|p| p.result["state"] == "wouldBlock")
            .map(|p| p.result["cause"].clone())
            .collect()
    };
    assert_eq!(causes(&plan), causes(&server), "{plan:?}");
    let table = c.maintain(&["plan", "n1"]);
    assert!(table.stdout.contains("PDB web"), "{table:?}");
    assert!(
        c.requests()
            .iter()
            .any(|r| r.path.ends_with("/eviction") && r.query.contains("dryRun=All"))
    );

    c.assert_asked(mark, Asked::NoWrite, "dry runs and plans");
    let after: Vec<String> = c
        .pods()
        .iter()
        .map(|p| p["metadata"]["uid"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(before, after);
    assert!(c.pods().iter().all(|p| !pods::is_terminating(p)));
    assert!(
        c.get(Resource::Nodes, "", "n1").unwrap()["spec"]
            .get("unschedulable")
            .is_none()
    );
    assert_eq!(
        c.get(Resource::PodDisruptionBudgets, "apps", "web")
            .unwrap()["status"],
        pdb_before
    );
}

#[test]
fn invalid_input_makes_no_api_call() {
    let c = two_nodes().start(33);
    let bad_plan = c.dir.path().join("bad.yaml");
    std::fs::write(&bad_plan, "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - podPriority: 10\n    podSelektor: {}\n").unwrap();
    let mark = c.mark();
    let out = c.maintain(&["drain", "n1", "--plan", bad_plan.to_str().unwrap()]);
    out.code(2);
    assert!(
        out.stderr.contains(&format!("{}:6:5", bad_plan.display())),
        "{out:?}"
    );
    assert!(out.stderr.contains("unknown field"), "{out:?}");
    for args in [
        vec!["drain", "n1", "-l", "pool=a"],
        vec!["drain"],
        vec!["drain", "n1", "--timeout", "-5s"],
        vec!["drain", "n1", "--pod-selector", "app in (a"],
        vec!["drain", "n1", "--dry-run=maybe"],
    ] {
        let out = c.maintain(&args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
    }
    // Huge, of the wrong type, truncated.
    let huge = c.dir.path().join("huge.yaml");
    let filler = "x".repeat(2 << 20);
    std::fs::write(
        &huge,
        format!(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec: {{}}\n# {filler}\n"
        ),
    )
    .unwrap();
    let wrong_type = c.dir.path().join("list.yaml");
    std::fs::write(&wrong_type, "- just\n- a list\n").unwrap();
    let truncated = c.dir.path().join("cut.yaml");
    std::fs::write(&truncated, "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves: [{podPriority: 1").unwrap();
    for file in [&huge, &wrong_type, &truncated] {
        let out = c.maintain(&["drain", "n1", "--plan", file.to_str().unwrap()]);
        out.code(2);
        assert!(
            out.stderr.contains(&*file.display().to_string()),
            "the file is named: {out:?}"
        );
    }
    let out = c.maintain(&["drain", "n1", "--plan", huge.to_str().unwrap()]);
    assert!(
        out.stderr
            .contains("files larger than 1048576 bytes are refused"),
        "{out:?}"
    );
    c.assert_asked(mark, Asked::Nothing, "invalid input");
    // A node that does not exist: exit 2, and nothing was changed.
    let mark = c.mark();
    let out = c.maintain(&["drain", "n1", "nope"]);
    out.code(2);
    // kubectl's words for it.
    assert!(
        out.stderr
            .contains("Error from server (NotFound): nodes \"nope\" not found"),
        "{out:?}"
    );
    c.assert_asked(mark, Asked::NoWrite, "a node that does not exist");
}

#[test]
fn disable_eviction_deletes_with_the_grace_period_asked() {
    // kubectl 1.33 sends its DeleteOptions as protobuf, 1.27 as JSON.
    let flags = [
        "drain",
        "n1",
        "--disable-eviction",
        "--grace-period",
        "7",
        "--timeout",
        "20s",
    ];
    for minor in [27, 33] {
        let theirs = two_nodes()
            .deployment("web", 2)
            .pdb("web", "minAvailable: 2")
            .start(minor);
        settle_on_n1(&theirs);
        theirs.kubectl(&flags).success();
        assert_deleted_with_grace(&theirs, 7);
    }
    let c = web_on_n1(2, "minAvailable: 2");
    // The PDB allows nothing, but DELETE does not ask it.
    let out = c.maintain(&flags);
    out.success();
    let reqs = c.requests();
    assert!(
        !reqs.iter().any(|r| r.path.ends_with("/eviction")),
        "no eviction requests"
    );
    let deletes = reqs
        .iter()
        .filter(|r| r.method == "DELETE" && r.path.starts_with("/api/v1/namespaces/apps/pods/"))
        .count();
    assert_eq!(deletes, 2);
    assert_deleted_with_grace(&c, 7);
}

/// Every pod deletion the history shows asked for `grace` seconds.
fn assert_deleted_with_grace(c: &Cluster, grace: i64) {
    let graces: Vec<i64> = c
        .history(Resource::Pods)
        .iter()
        .filter_map(|e| {
            e.object()
                .pointer("/metadata/deletionGracePeriodSeconds")
                .and_then(serde_json::Value::as_i64)
        })
        .filter(|g| *g > 0)
        .collect();
    assert!(
        !graces.is_empty() && graces.iter().all(|g| *g == grace),
        "{graces:?}"
    );
}

#[test]
fn a_wave_timeout_stops_the_node_and_says_which_wave() {
    let c = web_on_n1(1, "minAvailable: 1");
    let plan = c.dir.path().join("plan.yaml");
    std::fs::write(&plan, "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - name: apps\n    podPriority: 1000000000\n    timeout: 1s\n").unwrap();
    let started = std::time::Instant::now();
    let out = c.maintain(&[
        "drain",
        "n1",
        "--plan",
        plan.to_str().unwrap(),
        "--lines=report",
    ]);
    out.code(3);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the wave timeout ended the drain"
    );
    assert!(
        out.stdout
            .contains("wave apps did not finish within its timeout"),
        "{out:?}"
    );
    assert!(
        out.stdout
            .contains("blocked by PodDisruptionBudget apps/web"),
        "{out:?}"
    );
}

#[test]
fn several_nodes_by_selector_in_parallel() {
    let c = Scenario::new()
        .labelled_node("a1", &[("pool", "a")])
        .labelled_node("a2", &[("pool", "a")])
        .cordoned_node("b1")
        .deployment("web", 4)
        .start(33);
    c.wait_settled();
    assert_eq!(c.kubectl(&["uncordon", "b1"]).code, 0);
    let out = c.maintain(&["drain", "-l", "pool=a", "--max-parallel", "2", "-o", "json"]);
    out.success();
    let report = out.report();
    let nodes: Vec<&str> = report.nodes.iter().map(|n| n.node.as_str()).collect();
    assert_eq!(nodes, ["a1", "a2"]);
    assert!(report.nodes.iter().all(|n| n.status == "drained"));
    assert!(c.pods_on("a1").is_empty() && c.pods_on("a2").is_empty());
    // A selector that matches nothing: exit 0 as kubectl drain does, with a note.
    let theirs = c.kubectl(&["drain", "-l", "pool=none"]);
    theirs.success();
    let out = c.maintain(&["drain", "-l", "pool=none"]);
    out.success();
    assert_eq!(out.stdout, "", "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "one line: {out:?}");
    // The same for uncordon (kubectl uncordon -l: silent, 0) and roll.
    c.kubectl(&["uncordon", "-l", "pool=none"]).success();
    for verb in [&["uncordon"][..], &["roll", "--yes"]] {
        let out = c.maintain(&[verb, &["-l", "pool=none"]].concat());
        out.success();
        assert_eq!(out.stdout, "", "{verb:?}: {out:?}");
        assert!(
            out.stderr
                .contains("No nodes match the selector \"pool=none\""),
            "{verb:?}: {out:?}"
        );
    }
}

#[test]
fn terminating_pods_report_what_holds_them() {
    let held = |p: &mut serde_json::Value| {
        p["metadata"]["finalizers"] = json!(["example.com/cleanup"]);
        p["metadata"]["annotations"]["sandbox.kubectl-maintain.io/ready-seconds"] = json!("0.1");
        scenario::shutdown(p, 0.1);
        p["spec"]["terminationGracePeriodSeconds"] = json!(1);
    };
    let scenario = two_nodes()
        .pod("apps", "held", "n1", held)
        .pod("leaving", "stuck", "n1", held)
        .yaml();
    let theirs = Cluster::start(&scenario, 33);
    let c = Cluster::start(&scenario, 33);
    for c in [&theirs, &c] {
        settle_on_n1(c);
        // The namespace controller deletes the pod; its finalizer keeps it,
        // and it the namespace.
        c.kubectl(&["delete", "namespace", "leaving", "--wait=false"])
            .success();
        c.wait_for("stuck terminating", Duration::from_secs(10), |c| {
            c.get(Resource::Pods, "leaving", "stuck")
                .is_some_and(|p| pods::is_terminating(&p))
        });
    }
    // The namespace's 403 for a pod already deleted: kubectl waits for it
    // (here: until the timeout); we wait the same way, on the watch, and
    // say why it stays.
    let k = theirs.kubectl(&["drain", "n1", "--force", "--timeout", "4s"]);
    assert_ne!(k.code, 0, "{k:?}");
    assert!(
        k.stderr
            .contains("error when waiting for pod \"stuck\" in namespace \"leaving\" to terminate"),
        "{k:?}"
    );
    let out = c.maintain(&["drain", "n1", "--force", "--timeout", "4s", "-o", "json"]);
    out.code(3);
    let report = out.report();
    let cause = |pod: &str| report.node("n1").pod(pod).result["cause"].clone();
    assert_eq!(cause("apps/held")["kind"], "finalizers", "{out:?}");
    assert_eq!(
        cause("apps/held")["finalizers"],
        serde_json::json!(["example.com/cleanup"])
    );
    // What holds it is its finalizer, not the namespace being deleted.
    assert_eq!(cause("leaving/stuck")["kind"], "finalizers", "{out:?}");
    let table = c.maintain(&["drain", "n1", "--force", "--timeout", "1s", "-o", "table"]);
    assert!(
        table
            .stdout
            .contains("terminating, held by finalizers example.com/cleanup"),
        "{table:?}"
    );
}

/// `--max-parallel 2` with one slow node and three fast ones: a finished
/// node frees its slot at once, so the fast nodes are drained while the
/// slow one still is, and never more than two nodes drain at once.
#[test]
fn max_parallel_keeps_every_slot_busy() {
    let mut scenario = Scenario::new().node("spare");
    for (node, seconds) in [("n1", 3.0), ("n2", 0.2), ("n3", 0.2), ("n4", 0.2)] {
        scenario = scenario
            .node(node)
            .pod("default", &format!("on-{node}"), node, |p| {
                scenario::shutdown(p, seconds);
            });
    }
    let c = scenario.start(33);
    c.wait_settled();
    let out = c.maintain(&[
        "drain",
        "n1",
        "n2",
        "n3",
        "n4",
        "--force",
        "--max-parallel",
        "2",
    ]);
    out.success();
    let gone = c.deletion_times();
    let at = |node: &str| gone[&format!("default/on-{node}")];
    // For the record (`cargo test --test it max_parallel -- --nocapture`).
    let first = gone.values().min().copied().unwrap_or(0);
    for n in ["n1", "n2", "n3", "n4"] {
        eprintln!("max-parallel 2: on-{n} gone at +{} ms", at(n) - first);
    }
    for fast in ["n2", "n3", "n4"] {
        assert!(
            at(fast) < at("n1"),
            "{fast} waited for the slow node: {gone:?}"
        );
    }
    // Each node's eviction is sent when a slot frees: n1 and n2 first, n3
    // only after n2's pod is gone, n4 only after n3's.
    let sent: std::collections::HashMap<String, u128> = c.evictions().into_iter().collect();
    let sent_at = |node: &str| sent[&format!("default/on-{node}")];
    assert!(
        sent_at("n3") >= at("n2") && sent_at("n4") >= at("n3"),
        "{sent:?} {gone:?}"
    );
    assert!(sent_at("n3") < at("n1"), "a slot waited for the slow node");
}

/// `--timeout` counts per node, as kubectl drain counts it: a node drained
/// after another one timed out gets its own time. n1's pod is held by a
/// budget; n2's takes 1.5 s to stop, within the 3 s each node gets.
#[test]
fn timeout_counts_per_node_as_kubectl_counts_it() {
    let scenario = Scenario::new()
        .node("n1")
        .node("n2")
        .node("spare")
        .pod("apps", "held", "n1", |p| {
            p["metadata"]["labels"] = json!({"app": "held"});
        })
        .pdb("held", "minAvailable: 1")
        .pod("apps", "slow", "n2", |p| scenario::shutdown(p, 1.5))
        .yaml();
    let theirs = Cluster::start(&scenario, 33);
    let ours = Cluster::start(&scenario, 33);
    for c in [&theirs, &ours] {
        c.wait_settled();
    }
    let args = ["drain", "n1", "n2", "--force", "--timeout", "3s"];
    let kubectl = theirs.kubectl(&args);
    assert_ne!(kubectl.code, 0, "{kubectl:?}");
    let out = ours.maintain(&[&args[..], &["-o", "json"]].concat());
    out.code(3);
    let report = out.report();
    assert_eq!(report.node("n1").status, "timedOut", "{out:?}");
    assert_eq!(report.node("n2").status, "drained", "{out:?}");
    for c in [&theirs, &ours] {
        assert!(
            c.get(Resource::Pods, "apps", "slow").is_none(),
            "n2 drained"
        );
        assert!(c.get(Resource::Pods, "apps", "held").is_some(), "n1 held");
    }
}

/// The usual fix for a pod stuck Terminating, `drain --grace-period=1`,
/// shortens its deletion with us as with kubectl drain.
#[test]
fn a_shorter_grace_period_shortens_a_terminating_pod() {
    let scenario = Scenario::new()
        .node("n1")
        .node("spare")
        .pod("apps", "stuck", "n1", |p| {
            p["spec"]["terminationGracePeriodSeconds"] = json!(120);
        })
        .yaml();
    let theirs = Cluster::start(&scenario, 33);
    let ours = Cluster::start(&scenario, 33);
    for c in [&theirs, &ours] {
        c.wait_settled();
        c.kubectl(&["delete", "pod", "-n", "apps", "stuck", "--wait=false"])
            .success();
    }
    let args = [
        "drain",
        "n1",
        "--force",
        "--grace-period=1",
        "--timeout=30s",
    ];
    theirs.kubectl(&args).success();
    ours.maintain(&args).success();
    for c in [&theirs, &ours] {
        assert!(c.get(Resource::Pods, "apps", "stuck").is_none());
    }
}

/// Several nodes as kubectl drains them: every node cordoned, the one whose
/// pod kubectl's filters refuse left cordoned and reported, the other drained.
/// `--all-or-nothing` keeps v0.1.0's way: a refusal anywhere changes nothing.
#[test]
fn a_refused_node_does_not_stop_the_others() {
    let scenario = Scenario::one_refused_one_drainable(0.2).yaml();
    let theirs = Cluster::start(&scenario, 33);
    let ours = Cluster::start(&scenario, 33);
    let untouched = Cluster::start(&scenario, 33);
    for c in [&theirs, &ours, &untouched] {
        c.wait_settled();
    }
    let args = ["drain", "n1", "n2", "--timeout", "30s"];
    let kubectl = theirs.kubectl(&args);
    assert_ne!(kubectl.code, 0, "{kubectl:?}");
    let out = ours.maintain(&[&args[..], &["-o", "json"]].concat());
    out.code(3);
    let report = out.report();
    assert_eq!(report.node("n1").status, "refused", "{out:?}");
    assert_eq!(report.node("n2").status, "drained", "{out:?}");
    for c in [&theirs, &ours] {
        for n in ["n1", "n2"] {
            assert_eq!(
                c.get(Resource::Nodes, "", n).unwrap()["spec"]["unschedulable"],
                true,
                "{n} cordoned"
            );
        }
        assert!(c.get(Resource::Pods, "default", "bare").is_some());
        assert!(c.get(Resource::Pods, "apps", "owned").is_none());
    }

    let mark = untouched.mark();
    let out = untouched.maintain(&[&args[..], &["--all-or-nothing"]].concat());
    out.code(3);
    untouched.assert_asked(mark, Asked::NoWrite, "--all-or-nothing refused");
}

/// kubectl's older spellings, as kubectl 1.27 reads them: `--dry-run` with
/// no value or `=true` (client), `=false` (none), `--delete-local-data`,
/// `--timeout=+5m`, a negative `--chunk-size` and
/// `--skip-wait-for-delete-timeout`.
#[test]
fn kubectls_older_spellings_are_read_as_kubectl_reads_them() {
    let scenario = two_nodes().deployment("web", 1).yaml();
    let theirs = Cluster::start(&scenario, 27);
    let ours = Cluster::start(&scenario, 27);
    for c in [&theirs, &ours] {
        settle_on_n1(c);
    }
    let old = [
        "--delete-local-data",
        "--timeout=+5m",
        "--chunk-size=-1",
        "--skip-wait-for-delete-timeout=-1",
    ];
    for dry in ["--dry-run", "--dry-run=true"] {
        let args = [&["drain", "n1", dry][..], &old[..]].concat();
        theirs.kubectl(&args).success();
        ours.maintain(&args).success();
        for c in [&theirs, &ours] {
            assert!(c.evictions().is_empty(), "{dry} is a client dry run");
        }
    }
    let args = [&["drain", "n1", "--dry-run=false"][..], &old[..]].concat();
    theirs.kubectl(&args).success();
    ours.maintain(&args).success();
    for c in [&theirs, &ours] {
        assert_eq!(c.evictions().len(), 1, "--dry-run=false drains");
    }
}

/// A finished DaemonSet pod passes kubectl's filter without a lookup of its
/// DaemonSet; we make no such request either.
#[test]
fn a_finished_daemonset_pod_needs_no_daemonset_lookup() {
    let scenario = Scenario::new()
        .node("n1")
        .node("spare")
        .pod("kube-system", "agent-done", "n1", |p| {
            p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
                "kind": "DaemonSet", "name": "agent", "uid": "1", "controller": true}]);
            p["status"] = json!({"phase": "Succeeded"});
        })
        .yaml();
    let theirs = Cluster::start(&scenario, 33);
    let ours = Cluster::start(&scenario, 33);
    theirs
        .kubectl(&["drain", "n1", "--ignore-daemonsets"])
        .success();
    ours.maintain(&["drain", "n1", "--ignore-daemonsets"])
        .success();
    for c in [&theirs, &ours] {
        let lookups: Vec<_> = c
            .requests()
            .into_iter()
            .filter(|r| r.path.contains("/daemonsets/"))
            .collect();
        assert!(lookups.is_empty(), "{lookups:#?}");
    }
}
