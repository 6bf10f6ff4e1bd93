//! Maintaining a pool: parallel drains zone by zone under one budget, the
//! policy for undrainable nodes, and `roll` (lock, drain, reboot, Ready,
//! uncordon) with its resume, its locks and its quorum guard. Order and
//! concurrency are read from the sandbox's request log and history.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use serde_json::{Value, json};

use crate::harness::{Cluster, kubectl_path, log_ms};
use crate::scenario::{Scenario, shutdown, template};

const ZONE: &str = "topology.kubernetes.io/zone";

/// Nodes of pool `blue` in zones a and b, and spare nodes for the
/// replacements; a Deployment spread over every node, behind a budget.
pub(crate) fn pool(blue: &[(&str, &str)], spares: usize, replicas: u32, budget: &str) -> Scenario {
    let mut s = Scenario::new();
    for (name, zone) in blue {
        s = s.labelled_node(name, &[("pool", "blue"), (ZONE, zone)]);
    }
    for i in 0..spares {
        s = s.labelled_node(&format!("spare{i}"), &[("pool", "spare"), (ZONE, "c")]);
    }
    s.deployment_with("web", replicas, |d| {
        template(d)["spec"]["topologySpreadConstraints"] = json!([{
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }]);
    })
    .pdb("web", budget)
}

/// Where each pod is now, by `namespace/name`.
fn placement(c: &Cluster) -> BTreeMap<String, String> {
    c.pods()
        .iter()
        .filter_map(|p| {
            let node = pods::node_name(p)?.to_string();
            Some((pods::key(p), node))
        })
        .collect()
}

/// Each node's drain as (start, end) in ms: its first and last write of
/// its node conditions.
fn node_drains(c: &Cluster) -> BTreeMap<String, (u128, u128)> {
    let mut out: BTreeMap<String, (u128, u128)> = BTreeMap::new();
    for r in c.requests() {
        let Some(node) = r
            .path
            .strip_prefix("/api/v1/nodes/")
            .and_then(|p| p.strip_suffix("/status"))
        else {
            continue;
        };
        if r.method != "PATCH" {
            continue;
        }
        let ms = log_ms(&r.ts);
        let e = out.entry(node.to_string()).or_insert((ms, ms));
        e.0 = e.0.min(ms);
        e.1 = e.1.max(ms);
    }
    out
}

/// Every eviction request (any answer) as (pod, node it was on, ms, status).
fn eviction_requests(
    c: &Cluster,
    on: &BTreeMap<String, String>,
) -> Vec<(String, String, u128, u16)> {
    c.requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/eviction"))
        .map(|r| {
            let parts: Vec<&str> = r.path.split('/').collect();
            let pod = format!("{}/{}", parts[4], parts[6]);
            let node = on.get(&pod).cloned().unwrap_or_default();
            (pod, node, log_ms(&r.ts), r.status)
        })
        .collect()
}

