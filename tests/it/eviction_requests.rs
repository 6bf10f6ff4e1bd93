//! Kubernetes 1.37's EvictionRequest API through the binary, on the
//! sandbox serving it (`--eviction-api`, crate::drain::evict::request):
//! a responder that moves its pod, one that never acts (withdrawn at the
//! timeout, at Ctrl-C), a rerun after kill -9 adopting the request left
//! behind, a controller that never answers (the old way, said), and a
//! server without the API (today's path, one discovery request more).

use std::time::Duration;

use kube_sandbox::resources::Resource;
use serde_json::{Value, json};

use crate::harness::Cluster;
use crate::scenario::{Scenario, completes_after, shutdown};

const RESPOND_AFTER: &str = "sandbox.kubectl-maintain.io/respond-after";
const REQUESTS: &str = "/apis/lifecycle.k8s.io/v1alpha1/namespaces/apps/evictionrequests";

/// Two nodes, a Deployment's four pods spread over them under a budget
/// that allows one, and on n1 `vm`, a pod whose interceptor
/// (`kubevirt.io/migrate`) acts after `respond_after` (or `never`).
fn scenario(respond_after: &str) -> Scenario {
    Scenario::new()
        .node("n1")
        .node("n2")
        .deployment("web", 4)
        .pdb("web", "maxUnavailable: 1")
        .pod("apps", "vm", "n1", |p| {
            p["metadata"]["annotations"][RESPOND_AFTER] = json!(respond_after);
            p["spec"]["evictionResponders"] =
                json!([{"name": "kubevirt.io/migrate", "priority": 10000}]);
            shutdown(p, 0.2);
        })
}

fn started(respond_after: &str, minor: u32) -> Cluster {
    let c = scenario(respond_after).start(minor);
    c.wait_settled();
    c
}

fn requests(c: &Cluster) -> Vec<std::sync::Arc<Value>> {
    c.sandbox.view().list(Resource::EvictionRequests)
}

fn ours(c: &Cluster) -> impl Fn(&kube_sandbox::request_log::Entry) -> bool + '_ {
    let _ = c;
    |e| e.user_agent.starts_with("kubectl-maintain/")
}

#[test]
fn a_responder_moves_its_pod_and_the_budgets_still_pace_the_rest() {
    let c = started("1s", 37);
    let out = c.maintain(&[
        "drain",
        "n1",
        "--force",
        "--timeout",
        "30s",
        "-o",
        "json",
        "--yes",
    ]);
    out.success();
    let report = out.report();
    let node = report.node("n1");
    assert!(
        node.pods.iter().all(|p| p.result["state"] == "evicted"),
        "every pod evicted, through its request: {out:?}"
    );
    let log = c.requests();
    let created: Vec<_> = log
        .iter()
        .filter(|e| ours(&c)(e) && e.method == "POST" && e.path == REQUESTS)
        .collect();
    assert_eq!(
        created.len(),
        3,
        "one request per pod, never two: {created:?}"
    );
    assert!(
        !log.iter()
            .any(|e| ours(&c)(e) && e.path.ends_with("/eviction")),
        "no eviction subresource from the drain: the imperative responder calls it"
    );
    // Its pods gone, each request is removed at the end.
    assert!(requests(&c).is_empty(), "{:?}", requests(&c));
    assert!(
        out.stderr.contains("evicted through EvictionRequests"),
        "said before anything changes: {out:?}"
    );
}

