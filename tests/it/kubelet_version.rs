//! `--kubelet-version RANGE` (#67): the nodes an upgrade runbook means,
//! chosen by the version their kubelet reports, for `drain`, `plan`,
//! `roll` and `status`; narrowed by `-l`; a range that is none refused
//! before any request (src/policy/kubelet_version.rs).

use kube_sandbox::resources::Resource;
use serde_json::json;

use crate::harness::Cluster;
use crate::scenario::Scenario;

/// Two old kubelets (one a worker, one not), one new, one an EKS build.
fn cluster() -> Cluster {
    let node = |name: &str, version: &str, worker: bool| {
        let labels = if worker {
            json!({"role": "worker"})
        } else {
            json!({})
        };
        json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"nodeInfo": {"kubeletVersion": version}}})
    };
    let c = Scenario::new()
        .object(node("old-a", "v1.31.4", true))
        .object(node("old-b", "v1.32.9-eks-1a2b3c", false))
        .object(node("new-a", "v1.33.1", true))
        .object(node("new-b", "v1.33.0", true))
        .deployment("web", 4)
        .start(33);
    c.wait_settled();
    c
}

fn cordoned(c: &Cluster) -> Vec<String> {
    let mut out: Vec<String> = ["old-a", "old-b", "new-a", "new-b"]
        .into_iter()
        .filter(|n| {
            c.get(Resource::Nodes, "", n)
                .is_some_and(|node| node["spec"]["unschedulable"] == json!(true))
        })
        .map(String::from)
        .collect();
    out.sort();
    out
}

#[test]
fn drain_plan_and_status_choose_the_nodes_by_kubelet_version() {
    let c = cluster();
    // plan names exactly the old kubelets, changing nothing.
    let plan = c.maintain(&["plan", "--kubelet-version", "<1.33", "-o", "json"]);
    plan.success();
    let report: serde_json::Value = serde_json::from_str(&plan.stdout).expect("json");
    let mut planned: Vec<&str> = report["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    planned.sort_unstable();
    assert_eq!(planned, ["old-a", "old-b"], "{}", plan.stdout);
    assert!(cordoned(&c).is_empty(), "plan changes nothing");

    // Narrowed by a selector: the old worker alone.
    let out = c.maintain(&[
        "drain",
        "--kubelet-version",
        ">=1.30,<1.33",
        "-l",
        "role=worker",
        "--yes",
        "--timeout",
        "60s",
    ]);
    out.success();
    assert_eq!(cordoned(&c), ["old-a"], "{out:?}");

    // status shows the nodes in the range only.
    let status = c.maintain(&["status", "--kubelet-version", "1.31", "-o", "json"]);
    status.success();
    assert!(status.stdout.contains("old-a"), "{status:?}");
    assert!(!status.stdout.contains("new-a"), "{status:?}");

    // No kubelet in the range: nothing to do, as an empty -l.
    let none = c.maintain(&["drain", "--kubelet-version", "<1.20", "--yes"]);
    none.success();
    assert!(none.stderr.contains("nothing to drain"), "{none:?}");
}

#[test]
fn a_range_that_is_none_or_beside_names_is_refused_before_any_request() {
    let c = cluster();
    let before = c.requests().len();
    for (args, words) in [
        (
            vec!["drain", "--kubelet-version", "~1.32", "--yes"],
            "is not a version comparison",
        ),
        (
            vec!["drain", "old-a", "--kubelet-version", "<1.33", "--yes"],
            "cannot specify both node names and --kubelet-version",
        ),
        (
            vec!["roll", "--kubelet-version", "1.x", "--yes"],
            "is not a version comparison",
        ),
        (
            vec!["status", "--kubelet-version", "<"],
            "is not a version comparison",
        ),
        (
            vec!["drain", "--kubelet-version", "<1.33", "-l", " ", "--yes"],
            "would select every node",
        ),
    ] {
        let out = c.maintain(&args);
        out.code(2);
        assert!(out.stderr.contains(words), "{args:?}: {out:?}");
    }
    assert_eq!(c.requests().len(), before, "no request was made");
    assert!(cordoned(&c).is_empty());
}