#[test]
fn parallel_drains_go_zone_by_zone_and_share_one_budget() {
    let blue = [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")];
    let c = pool(&blue, 2, 12, "maxUnavailable: 1").start(33);
    c.wait_settled();
    let on = placement(&c);
    let out = c.maintain(&[
        "drain",
        "-l",
        "pool=blue",
        "--max-parallel",
        "2",
        "--by-zone",
        "--ignore-daemonsets",
        "-o",
        "json",
    ]);
    out.success();
    let report = out.report();
    assert!(
        report.nodes.iter().all(|n| n.status == "drained"),
        "{out:?}"
    );
    let requests = eviction_requests(&c, &on);
    let evicted: Vec<_> = requests.iter().filter(|r| r.3 == 201).collect();
    let on_blue = on.values().filter(|n| !n.starts_with("spare")).count();
    assert_eq!(
        evicted.len(),
        on_blue,
        "each pod evicted once: {requests:?}"
    );
    // Zone a's nodes are done before zone b's start.
    let zone = |n: &str| n.chars().next().unwrap();
    let last_a = requests
        .iter()
        .filter(|r| zone(&r.1) == 'a')
        .map(|r| r.2)
        .max()
        .unwrap();
    let first_b = requests
        .iter()
        .filter(|r| zone(&r.1) == 'b')
        .map(|r| r.2)
        .min()
        .unwrap();
    assert!(
        last_a <= first_b,
        "zone b started before zone a ended: {requests:?}"
    );
    // Two at a time: each zone's two nodes in progress at once (from the
    // DrainInProgress condition written as a node's drain starts to the
    // one written as it ends).
    let drains = node_drains(&c);
    for (x, y) in [("a1", "a2"), ("b1", "b2")] {
        let (sx, ex) = drains[x];
        let (sy, ey) = drains[y];
        assert!(
            sy < ex && sx < ey,
            "{x} and {y} were not drained at once: {drains:?}"
        );
        // The one budget's disruptions went to one node, then to the
        // other (the one started first is served first), not to both in
        // turn, which would end both late.
        let first_asked = |n: &str| requests.iter().filter(|r| r.1 == n).map(|r| r.2).min();
        let last_evicted = |n: &str| {
            requests
                .iter()
                .filter(|r| r.1 == n && r.3 == 201)
                .map(|r| r.2)
                .max()
        };
        let (first, second) = if first_asked(x) <= first_asked(y) {
            (x, y)
        } else {
            (y, x)
        };
        assert!(
            last_evicted(first) <= first_asked(second),
            "{first} and {second} took the budget's disruptions in turn: {requests:?}"
        );
    }
    // One budget allowing one disruption at a time, shared by two nodes:
    // a freed disruption wakes one eviction, not one per node. A pod's
    // first attempt may be refused (its budget is not known yet); a retry
    // is refused only when a change raced another.
    let mut refusals: BTreeMap<&str, usize> = BTreeMap::new();
    for r in requests.iter().filter(|r| r.3 == 429) {
        *refusals.entry(&r.0).or_default() += 1;
    }
    let retries_refused: usize = refusals.values().map(|n| n - 1).sum();
    assert!(
        retries_refused <= 2,
        "{retries_refused} retries refused: {requests:?}"
    );
}

/// A Deployment of `replicas` over the nodes labelled `role` in `roles`,
/// one per node, behind a budget letting one go at a time.
fn spread_over(s: Scenario, app: &str, replicas: u32, roles: &[&str]) -> Scenario {
    s.deployment_with(app, replicas, |d| {
        template(d)["spec"]["affinity"] = json!({"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                "matchExpressions": [{"key": "role", "operator": "In", "values": roles}],
            }]},
        }});
        template(d)["spec"]["topologySpreadConstraints"] = json!([{
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": app}},
        }]);
        shutdown(template(d), 1.0);
    })
    .pdb(app, "maxUnavailable: 1")
}

#[test]
fn the_next_node_is_the_one_sharing_fewest_budgets_with_those_draining() {
    // n1 and n2 hold a pod each of `web`, whose budget lets one go at a
    // time; n3 holds `api`'s. Two at a time, n1 goes with n3, not n2.
    let mut s = Scenario::new();
    for (name, role) in [("n1", "web"), ("n2", "web"), ("n3", "api")] {
        s = s.labelled_node(name, &[("pool", "blue"), ("role", role)]);
    }
    for name in ["spare0", "spare1"] {
        s = s.labelled_node(name, &[("role", "spare")]);
    }
    let s = spread_over(s, "web", 4, &["web", "spare"]);
    let c = spread_over(s, "api", 3, &["api", "spare"]).start(33);
    c.wait_settled();
    let on = placement(&c);
    let out = c.maintain(&[
        "drain",
        "-l",
        "pool=blue",
        "--max-parallel",
        "2",
        "--ignore-daemonsets",
        "--timeout",
        "30s",
    ]);
    out.success();
    let requests = eviction_requests(&c, &on);
    let first = |n: &str| requests.iter().filter(|r| r.1 == n).map(|r| r.2).min();
    let (n1, n2, n3) = (first("n1"), first("n2"), first("n3"));
    assert!(
        n1.is_some() && n3 < n2 && n3.is_some(),
        "n3 was not started before n2: {requests:?}"
    );
    // Every eviction asked was granted: n2's pod waited for nothing.
    assert!(
        requests.iter().all(|r| r.3 == 201),
        "a budget refused an eviction: {requests:?}"
    );
}

