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

#[test]
fn the_prediction_matches_the_drain_and_changes_nothing() {
    let c = Cluster::start(&scenario(), 33);
    c.wait_settled();
    // The node with the most pods.
    let node = ["n1", "n2", "n3", "n4"]
        .into_iter()
        .max_by_key(|n| c.pods_on(n).len())
        .unwrap();
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
    let predict = |assume: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
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
            .args(["--assume-shutdown", assume])
            .env_clear()
            .env("HOME", dir.path())
            .output()
            .unwrap();
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
}
