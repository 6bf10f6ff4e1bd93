//! What the drain will meet, said before it meets it: `plan` and a server
//! dry run name a pod already going and held past its grace period, and
//! `status` says for each node what it waits on and what to do next.

use std::time::Duration;

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use serde_json::{Value, json};

use crate::harness::Cluster;
use crate::scenario::{self, Scenario};

/// `apps/held` on n1, its 1 s grace period over and its finalizer still
/// on; `apps/web` on n1 to evict; n2 open.
fn held_past_its_grace() -> Cluster {
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .pod("apps", "held", "n1", |p| {
            scenario::owned_by_a_gone_replicaset(p, 0.1);
            p["metadata"]["finalizers"] = json!(["example.com/cleanup"]);
            p["spec"]["terminationGracePeriodSeconds"] = json!(1);
        })
        .pod("apps", "web", "n1", |p| {
            scenario::owned_by_a_gone_replicaset(p, 0.1);
        })
        .start(33);
    c.wait_settled();
    c.kubectl(&["delete", "pod", "held", "-n", "apps", "--wait=false"])
        .success();
    // Past its grace period: deletionTimestamp (when it ends) is behind
    // the clock by a whole second, as the tool reads it.
    c.wait_for("held past its grace period", Duration::from_secs(10), |c| {
        c.get(Resource::Pods, "apps", "held").is_some_and(|p| {
            pods::is_terminating(&p)
                && p["metadata"]["deletionTimestamp"]
                    .as_str()
                    .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                    .is_some_and(|t| jiff::Timestamp::now().as_second() > t.as_second())
        })
    });
    c
}

#[test]
fn plan_and_a_server_dry_run_name_a_pod_held_past_its_grace_period() {
    let c = held_past_its_grace();
    for dry in [
        &["plan", "n1"][..],
        &["drain", "n1", "--dry-run=server"][..],
    ] {
        let out = c.maintain(&[dry, &["-o", "json"]].concat());
        let report = out.report();
        let held = &report.node("n1").pod("apps/held").result;
        assert_eq!(held["state"], "wouldBlock", "{dry:?}: {out:?}");
        assert_eq!(held["cause"]["kind"], "finalizers", "{dry:?}: {out:?}");
        assert_eq!(
            held["cause"]["finalizers"],
            json!(["example.com/cleanup"]),
            "{dry:?}"
        );
        // The pod that is not going is still to be evicted.
        assert_eq!(
            report.node("n1").pod("apps/web").result["state"],
            "wouldEvict",
            "{dry:?}: {out:?}"
        );
    }
    // A pod that would block makes the plan exit 3, as a drain would.
    let table = c.maintain(&["plan", "n1"]);
    table.code(3);
    assert!(
        table.stdout.lines().any(|l| l.contains("apps/held")
            && l.contains("terminating, held by finalizers example.com/cleanup")),
        "{table:?}"
    );
}

/// The question names the pod before anything changes, with what holds it.
#[test]
fn the_question_names_a_pod_held_past_its_grace_period() {
    let c = held_past_its_grace();
    let (screen, code) = crate::operator::in_terminal(&c, "drain n1 --timeout 2s", "n\n");
    assert!(screen.contains("Drain now?"), "{screen}");
    assert!(
        screen.contains("Already terminating, past their grace period"),
        "{screen}"
    );
    assert!(
        screen.contains("apps/held: terminating, held by finalizers example.com/cleanup"),
        "{screen}"
    );
    assert!(!screen.contains("apps/web:"), "{screen}");
    assert_eq!(code, 3, "{screen}");
}

/// The `status` document's node `name`.
fn status_of(c: &Cluster, name: &str) -> Value {
    let out = c.maintain(&["status", "-o", "json"]);
    out.success();
    let doc: Value = serde_json::from_str(&out.stdout).expect("status in JSON");
    doc["nodes"]
        .as_array()
        .and_then(|ns| ns.iter().find(|n| n["node"] == name).cloned())
        .unwrap_or_else(|| panic!("node {name} in {out:?}"))
}

#[test]
fn status_says_what_each_node_waits_on_and_what_to_do_next() {
    let c = Scenario::one_refused_one_drainable(0.1).start(33);
    c.wait_settled();
    c.maintain(&["drain", "n1", "n2", "--timeout", "20s"])
        .code(3);
    // Refused for its bare pod: the cause and its flag, then the drain.
    let n1 = status_of(&c, "n1");
    assert_eq!(n1["state"], "not drained", "{n1}");
    let waiting = n1["waiting"].as_str().unwrap_or_default();
    assert!(
        waiting.starts_with(
            "pod/default/bare: a drain refuses it: cannot delete Pods that declare no controller"
        ),
        "{n1}"
    );
    let next = n1["next"].as_str().unwrap_or_default();
    assert!(
        next.contains("--force") && next.ends_with("kubectl maintain drain n1"),
        "{n1}"
    );
    // Drained: nothing waits; what follows is the maintenance itself.
    let n2 = status_of(&c, "n2");
    assert_eq!(n2["state"], "drained", "{n2}");
    assert!(n2.get("waiting").is_none(), "{n2}");
    assert_eq!(
        n2["next"], "do the maintenance, then kubectl maintain uncordon n2",
        "{n2}"
    );
    // The table says the same, one line each, under the nodes.
    let table = c.maintain(&["status"]);
    table.success();
    for line in [
        "node/n1: waiting on pod/default/bare: a drain refuses it",
        "node/n1: next: rerun with --force",
        "node/n2: next: do the maintenance, then kubectl maintain uncordon n2",
    ] {
        assert!(
            table.stdout.lines().any(|l| l.starts_with(line)),
            "{line:?} in {table:?}"
        );
    }
}

#[test]
fn status_words_a_pod_held_past_its_grace_period_and_what_holds_it() {
    let c = held_past_its_grace();
    c.maintain(&["drain", "n1", "--timeout", "2s"]).code(3);
    let n1 = status_of(&c, "n1");
    assert_eq!(
        n1["waitingOn"]["apps/held"], "terminating, held by finalizers example.com/cleanup",
        "{n1}"
    );
    assert!(
        n1["waiting"]
            .as_str()
            .is_some_and(|w| w.starts_with("pod/apps/held: terminating, held by finalizers")),
        "{n1}"
    );
    assert!(
        n1["next"]
            .as_str()
            .is_some_and(|n| n.contains("finalizers")),
        "{n1}"
    );
}