/// A node whose only pod no budget lets go, named to be drained first.
pub(crate) fn with_blocked_node() -> Scenario {
    let blue = [("n2", "a"), ("n3", "a")];
    pool(&blue, 1, 3, "maxUnavailable: 1")
        .labelled_node("n1", &[("pool", "blue"), (ZONE, "a")])
        .deployment_with("solo", 1, |d| {
            template(d)["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
        })
        .pdb("solo", "minAvailable: 1")
}

#[test]
fn undrainable_nodes_stop_the_run_past_max_blocked_nodes() {
    let c = with_blocked_node().start(33);
    c.wait_settled();
    let args = [
        "drain",
        "-l",
        "pool=blue",
        "--ignore-daemonsets",
        "--timeout",
        "2s",
        "-o",
        "json",
    ];
    let mut limited = args.to_vec();
    limited.extend(["--max-blocked-nodes", "0"]);
    let out = c.maintain(&limited);
    out.code(3);
    let report = out.report();
    assert_eq!(report.node("n1").status, "timedOut", "{out:?}");
    for n in ["n2", "n3"] {
        let node = report.node(n);
        assert_eq!(node.status, "notStarted", "{out:?}");
        assert!(
            node.message
                .as_deref()
                .unwrap()
                .contains("--max-blocked-nodes=0"),
            "{out:?}"
        );
        // Cordoned with the others, as kubectl cordons every node first;
        // nothing evicted.
        assert_eq!(
            c.get(Resource::Nodes, "", n).unwrap()["spec"]["unschedulable"],
            true
        );
        assert!(!c.pods_on(n).is_empty());
    }
    // Without the limit, as kubectl drain: the others are drained.
    let mut parallel = args.to_vec();
    parallel.extend(["--max-parallel", "2"]);
    let out = c.maintain(&parallel);
    out.code(3);
    let report = out.report();
    let n1 = report.node("n1");
    assert_eq!(n1.status, "timedOut");
    assert_eq!(report.node("n2").status, "drained", "{out:?}");
    assert_eq!(report.node("n3").status, "drained", "{out:?}");
    // The budget that held it, with its numbers, though they never
    // changed while the drain ran.
    let solo = n1
        .pods
        .iter()
        .find(|p| p.pod.starts_with("apps/solo-"))
        .expect("solo's pod");
    let cause = &solo.result["cause"];
    assert_eq!(cause["kind"], "pdb", "{cause}");
    for (field, want) in [
        ("disruptionsAllowed", 0),
        ("currentHealthy", 1),
        ("desiredHealthy", 1),
        ("expectedPods", 1),
    ] {
        assert_eq!(cause[field], want, "{field}: {cause}");
    }
}

/// `--exec` that reboots the sandbox node it is given, down `secs`.
pub(crate) fn reboot(secs: &str) -> String {
    format!(
        "{} annotate node \"$NODE\" sandbox.kubectl-maintain.io/reboot-seconds={secs} --overwrite",
        kubectl_path().display()
    )
}

fn boot_id(c: &Cluster, node: &str) -> String {
    c.get(Resource::Nodes, "", node).unwrap()["status"]["nodeInfo"]["bootID"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Every boot ID a node had, from the sandbox's history.
pub(crate) fn boots(c: &Cluster, node: &str) -> BTreeSet<String> {
    c.history(Resource::Nodes)
        .iter()
        .map(|e| e.object())
        .filter(|n| n["metadata"]["name"] == node)
        .filter_map(|n| {
            n["status"]["nodeInfo"]["bootID"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

/// What an operator set on a node, which a roll must give back as it was.
fn operator_view(c: &Cluster, node: &str) -> Value {
    let n = c.get(Resource::Nodes, "", node).unwrap();
    let mut annotations = n["metadata"]["annotations"].clone();
    if let Some(a) = annotations.as_object_mut() {
        a.retain(|k, _| !k.starts_with("sandbox.kubectl-maintain.io/"));
    }
    json!({
        "unschedulable": n["spec"]["unschedulable"],
        "taints": n["spec"]["taints"],
        "labels": n["metadata"]["labels"],
        "annotations": annotations,
    })
}

pub(crate) fn roll_report(out: &crate::harness::Run) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

pub(crate) fn statuses(report: &Value) -> BTreeMap<String, String> {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                n["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The pool nodes of `four_nodes`.
pub(crate) const FOUR: [&str; 4] = ["r1", "r2", "r3", "r4"];

/// A drain of the whole pool of `four_nodes`, four at a time.
pub(crate) const DRAIN_FOUR: [&str; 6] = [
    "drain",
    "-l",
    "pool=blue",
    "--ignore-daemonsets",
    "--max-parallel",
    "4",
];

pub(crate) fn four_nodes() -> Scenario {
    let blue = [
        (FOUR[0], "a"),
        (FOUR[1], "a"),
        (FOUR[2], "b"),
        (FOUR[3], "b"),
    ];
    pool(&blue, 2, 6, "maxUnavailable: 1").object(json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"},
                             "annotations": {"sandbox.kubectl-maintain.io/ready-seconds": "0.2"}},
                "spec": {"containers": [{"name": "a", "image": "agent"}]},
            },
        },
    }))
}

fn roll_args(exec: &str) -> Vec<String> {
    [
        "roll",
        "-l",
        "pool=blue",
        "--ignore-daemonsets",
        "--max-parallel",
        "2",
        "--by-zone",
        "--exec",
        exec,
        "--wait-for-reboot",
        "--wait-for-budgets",
        "--ready-timeout",
        "30s",
        "-o",
        "json",
    ]
    .map(str::to_string)
    .to_vec()
}

/// `roll_args` with 1 s reboots over `four_nodes`: it succeeds, every node
/// `done` and rebooted.
fn roll_rebooting_all_four(c: &Cluster) -> crate::harness::Run {
    let boots_before: BTreeMap<&str, String> =
        FOUR.into_iter().map(|n| (n, boot_id(c, n))).collect();
    let args = roll_args(&reboot("1"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = c.maintain(&args);
    out.success();
    for (node, status) in statuses(&roll_report(&out)) {
        assert_eq!(status, "done", "{node}: {out:?}");
    }
    for n in FOUR {
        assert_ne!(boot_id(c, n), boots_before[n], "{n} was not rebooted");
    }
    out
}

#[test]
fn roll_reboots_every_node_and_gives_each_back_as_it_was() {
    let c = four_nodes().start(33);
    c.wait_settled();
    // An operator's own taint and cordon-free state, to be restored exactly.
    c.kubectl(&["taint", "node", "r2", "dedicated=db:PreferNoSchedule"])
        .success();
    let before: BTreeMap<&str, Value> = FOUR
        .into_iter()
        .map(|n| (n, operator_view(&c, n)))
        .collect();
    let out = roll_rebooting_all_four(&c);
    let report = roll_report(&out);
    assert_eq!(report["kind"], "RollReport");
    for n in FOUR {
        assert_eq!(operator_view(&c, n), before[n], "{n} not restored");
        let lease = c
            .get(
                Resource::Leases,
                "kube-system",
                &format!("kubectl-maintain-{n}"),
            )
            .unwrap();
        assert!(lease["spec"]["holderIdentity"].is_null(), "{lease}");
        assert_eq!(
            lease["metadata"]["annotations"]["kubectl-maintain.io/phase"],
            "finished"
        );
    }
    // The DaemonSet's pods stayed on their nodes and restarted with them.
    c.wait_settled();
    let rolled = c
        .pods()
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["app"] == "agent")
        .filter(|p| pods::node_name(p).is_some_and(|n| n.starts_with('r')))
        .collect::<Vec<_>>();
    assert_eq!(rolled.len(), 4);
    for p in rolled {
        assert_eq!(
            p["status"]["containerStatuses"][0]["restartCount"], 1,
            "{p}"
        );
    }
    // Each node's phases in order, and its time out of service.
    for n in report["nodes"].as_array().unwrap() {
        let phases: Vec<&str> = n["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["phase"].as_str().unwrap())
            .collect();
        assert_eq!(
            phases,
            ["drain", "action", "waitReady", "uncordon", "settle"],
            "{n}"
        );
        assert!(n["outOfServiceMs"].as_u64().unwrap() >= 1000, "{n}");
    }
    // Zone a's nodes were back before zone b's were taken out.
    let uncordons = cordons(&c);
    let cordon_at = |n: &str| {
        uncordons
            .iter()
            .find(|(node, on, _)| node == n && *on)
            .unwrap()
            .2
    };
    let back_at = |n: &str| {
        uncordons
            .iter()
            .find(|(node, on, _)| node == n && !*on)
            .unwrap()
            .2
    };
    for a in ["r1", "r2"] {
        for b in ["r3", "r4"] {
            assert!(back_at(a) <= cordon_at(b), "{uncordons:?}");
        }
    }
    // The progress says each phase, with the pool's total.
    assert!(out.stderr.contains("pool: 4/4 done"), "{}", out.stderr);
    assert!(
        out.stderr.contains("waiting for the reboot"),
        "{}",
        out.stderr
    );
}

/// When each node became unschedulable (true) and schedulable again
/// (false), from the sandbox's history: (node, unschedulable, ms). Every
/// node starts schedulable.
fn cordons(c: &Cluster) -> Vec<(String, bool, u128)> {
    let mut last: BTreeMap<String, bool> = BTreeMap::new();
    let mut out = Vec::new();
    for e in c.history(Resource::Nodes) {
        let n = e.object();
        let name = n["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let now = n["spec"]["unschedulable"] == true;
        if last.insert(name.clone(), now).unwrap_or(false) != now {
            out.push((name, now, crate::harness::epoch_ms(e.at)));
        }
    }
    out
}

/// The phase a node's lock records.
pub(crate) fn lease_phase(c: &Cluster, node: &str) -> Option<String> {
    let lease = c.get(
        Resource::Leases,
        "kube-system",
        &format!("kubectl-maintain-{node}"),
    )?;
    lease["metadata"]["annotations"]["kubectl-maintain.io/phase"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn a_roll_killed_mid_node_is_finished_by_running_it_again() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let mut args = roll_args(&reboot("3"));
    args[5] = "1".into(); // --max-parallel 1
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = c.maintain_spawn(&args);
    // Killed while the first node waits to come back from its reboot.
    let deadline = Instant::now() + Duration::from_secs(30);
    while lease_phase(&c, "r1").as_deref() != Some("wait-ready") {
        assert!(Instant::now() < deadline, "r1 never reached wait-ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut child = child;
    child.kill().expect("kill -9");
    let _ = child.wait();
    assert_eq!(
        c.get(Resource::Nodes, "", "r1").unwrap()["spec"]["unschedulable"],
        true
    );
    // The budgets its drain touched are recorded, for the rerun's settle
    // (--wait-for-budgets) to wait on though it did not drain.
    let lease = c
        .get(Resource::Leases, "kube-system", "kubectl-maintain-r1")
        .expect("r1's lease");
    assert_eq!(
        lease["metadata"]["annotations"]["kubectl-maintain.io/budgets"], "apps/web",
        "{lease}"
    );
    let out = c.maintain(&args);
    out.success();
    let report = roll_report(&out);
    let r1 = &report["nodes"].as_array().unwrap()[0];
    assert_eq!(r1["node"], "r1");
    assert_eq!(r1["status"], "done", "{out:?}");
    assert_eq!(r1["resumedFrom"], "waitReady", "{out:?}");
    assert!(
        out.stderr
            .contains("took over the lock of kubectl-maintain/"),
        "{}",
        out.stderr
    );
    for (node, status) in statuses(&report) {
        assert_eq!(status, "done", "{node}: {out:?}");
        // Rebooted once: the rerun did not run r1's action again.
        assert_eq!(boots(&c, &node).len(), 2, "{node}: {:?}", boots(&c, &node));
        assert_ne!(
            c.get(Resource::Nodes, "", &node).unwrap()["spec"]["unschedulable"],
            true
        );
    }
    // The same command once more: the roll finished, so it starts over.
    let mut again = args.clone();
    again.push("--dry-run");
    let again = c.maintain(&again);
    again.success();
    assert!(again.stdout.contains("batch 1: r1\n"), "{again:?}");
}

/// r1 rolled with an action that does nothing, waiting for its budgets.
const ROLL_R1: [&str; 8] = [
    "roll",
    "r1",
    "--ignore-daemonsets",
    "--exec",
    "true",
    "--wait-for-budgets",
    "-o",
    "json",
];

/// r1 and two spares; `slow`'s replacements take 3 s to be Ready: a roll
/// that did not wait for its budget would end with it short.
fn slow_replacements() -> Cluster {
    pool(&[("r1", "a")], 2, 3, "maxUnavailable: 1")
        .deployment_with("slow", 3, |d| {
            // One on each of the three nodes: r1's replacement waits for
            // its uncordon.
            template(d)["metadata"]["annotations"] =
                json!({"sandbox.kubectl-maintain.io/ready-seconds": "3",
                       "sandbox.kubectl-maintain.io/shutdown-seconds": "2"});
            template(d)["spec"]["topologySpreadConstraints"] = json!([{
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "slow"}},
            }]);
        })
        .pdb("slow", "maxUnavailable: 1")
        .start(33)
}

/// Every budget of the scenario has all its pods healthy.
#[track_caller]
fn budgets_whole(c: &Cluster) {
    for name in ["web", "slow"] {
        let pdb = c.get(Resource::PodDisruptionBudgets, "apps", name).unwrap();
        assert_eq!(
            pdb["status"]["currentHealthy"], pdb["status"]["expectedPods"],
            "{pdb}"
        );
    }
}

#[test]
fn roll_waits_for_the_budgets_its_drain_touched_before_it_ends() {
    let c = slow_replacements();
    c.wait_settled();
    let out = c.maintain(&ROLL_R1);
    out.success();
    budgets_whole(&c);
    assert_eq!(statuses(&roll_report(&out))["r1"], "done", "{out:?}");
}

#[test]
fn a_rerun_waits_for_the_budgets_of_a_killed_drain_too() {
    let c = slow_replacements();
    c.wait_settled();
    let args = ROLL_R1;
    let on_r1: Vec<String> = c
        .pods_on("r1")
        .into_iter()
        .filter(|p| p.starts_with("apps/"))
        .collect();
    let child = c.maintain_spawn(&args);
    // Killed once every pod of r1 was evicted, while they stop (2 s): the
    // rerun's drain evicts nothing, yet it must wait for the budgets the
    // first run touched.
    c.wait_for("r1's evictions", Duration::from_secs(20), |c| {
        let evicted: BTreeSet<String> = c.evictions().into_iter().map(|(p, _)| p).collect();
        on_r1.iter().all(|p| evicted.contains(p))
    });
    let mut child = child;
    child.kill().expect("kill -9");
    let _ = child.wait();
    // Rerun once they are gone: its own list of r1's pods is empty.
    c.wait_for("r1's pods gone", Duration::from_secs(20), |c| {
        !c.pods_on("r1").iter().any(|p| p.starts_with("apps/"))
    });
    let out = c.maintain(&args);
    out.success();
    budgets_whole(&c);
    assert_eq!(statuses(&roll_report(&out))["r1"], "done", "{out:?}");
}

#[test]
fn a_roll_names_the_limit_a_waiting_node_waits_on() {
    let c = pool(
        &[("r1", "a"), ("r2", "a"), ("r3", "a")],
        1,
        3,
        "maxUnavailable: 1",
    )
    .start(33);
    c.wait_settled();
    let out = c.maintain(&[
        "roll",
        "r1",
        "r2",
        "r3",
        "--ignore-daemonsets",
        "--max-parallel",
        "2",
        "--exec",
        "sleep 1",
    ]);
    out.success();
    assert!(
        out.stderr.contains(
            // A pipe under no locale: ASCII (crate::ui::glyphs).
            "node/r3 waiting: for a free slot (2 nodes in progress, --max-parallel 2) - pool: 0/3 done, 2 in progress"
        ),
        "{out:?}"
    );
    assert!(!out.stderr.contains("--max-unavailable"), "{out:?}");
}

#[test]
fn two_rolls_of_one_pool_never_take_the_same_node() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let args = roll_args(&reboot("1"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = c.maintain_spawn(&args);
    let second = c.maintain_spawn(&args);
    let first = Cluster::finish(first, Duration::from_secs(120));
    let second = Cluster::finish(second, Duration::from_secs(120));
    first.success();
    second.success();
    let (a, b) = (
        statuses(&roll_report(&first)),
        statuses(&roll_report(&second)),
    );
    for n in FOUR {
        // Each node rolled by one run; the other found it done.
        let done_by = [&a, &b]
            .iter()
            .filter(|s| s.get(n).map(String::as_str) == Some("done"))
            .count();
        assert_eq!(done_by, 1, "{n}: {a:?} {b:?}");
        assert_eq!(boots(&c, n).len(), 2, "{n} rebooted more than once");
    }
    // The locks' history: a lease never changed holder while held.
    for n in FOUR {
        let name = format!("kubectl-maintain-{n}");
        let mut holder: Option<String> = None;
        for e in c.history(Resource::Leases) {
            let l = e.object();
            if l["metadata"]["name"] != name.as_str() {
                continue;
            }
            let now = l["spec"]["holderIdentity"].as_str().map(str::to_string);
            if let (Some(h), Some(n)) = (&holder, &now) {
                assert_eq!(h, n, "{name} passed from {h} to {n} while held");
            }
            holder = now;
        }
    }
}

#[test]
fn roll_keeps_etcd_quorum() {
    let cp = [("node-role.kubernetes.io/control-plane", "")];
    let c = Scenario::new()
        .labelled_node("cp1", &cp)
        .labelled_node("cp2", &cp)
        .object(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "cp3", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]},
        }))
        .node("w1")
        .start(33);
    c.wait_idle();
    // cp3 is down already: taking cp1 out too leaves etcd one of three.
    let out = c.maintain(&["roll", "cp1", "cp2", "--ignore-daemonsets", "-o", "json"]);
    out.code(3);
    let report = roll_report(&out);
    for (node, status) in statuses(&report) {
        assert_eq!(status, "notStarted", "{node}: {out:?}");
    }
    assert!(
        out.stdout.contains("etcd keeps quorum with at most 1 out"),
        "{out:?}"
    );
    // Only MaintenancePlanned was said (and taken back, with the run's
    // claim on the node, crate::publish::planners): nothing is cordoned.
    for node in ["cp1", "cp2"] {
        let n = c.get(Resource::Nodes, "", node).unwrap();
        assert!(
            n["spec"]["unschedulable"].is_null(),
            "{node} not cordoned: {n}"
        );
        let annotations = n["metadata"]["annotations"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(
            !annotations
                .keys()
                .any(|k| k.starts_with("kubectl-maintain.io/planned-by-")),
            "{node}'s claim taken back: {n}"
        );
    }
    let out = c.maintain(&[
        "roll",
        "cp1",
        "--ignore-daemonsets",
        "--allow-quorum-loss",
        "--ready-timeout",
        "5s",
    ]);
    out.success();
}

#[test]
fn a_roll_that_may_not_watch_nodes_lists_them_and_says_so() {
    let c = four_nodes().start(34);
    c.wait_settled();
    c.sandbox.deny(kube_sandbox::config::Deny {
        verb: "watch".into(),
        resource: "nodes".into(),
        namespace: String::new(),
    });
    let out = roll_rebooting_all_four(&c);
    let said = out
        .stderr
        .lines()
        .filter(|l| l.contains("warning: cannot watch nodes"))
        .count();
    assert_eq!(said, 1, "{out:?}");
}