/// Beside it, a one-replica Deployment behind `minAvailable: 1`: the
/// imperative responder's refusal reads as the subresource's, with the
/// budget's hint.
#[test]
fn a_responder_that_never_acts_is_named_and_withdrawn_at_the_timeout() {
    let c = scenario("never")
        .deployment_with("solo", 1, |d| {
            d["spec"]["template"]["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
        })
        .pdb("solo", "minAvailable: 1")
        .start(37);
    c.wait_settled();
    c.wait_for("solo's budget counting it", Duration::from_secs(10), |c| {
        c.get(Resource::PodDisruptionBudgets, "apps", "solo")
            .is_some_and(|b| b["status"]["currentHealthy"] == 1)
    });
    let predicted = c.maintain(&["plan", "n1", "--simulate", "--force", "--timeout", "3s"]);
    predicted.code(3);
    assert!(
        predicted
            .stdout
            .contains("eviction responder kubevirt.io/migrate")
            && predicted
                .stdout
                .contains("blocked by PodDisruptionBudget apps/solo"),
        "predicted on the copy: {predicted:?}"
    );
    assert!(
        requests(&c).is_empty(),
        "a prediction asks the cluster for nothing"
    );
    let out = c.maintain(&["drain", "n1", "--force", "--timeout", "3s", "--yes"]);
    out.code(3);
    assert!(
        out.stderr
            .contains("blocked by PodDisruptionBudget apps/solo")
            && out.stderr.contains("--surge"),
        "the budget, as the eviction subresource would say it: {out:?}"
    );
    assert!(
        !c.requests()
            .iter()
            .any(|e| ours(&c)(e) && e.path.ends_with("/eviction")),
        "no eviction subresource from the drain"
    );
    assert!(
        out.stderr
            .contains("eviction responder kubevirt.io/migrate: moving the workload"),
        "the blocker is the responder, in its words: {out:?}"
    );
    assert!(
        out.stderr.contains(
            "node/n1 pod/apps/vm waiting: handed over to eviction responder kubevirt.io/migrate"
        ),
        "a responder at work is progress, not a block: {out:?}"
    );
    assert!(out.stderr.contains("withdrew 2 EvictionRequest"), "{out:?}");
    let left = requests(&c);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left.iter().all(|r| r["spec"]["intent"] == "Withdrawn"),
        "{left:?}"
    );
    let evictions = c.sandbox.view().list(Resource::Evictions);
    let eviction = evictions
        .iter()
        .find(|e| e["spec"]["target"]["pod"]["name"] == "vm")
        .expect("vm's Eviction");
    assert_eq!(
        eviction["status"]["targetResponders"][0]["state"], "Canceled",
        "the responder stops: {eviction}"
    );
    assert!(
        c.get(Resource::Pods, "apps", "vm").is_some(),
        "the pod stays"
    );
}

/// The request a killed run left is found and asked again, never doubled;
/// Ctrl-C withdraws it.
#[test]
fn a_rerun_after_kill_9_adopts_its_request_and_ctrl_c_withdraws_it() {
    let c = started("never", 37);
    let mut child = c.maintain_spawn(&["drain", "n1", "--force", "--yes"]);
    c.wait_for("the request", Duration::from_secs(10), |c| {
        requests(c)
            .iter()
            .any(|r| r["spec"]["target"]["pod"]["name"] == "vm")
    });
    child.kill().expect("kill -9");
    let _ = child.wait();
    let first = requests(&c)
        .into_iter()
        .find(|r| r["spec"]["target"]["pod"]["name"] == "vm")
        .expect("left behind");
    assert_eq!(first["spec"]["intent"], "Eviction", "nobody withdrew it");

    let child = c.maintain_spawn(&["drain", "n1", "--force", "--yes"]);
    c.wait_for("the request asked again", Duration::from_secs(10), |c| {
        c.requests()
            .iter()
            .any(|e| e.method == "POST" && e.path == REQUESTS && e.status == 409)
    });
    // Adopted: its intent asked again (PATCH), then its progress read (the
    // drain reads the Evictions only once the request is its own), so the
    // Ctrl-C below finds a request to withdraw.
    c.wait_for("the request adopted", Duration::from_secs(10), |c| {
        let log = c.requests();
        let adopted = log.iter().position(|e| {
            e.method == "PATCH" && e.path.starts_with(&format!("{REQUESTS}/")) && e.status == 200
        });
        adopted.is_some_and(|i| {
            log[i..]
                .iter()
                .any(|e| e.method == "GET" && e.path.ends_with("/namespaces/apps/evictions"))
        })
    });
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = Cluster::finish(child, Duration::from_secs(10));
    out.code(130);
    let vm: Vec<_> = requests(&c)
        .into_iter()
        .filter(|r| r["spec"]["target"]["pod"]["name"] == "vm")
        .collect();
    assert_eq!(vm.len(), 1, "adopted, not doubled: {vm:?}");
    assert_eq!(
        vm[0]["metadata"]["uid"], first["metadata"]["uid"],
        "the same request"
    );
    assert_eq!(vm[0]["spec"]["intent"], "Withdrawn", "Ctrl-C withdrew it");
}

