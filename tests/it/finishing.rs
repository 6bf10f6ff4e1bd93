//! Drains that finish: `--deadline` deletes what a budget still holds, each
//! pod its grace period before the deadline.

use std::time::Instant;

use crate::harness::log_ms;
use crate::scenario::{Scenario, template};

#[test]
fn the_deadline_deletes_a_held_pod_its_grace_period_early() {
    // One replica behind minAvailable: 1: no eviction is ever allowed.
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("solo", 1, |d| {
            template(d)["spec"]["nodeSelector"] =
                serde_json::json!({"kubernetes.io/hostname": "n1"});
            template(d)["spec"]["terminationGracePeriodSeconds"] = serde_json::json!(10);
        })
        .pdb("solo", "minAvailable: 1")
        .start(33);
    c.wait_settled();
    let started = Instant::now();
    let out = c.maintain(&["drain", "n1", "--deadline", "20s", "-o", "json"]);
    let took = started.elapsed();
    out.success();
    let report = out.report();
    let n1 = report.node("n1");
    assert_eq!(n1.status, "drained", "{out:?}");
    let pod = n1
        .pods
        .iter()
        .find(|p| p.pod.starts_with("apps/solo-"))
        .expect("the pod");
    assert_eq!(pod.result["state"], "forced", "{out:?}");
    assert!(
        pod.result["why"].as_str().unwrap().contains("solo"),
        "names the budget: {out:?}"
    );
    // Deleted (not evicted) about 10 s after the drain began: 20 s less its
    // 10 s grace period.
    let requests = c.requests();
    let first_eviction = requests
        .iter()
        .find(|r| r.method == "POST" && r.path.ends_with("/eviction"))
        .map(|r| log_ms(&r.ts))
        .expect("asked first");
    let delete = requests
        .iter()
        .find(|r| r.method == "DELETE" && r.path.contains("/pods/solo-"))
        .map(|r| log_ms(&r.ts))
        .expect("deleted");
    let after = delete - first_eviction;
    assert!(
        (9_500..=11_500).contains(&after),
        "deleted {after} ms after the first eviction"
    );
    assert!(took.as_secs() < 20, "{took:?}");
    // Said as it happened, and as an Event on the node.
    assert!(
        out.stderr
            .contains("deleted at the deadline, budgets bypassed (10s to stop)"),
        "{out:?}"
    );
    let events = c.kubectl(&["get", "events", "-n", "default"]);
    assert!(
        events.stdout.lines().any(|l| l.contains("Warning")
            && l.contains("PodDeletedAtDeadline")
            && l.contains("solo")),
        "{}",
        events.stdout
    );
}

#[test]
fn a_deadline_past_the_timeout_is_refused_before_any_request() {
    let c = Scenario::new().node("n1").start(33);
    let out = c.maintain(&["drain", "n1", "--deadline", "5m", "--timeout", "1m"]);
    out.code(2);
    assert!(
        out.stderr
            .contains("--deadline 5m must be shorter than --timeout 1m"),
        "{out:?}"
    );
    assert!(c.writes().is_empty(), "{:?}", c.writes());
}
