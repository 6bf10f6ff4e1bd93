//! `plan --simulate`: the drain predicted on a copy of the cluster on a
//! simulated clock, then the real drain of the same cluster: the same end
//! (pods evicted, pods left Pending and why, what blocks) and a duration
//! within 20 %; the prediction only read the cluster.

use serde_json::json;

use crate::harness::Cluster;
use crate::scenario::{Scenario, shutdown, template};

const READY: &str = "sandbox.kubectl-maintain.io/ready-seconds";

/// Pods Ready 2 s after they start and 1 s to stop.
fn paced(d: &mut serde_json::Value) {
    template(d)["metadata"]["annotations"][READY] = json!("2");
    shutdown(template(d), 1.0);
}

fn scenario() -> String {
    Scenario::new()
        .node("n1")
        .node("n2")
        .node("n3")
        .node("n4")
        // One web replica per node at most, one on every node: the drained
        // node's has nowhere to go and stays Pending.
        .deployment_with("web", 4, |d| {
            paced(d);
            template(d)["spec"]["affinity"] = json!({"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "topologyKey": "kubernetes.io/hostname"}]}});
        })
        .pdb("web", "maxUnavailable: 1")
        // Two per node: the second eviction waits for the first one's
        // replacement to be Ready.
        .deployment_with("api", 8, paced)
        .pdb("api", "maxUnavailable: 1")
        .object({
            let mut db = json!({
                "apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "db", "namespace": "apps"},
                "spec": {"replicas": 2, "serviceName": "db",
                    "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                        "spec": {"containers": [{"name": "c", "image": "db"}]}}},
            });
            paced(&mut db);
            db
        })
        .pdb("db", "maxUnavailable: 1")
        // A second wave: cluster-critical pods go after the others.
        .deployment_with("dns", 4, |d| {
            paced(d);
            template(d)["spec"]["priorityClassName"] = json!("system-cluster-critical");
        })
        .yaml()
}

/// The node with the most pods.
fn busiest(c: &Cluster) -> &'static str {
    ["n1", "n2", "n3", "n4"]
        .into_iter()
        .max_by_key(|n| c.pods_on(n).len())
        .unwrap()
}

#[test]
#[allow(clippy::too_many_lines)] // long on purpose: one scenario: the prediction, then the drain it predicts
fn the_prediction_matches_the_drain_and_changes_nothing() {
    let c = Cluster::start(&scenario(), 33);
    c.wait_settled();
    let node = busiest(&c);
    let before_requests = c.requests().len();
    let before: std::collections::BTreeSet<String> = c
        .pods()
        .iter()
        .filter_map(|p| p["metadata"]["uid"].as_str().map(str::to_string))
        .collect();

    let predicted = c.maintain(&["plan", node, "--simulate", "-o", "json"]);
    predicted.success();
    let writes: Vec<_> = c.requests()[before_requests..]
        .iter()
        .filter(|r| r.user_agent.starts_with("kubectl-maintain") && r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "the prediction wrote: {writes:?}");
    assert!(c.pods_on(node).len() > 1, "nothing moved");

    let real = c.maintain(&["drain", node, "--yes", "-o", "json"]);
    real.success();
    c.wait_idle();
    let (p, r) = (predicted.report(), real.report());
    let (pn, rn) = (p.node(node), r.node(node));
    assert_eq!(pn.status, rn.status);
    let states = |n: &crate::harness::NodeReport| {
        let mut v: Vec<(String, String)> = n
            .pods
            .iter()
            .map(|p| {
                (
                    p.pod.clone(),
                    p.result["state"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(states(pn), states(rn));
    let waves =
        |n: &crate::harness::NodeReport| n.waves.iter().map(|w| w.name.clone()).collect::<Vec<_>>();
    assert_eq!(waves(pn), waves(rn));
    // The same budgets hold as many pods back, for about as long (which of
    // two pods sent at once a budget lets go first is a race).
    let holds = |n: &crate::harness::NodeReport| {
        n.budget_holds
            .iter()
            .map(|h| (h.budget.clone(), h.pods.len(), h.holding))
            .collect::<Vec<_>>()
    };
    assert_eq!(holds(pn), holds(rn));
    assert!(
        !pn.budget_holds.is_empty(),
        "the budgets hold evictions back"
    );
    for (ph, rh) in pn.budget_holds.iter().zip(&rn.budget_holds) {
        let (p, r) = (ph.held_ms as f64, rh.held_ms as f64);
        assert!(
            (p - r).abs() <= (0.2 * r).max(500.0),
            "{}: predicted held {p} ms, held {r} ms",
            ph.budget
        );
    }
    let (pe, re) = (pn.elapsed_ms as f64, rn.elapsed_ms as f64);
    eprintln!("{node}: predicted {pe} ms, the drain took {re} ms");
    assert!(
        (pe - re).abs() <= 0.2 * re,
        "predicted {pe} ms, took {re} ms\n{}",
        predicted.stderr
    );
    // What the controllers made, where it runs, and what stays Pending and
    // why, as predicted (replacements' names are random: compared by owner).
    let prediction = p.prediction.expect("a prediction section");
    assert_eq!(prediction.source, "cluster");
    assert_eq!(prediction.horizon_ms, Some(3_600_000), "no --timeout");
    let mut foretold: Vec<(String, Option<String>)> = prediction
        .replacements
        .iter()
        .map(|r| (r.owner.clone(), r.pending.clone()))
        .collect();
    let made: Vec<_> = c
        .pods()
        .iter()
        .filter(|p| !before.contains(p["metadata"]["uid"].as_str().unwrap_or_default()))
        .map(|p| {
            let owner = kube_sandbox::objects::pods::controller_of(p).unwrap();
            let pending = kube_sandbox::objects::pods::condition(p, "PodScheduled")
                .filter(|c| c["status"] == "False")
                .and_then(|c| c["message"].as_str().map(str::to_string));
            (format!("{}/{}", owner.kind, owner.name), pending)
        })
        .collect();
    let mut made = made;
    foretold.sort();
    made.sort();
    assert_eq!(foretold, made);
    assert!(
        made.iter().any(|(_, pending)| pending.is_some()),
        "an anti-affine replica has nowhere to go: {made:?}"
    );
    assert!(
        prediction
            .replacements
            .iter()
            .filter(|r| r.node.is_some())
            .all(|r| r.node.as_deref() != Some(node)),
        "nothing lands on the drained node"
    );
}

/// `drain --simulate`: the predicted drain's verdict on stderr first (no
/// terminal: no question), then the real drain, which ends as foretold.
#[test]
fn drain_simulate_shows_the_verdict_then_drains() {
    let c = Cluster::start(&scenario(), 33);
    c.wait_settled();
    let node = busiest(&c);
    let out = c.maintain(&["drain", node, "--simulate", "--lines=report"]);
    out.success();
    let verdict = out
        .stderr
        .find("Predicted on a copy of the cluster")
        .unwrap_or_else(|| panic!("no verdict: {}", out.stderr));
    let cordoned = out
        .stderr
        .find(&format!("node/{node} cordoned"))
        .unwrap_or_else(|| panic!("not drained: {}", out.stderr));
    assert!(
        verdict < cordoned,
        "the verdict comes first: {}",
        out.stderr
    );
    let said = &out.stderr[verdict..cordoned];
    assert!(
        said.contains(&format!("node/{node}: drained in ")),
        "{said}"
    );
    assert!(said.contains("PDB apps/"), "{said}");
    assert!(
        said.contains("would stay Pending: 0/4 nodes are available"),
        "{said}"
    );
    assert!(
        !said.contains(" evicted"),
        "the simulated drain's progress is not shown: {said}"
    );
    assert!(out.stdout.contains(&format!("node/{node} drained")));
    assert!(
        out.stdout
            .contains("Disruption budgets that held evictions back"),
        "{}",
        out.stdout
    );
}

/// The timing model is the operator's to correct, and a dump needs no
/// cluster at all: `--from` a file, `--assume-shutdown` sets how long the
/// evicted pods take to stop (within their grace period).
#[test]
fn assumed_times_change_the_prediction_of_a_dump() {
    let dir = crate::harness::TempDir::new("assume");
    let file = dir.path().join("cluster.yaml");
    std::fs::write(
        &file,
        Scenario::new()
            .node("n1")
            .node("n2")
            .pod("apps", "solo", "n1", |_| {})
            .yaml(),
    )
    .unwrap();
    let plan = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
            .args([
                "plan",
                "n1",
                "--simulate",
                "--force",
                "-o",
                "json",
                "--from",
            ])
            .arg(&file)
            .args(extra)
            .env_clear()
            .env("HOME", dir.path())
            .output()
            .unwrap()
    };
    let predict = |assume: &str| {
        let out = plan(&["--assume-shutdown", assume]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["nodes"][0]["status"], "drained");
        report["nodes"][0]["elapsedMs"].as_u64().unwrap()
    };
    let (five, twenty, beyond) = (predict("5s"), predict("20s"), predict("2m"));
    assert!((5000..5500).contains(&five), "{five} ms");
    assert!((20_000..20_500).contains(&twenty), "{twenty} ms");
    assert!(
        (30_000..30_500).contains(&beyond),
        "never past the 30 s grace period: {beyond} ms"
    );

    // Per workload: the bare pod is no workload's, so the file's entry
    // leaves it to --assume-shutdown; a mistake in the file is exit 2.
    let times = dir.path().join("times.yaml");
    let write_times = |body: &str| {
        std::fs::write(
            &times,
            format!(
                "apiVersion: kubectl-maintain.io/v1alpha1\nkind: WorkloadTimes\ntimes:\n{body}"
            ),
        )
        .unwrap();
    };
    write_times("- workload: \"*/Deployment/*\"\n  shutdown: 12s\n");
    let times_arg = times.to_str().unwrap();
    let out = plan(&["--assume-shutdown", "5s", "--assume-times", times_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ms = report["nodes"][0]["elapsedMs"].as_u64().unwrap();
    assert!((5000..5500).contains(&ms), "{ms} ms");
    write_times("- workload: \"apps/Pod/solo\"\n  shutdown: 12s\n");
    let out = plan(&["--assume-times", times_arg]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("times.yaml:4:3: times[0].workload: \"Pod\" is not a kind"),
        "{stderr}"
    );
}

/// A Deployment's times, from a WorkloadTimes file, reach the pods of its
/// ReplicaSets: the prediction takes as long as the file says.
#[test]
fn workload_times_from_a_file_time_the_workloads_pods() {
    let dir = crate::harness::TempDir::new("times");
    let c = Cluster::start(
        &Scenario::new()
            .node("n1")
            .node("n2")
            .deployment_with("web", 2, |d| {
                template(d)["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
                template(d)["spec"]["terminationGracePeriodSeconds"] = json!(60);
            })
            .yaml(),
        33,
    );
    c.wait_settled();
    let times = dir.path().join("times.yaml");
    std::fs::write(
        &times,
        "apiVersion: kubectl-maintain.io/v1alpha1\nkind: WorkloadTimes\ntimes:\n- workload: apps/Deployment/web\n  shutdown: 17s\n",
    )
    .unwrap();
    let out = c.maintain(&[
        "plan",
        "n1",
        "--simulate",
        "--timeout",
        "40s",
        "--assume-times",
        times.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let report = out.report();
    let n = report.node("n1");
    // The evicted pods take 17 s to stop; their replacements cannot leave n1
    // (nodeSelector) while it is cordoned.
    assert!(
        (17_000..17_600).contains(&n.elapsed_ms),
        "{} ms\n{}",
        n.elapsed_ms,
        out.stderr
    );
}