#[test]
fn without_a_controller_the_request_is_withdrawn_and_the_pod_evicted_the_old_way() {
    let c = Cluster::start_with(&scenario("never").yaml(), 37, |config| {
        config
            .controller_manager_gates
            .insert("EvictionRequestAPI".into(), false);
    });
    c.wait_settled();
    let out = c.maintain(&["drain", "n1", "--force", "--timeout", "40s", "--yes"]);
    out.success();
    assert_eq!(
        out.stderr
            .matches("no controller took an EvictionRequest within 10s")
            .count(),
        1,
        "said once, whichever pods found it: {out:?}"
    );
    assert!(
        c.requests()
            .iter()
            .any(|e| ours(&c)(e) && e.path.ends_with("/pods/vm/eviction") && e.status == 201),
        "evicted through the subresource"
    );
    assert!(requests(&c).is_empty(), "withdrawn: {:?}", requests(&c));
}

/// 1.36 serves no EvictionRequest: `auto` drains as before, with one
/// discovery request more; `request` fails before any change.
#[test]
fn without_the_api_auto_is_todays_path_and_request_fails_first() {
    let c = started("1s", 36);
    let refused = c.maintain(&["drain", "n1", "--force", "--eviction-api=request", "--yes"]);
    refused.code(2);
    assert!(
        refused
            .stderr
            .contains("the server does not serve lifecycle.k8s.io/v1alpha1 evictionrequests"),
        "{refused:?}"
    );
    let node = c.get(Resource::Nodes, "", "n1").unwrap();
    assert!(node["spec"]["unschedulable"].is_null(), "nothing changed");

    let before = c.requests().len();
    let out = c.maintain(&["drain", "n1", "--force", "--timeout", "30s", "--yes"]);
    out.success();
    assert!(!out.stderr.contains("EvictionRequest"), "{out:?}");
    let log = c.requests();
    let discovery: Vec<_> = log[before..]
        .iter()
        .filter(|e| {
            ours(&c)(e) && (e.path == "/apis" || e.path.starts_with("/apis/lifecycle.k8s.io"))
        })
        .collect();
    assert_eq!(discovery.len(), 1, "one discovery request: {discovery:?}");
    assert_eq!(discovery[0].path, "/apis");
    assert!(
        log[before..]
            .iter()
            .any(|e| e.path == "/api/v1/namespaces/apps/pods/vm/eviction" && e.status == 201),
        "the subresource, as kubectl drain"
    );
}

/// A pod two budgets select: the imperative responder says what the
/// subresource's 500 says, and it reads as the same cause, refused for
/// good (kubectl drain gives such a pod up at once), not as a responder
/// to give time to; on 1.33, the subresource's 500, the same.
#[test]
fn a_pod_under_two_budgets_is_refused_for_good_through_its_request() {
    for minor in [33, 37] {
        under_two_budgets(minor);
    }
}

fn under_two_budgets(minor: u32) {
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("twice", 1, |d| {
            d["spec"]["template"]["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
        })
        .pdb("twice", "maxUnavailable: 1")
        .object(
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "twice-too", "namespace": "apps"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "twice"}}}}),
        )
        .start(minor);
    c.wait_settled();
    let started = std::time::Instant::now();
    let out = c.maintain(&["drain", "n1", "--timeout", "20s", "-o", "json", "--yes"]);
    // The node failed, as kubectl's drain fails on the API's 500.
    out.code(1);
    let report = out.report();
    let pod = &report.node("n1").pods[0];
    assert_eq!(pod.result["cause"]["kind"], "multiplePdbs", "{out:?}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "given up at once, not at --timeout: {out:?}"
    );
}

/// A gang: three pods of one PodGroup with `disruptionMode: {all: {}}`,
/// two on n1 and one on n2, under a budget that allows `allowed`
/// disruptions (bare pods: `minAvailable`, as a budget counts them).
fn gang(allowed: u32) -> Scenario {
    let member = |p: &mut Value| {
        p["metadata"]["labels"] = json!({"app": "train"});
        p["spec"]["schedulingGroup"] = json!({"podGroupName": "train"});
        shutdown(p, 0.1);
    };
    Scenario::new()
        .node("n1")
        .node("n2")
        .object(json!({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
            "metadata": {"name": "train", "namespace": "apps"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "disruptionMode": {"all": {}}}}))
        .pod("apps", "train-0", "n1", member)
        .pod("apps", "train-1", "n1", member)
        .pod("apps", "train-2", "n2", member)
        .pdb("train", &format!("minAvailable: {}", 3 - allowed))
}

/// The gang's live pods: not going, not ended.
fn train_left(c: &Cluster) -> Vec<String> {
    c.pods()
        .iter()
        .filter(|p| {
            p["metadata"]["labels"]["app"] == "train"
                && p["metadata"]["deletionTimestamp"].is_null()
                && !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
        })
        .map(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// Waits for the budget to count the gang's three live pods.
fn three_healthy(c: &Cluster) {
    c.wait_for(
        "the budget counting the live gang",
        Duration::from_secs(10),
        |c| {
            c.get(Resource::PodDisruptionBudgets, "apps", "train")
                .is_some_and(|b| b["status"]["currentHealthy"] == 3)
        },
    );
}

/// Drains n1 under a budget allowing one: the gang's three live pods are
/// one blocker, and none of them goes.
fn held_whole(c: &Cluster) {
    let held = c.maintain(&["drain", "n1", "--force", "--timeout", "3s", "--yes"]);
    held.code(3);
    assert!(
        held.stderr.contains("gang apps/train (3 pods, disruptionMode All): PodDisruptionBudget train allows 1 disruption now and the gang needs 3"),
        "one blocker for the gang, its live members alone: {held:?}"
    );
    assert_eq!(train_left(c).len(), 3, "never one by one: {held:?}");
}

/// A member that has ended (its work done) is no longer the gang's to
/// disrupt: the gang counts and needs its live members alone.
#[test]
fn a_gang_counts_its_live_members_alone() {
    let c = gang(1)
        .pod("apps", "train-done", "n2", |p| {
            p["metadata"]["labels"] = json!({"app": "train"});
            p["spec"]["schedulingGroup"] = json!({"podGroupName": "train"});
            completes_after(p, 0.1);
        })
        .start(37);
    c.wait_for("the finished member", Duration::from_secs(10), |c| {
        c.get(Resource::Pods, "apps", "train-done")
            .is_some_and(|p| p["status"]["phase"] == "Succeeded")
    });
    three_healthy(&c);
    held_whole(&c);
}

#[test]
fn a_gang_is_held_together_by_its_budget_then_released_together() {
    let c = gang(1).start(37);
    c.wait_settled();
    three_healthy(&c);
    // Predicted on a copy of the cluster first, then as it happens.
    let predicted = c.maintain(&["plan", "n1", "--simulate", "--force", "--timeout", "3s"]);
    predicted.code(3);
    assert!(
        predicted
            .stdout
            .contains("gang apps/train (3 pods, disruptionMode All)"),
        "{predicted:?}"
    );
    assert_eq!(train_left(&c).len(), 3, "a prediction changes nothing");
    held_whole(&c);

    c.kubectl(&[
        "patch",
        "pdb",
        "train",
        "-n",
        "apps",
        "--type=merge",
        "-p",
        r#"{"spec":{"minAvailable":0}}"#,
    ])
    .success();
    c.wait_for("the budget allowing three", Duration::from_secs(10), |c| {
        c.get(Resource::PodDisruptionBudgets, "apps", "train")
            .is_some_and(|b| b["status"]["disruptionsAllowed"] == 3)
    });
    let out = c.maintain(&["drain", "n1", "--force", "--timeout", "20s", "--yes"]);
    out.success();
    assert!(
        train_left(&c).is_empty(),
        "the whole gang, n2's pod too: {:?}",
        train_left(&c)
    );
}
