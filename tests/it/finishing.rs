//! Drains that finish: `--deadline` deletes what a budget still holds, each
//! pod its grace period before the deadline; `--surge` gives a single
//! replica a twin first.

use std::time::{Duration, Instant};

use kube_sandbox::resources::Resource;
use serde_json::json;

use crate::harness::{Asked, Cluster, log_ms};
use crate::scenario::{Scenario, template};

#[test]
fn the_deadline_deletes_a_held_pod_its_grace_period_early() {
    // One replica behind minAvailable: 1: no eviction is ever allowed.
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("solo", 1, |d| {
            template(d)["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
            template(d)["spec"]["terminationGracePeriodSeconds"] = json!(10);
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

/// The table never hides a forced pod: its own column, its own section
/// naming the budget bypassed, the budget table saying so, and the line
/// that ends the report naming the node left cordoned (#54).
#[test]
fn the_table_names_a_pod_deleted_at_the_deadline() {
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("solo", 1, |d| {
            template(d)["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
        })
        .pdb("solo", "minAvailable: 1")
        .start(33);
    c.wait_settled();
    let out = c.maintain(&[
        "drain",
        "n1",
        "--deadline",
        "4s",
        "--grace-period",
        "1",
        "--timeout",
        "20s",
        "--lines=report",
    ]);
    out.success();
    let table: Vec<&str> = out.stdout.lines().collect();
    let header: Vec<&str> = table[0].split_whitespace().collect();
    let row: Vec<&str> = table[1].split_whitespace().collect();
    let column = |name: &str| {
        let i = header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name} column: {}", out.stdout));
        row[i]
    };
    assert_eq!(column("FORCED"), "1", "{}", out.stdout);
    assert_eq!(column("EVICTED"), "0", "{}", out.stdout);
    assert!(
        out.stdout
            .contains("Deleted at --deadline, PodDisruptionBudgets bypassed:\n* apps/solo-"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("bypassed at --deadline"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "1 of 1 drained; left cordoned: n1. `kubectl maintain uncordon n1` returns it to service."
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn a_deadline_past_the_timeout_is_refused_before_any_request() {
    let c = Scenario::new().node("n1").start(33);
    let mark = c.mark();
    let out = c.maintain(&["drain", "n1", "--deadline", "5m", "--timeout", "1m"]);
    out.code(2);
    assert!(
        out.stderr
            .contains("--deadline 5m must be shorter than --timeout 1m"),
        "{out:?}"
    );
    c.assert_asked(mark, Asked::Nothing, "--deadline past --timeout");
}

/// `solo` is back at one replica, the surge's record gone.
#[track_caller]
fn assert_scaled_back(c: &Cluster) {
    let d = c.get(Resource::Deployments, "apps", "solo").unwrap();
    assert_eq!(d["spec"]["replicas"], 1, "{d}");
    let record = d["metadata"]["annotations"].get("kubectl-maintain.io/surge");
    assert!(record.is_none(), "{d}");
}

/// A single replica behind `minAvailable: 1` on n1, room for it on n2.
fn solo() -> Scenario {
    solo_with(|_| {})
}

/// `solo`, its Deployment changed by `more` first.
fn solo_with(more: impl FnOnce(&mut serde_json::Value)) -> Scenario {
    Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("solo", 1, |d| {
            more(d);
            template(d)["spec"]["affinity"] = json!({"nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
                    "preference": {"matchExpressions": [{"key": "kubernetes.io/hostname",
                        "operator": "In", "values": ["n1"]}]}}]}});
        })
        .pdb("solo", "minAvailable: 1")
}

#[test]
fn surge_lets_a_single_replica_go_without_dropping_below_its_budget() {
    let c = solo().start(33);
    c.wait_settled();
    let since = std::time::SystemTime::now();
    let out = c.maintain(&["drain", "n1", "--surge", "--timeout", "40s", "-o", "json"]);
    out.success();
    assert_eq!(out.report().node("n1").status, "drained", "{out:?}");
    assert!(
        out.stderr.contains("surging Deployment apps/solo"),
        "{out:?}"
    );
    // The budget's healthy count, in every status written meanwhile, never below 1.
    let healthy: Vec<i64> = c
        .history(Resource::PodDisruptionBudgets)
        .iter()
        .filter(|e| e.at >= since)
        .filter_map(|e| e.object()["status"]["currentHealthy"].as_i64())
        .collect();
    assert!(
        !healthy.is_empty() && healthy.iter().all(|h| *h >= 1),
        "{healthy:?}"
    );
    // Scaled back, the record gone, one pod running elsewhere.
    assert_scaled_back(&c);
    c.wait_for("one solo pod on n2", Duration::from_secs(10), |c| {
        let on_n2 = c
            .pods_on("n2")
            .iter()
            .filter(|p| p.starts_with("apps/solo-"))
            .count();
        let all = c
            .pods()
            .iter()
            .filter(|p| p["metadata"]["labels"]["app"] == "solo")
            .count();
        on_n2 == 1 && all == 1
    });
}

#[test]
fn a_plan_rule_surges_only_the_pods_it_selects() {
    // Two single replicas behind minAvailable: 1; the plan surges `solo` only.
    let c = solo()
        .deployment_with("other", 1, |d| {
            template(d)["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
        })
        .pdb("other", "minAvailable: 1")
        .start(33);
    c.wait_settled();
    let plan = c.dir.path().join("plan.yaml");
    std::fs::write(
        &plan,
        "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  rules:\n  - name: solo\n    action: surge\n    podSelector: {matchLabels: {app: solo}}\n",
    )
    .unwrap();
    let out = c.maintain(&[
        "drain",
        "n1",
        "--plan",
        plan.to_str().unwrap(),
        "--timeout",
        "8s",
    ]);
    out.code(3);
    assert!(
        out.stderr.contains("surging Deployment apps/solo"),
        "{out:?}"
    );
    assert!(
        !out.stderr.contains("surging Deployment apps/other"),
        "{out:?}"
    );
    assert!(
        c.pods_on("n1").iter().all(|p| !p.starts_with("apps/solo-")),
        "{:?}",
        c.pods_on("n1")
    );
    assert!(c.pods_on("n1").iter().any(|p| p.starts_with("apps/other-")));
    assert_scaled_back(&c);
    let other = c.get(Resource::Deployments, "apps", "other").unwrap();
    assert_eq!(other["spec"]["replicas"], 1);
}

#[test]
fn a_statefulset_of_one_is_reported_as_not_surgeable() {
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .object(json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "apps"},
            "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}},
                    "spec": {"nodeSelector": {"kubernetes.io/hostname": "n1"},
                        "containers": [{"name": "c", "image": "db"}]}}}}))
        .pdb("db", "minAvailable: 1")
        .start(33);
    c.wait_settled();
    let out = c.maintain(&["drain", "n1", "--surge", "--timeout", "3s", "-o", "json"]);
    out.code(3);
    let report = out.report();
    let pod = report.node("n1").pod("apps/db-0");
    assert_eq!(pod.result["state"], "remaining", "{out:?}");
    let warning = pod.warning.as_deref().unwrap_or_default();
    assert!(warning.contains("not surged: StatefulSet db"), "{out:?}");
    assert!(out.stderr.contains("not surged: StatefulSet db"), "{out:?}");
    assert!(c.get(Resource::StatefulSets, "apps", "db").unwrap()["spec"]["replicas"] == 1);
}

/// One replica behind `minAvailable: 1` on a lone node, surged by a
/// `drain --surge` killed with kill -9 while the surged replica stays
/// Pending: the surge is left for `uncordon` to scale back.
fn surge_left_by_a_killed_drain() -> Cluster {
    let c = Scenario::new()
        .node("n1")
        .deployment("solo", 1)
        .pdb("solo", "minAvailable: 1")
        .start(33);
    c.wait_settled();
    let child = c.maintain_spawn(&["drain", "n1", "--surge"]);
    c.wait_for("the surge", Duration::from_secs(10), |c| {
        c.get(Resource::Deployments, "apps", "solo").unwrap()["spec"]["replicas"] == 2
    });
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status();
    let killed = Cluster::finish(child, Duration::from_secs(5));
    assert_ne!(killed.code, 0, "killed");
    c
}

#[test]
fn uncordon_scales_back_what_a_killed_surge_left() {
    let c = surge_left_by_a_killed_drain();
    c.maintain(&["uncordon", "n1"]).success();
    assert_scaled_back(&c);
}

/// A StatefulSet of one with a CSI volume on n1 (zone a, as n2), whose
/// volumes detach `detach` seconds after their pod left.
fn db_with_volume(detach: &str) -> Scenario {
    let ann = |d: &str| json!({"sandbox.kubectl-maintain.io/detach-seconds": d});
    Scenario::new()
        .object(
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1",
            "labels": {"topology.kubernetes.io/zone": "a"}, "annotations": ann(detach)}}),
        )
        .object(
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2",
            "labels": {"topology.kubernetes.io/zone": "a"}, "annotations": ann(detach)}}),
        )
        .zonal_db(|db| {
            db["spec"]["template"]["spec"]["affinity"] = json!({"nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
                    "preference": {"matchExpressions": [{"key": "kubernetes.io/hostname",
                        "operator": "In", "values": ["n1"]}]}}]}});
        })
}

#[test]
fn a_drain_that_may_not_list_volume_attachments_says_so_once_and_does_not_wait() {
    let c = db_with_volume("30").start(33);
    c.wait_settled();
    c.wait_for("the volume attached", Duration::from_secs(10), |c| {
        attachments_on(c, "n1") == 1
    });
    // Everything the drain reads and writes but VolumeAttachments.
    let resources = [
        "nodes",
        "nodes/status",
        "pods",
        "pods/eviction",
        "persistentvolumeclaims",
        "poddisruptionbudgets",
        "events",
        "daemonsets",
        "statefulsets",
        "replicasets",
        "deployments",
        "namespaces",
    ];
    c.sandbox
        .set_role(Some(vec![kube_sandbox::config::Rule::new(
            &["*"],
            &resources,
        )]));
    let started = Instant::now();
    let out = c.maintain(&["drain", "n1", "-o", "json"]);
    out.success();
    assert_eq!(out.report().node("n1").status, "drained", "{out:?}");
    assert_eq!(
        out.stderr
            .matches("warning: cannot list VolumeAttachments")
            .count(),
        1,
        "{out:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(25), "{out:?}");
}

/// The VolumeAttachments on a node, by the real kubectl.
fn attachments_on(c: &Cluster, node: &str) -> usize {
    let out = c.kubectl(&["get", "volumeattachments", "-o", "json"]);
    out.success();
    let list: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|va| va["spec"]["nodeName"] == node)
        .count()
}

#[test]
fn a_node_is_drained_only_once_its_volumes_are_detached() {
    let c = db_with_volume("2").start(33);
    c.wait_settled();
    assert_eq!(c.pods_on("n1"), ["apps/db-0"]);
    c.wait_for("the volume attached", Duration::from_secs(10), |c| {
        attachments_on(c, "n1") == 1
    });
    let out = c.maintain(&["drain", "n1", "-o", "json"]);
    out.success();
    assert_eq!(out.report().node("n1").status, "drained", "{out:?}");
    assert!(
        out.stderr.contains("waiting for 1 volume to detach"),
        "{out:?}"
    );
    // Said before anything changed: kubectl drain does not wait for volumes.
    let warned = out.stderr.find("pods to evict use PersistentVolumeClaims");
    assert!(
        warned < out.stderr.find("cordoned") && warned.is_some(),
        "{out:?}"
    );
    assert_eq!(
        attachments_on(&c, "n1"),
        0,
        "drained with the volume attached"
    );
    // Followed by one list and a watch of them, not a list each second.
    let lists: Vec<bool> = c
        .requests()
        .into_iter()
        .filter(|r| {
            r.user_agent.starts_with("kubectl-maintain")
                && r.path == "/apis/storage.k8s.io/v1/volumeattachments"
        })
        .map(|r| r.query.contains("watch=true"))
        .collect();
    assert_eq!(lists.iter().filter(|w| !**w).count(), 1, "{lists:?}");
    assert!(lists.contains(&true), "{lists:?}");

    // Not waited for, the volume is still attached when the drain ends.
    let c = db_with_volume("5").start(33);
    c.wait_settled();
    c.wait_for("the volume attached", Duration::from_secs(10), |c| {
        attachments_on(c, "n1") == 1
    });
    c.maintain(&["drain", "n1", "--skip-wait-for-detach"])
        .success();
    assert_eq!(attachments_on(&c, "n1"), 1);

    // Past --detach-timeout: timed out, naming the volume.
    let c = db_with_volume("30").start(33);
    c.wait_settled();
    c.wait_for("the volume attached", Duration::from_secs(10), |c| {
        attachments_on(c, "n1") == 1
    });
    let out = c.maintain(&["drain", "n1", "--detach-timeout", "1s", "-o", "json"]);
    out.code(3);
    let n1 = out.report();
    let n1 = n1.node("n1");
    assert_eq!(n1.status, "timedOut", "{out:?}");
    let message = n1.message.as_deref().unwrap_or_default();
    assert!(
        message.contains("volumes still attached after 1"),
        "{out:?}"
    );
    let named = message.contains("pvc-") && message.contains("VolumeAttachment csi-");
    assert!(named, "{out:?}");
}

/// The names in the node's `status.volumesAttached`.
fn volumes_attached(c: &Cluster, node: &str) -> Vec<String> {
    let node = c.get(Resource::Nodes, "", node).expect("the node");
    node["status"]["volumesAttached"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str().map(str::to_string))
        .collect()
}

/// The db's volume as the attach/detach controller names it there: a CSI
/// volume's `kubernetes.io/csi/<driver>^<volumeHandle>`.
fn db_volume_entry(c: &Cluster) -> String {
    let pvc = c
        .get(Resource::PersistentVolumeClaims, "apps", "data-db-0")
        .expect("the db's claim");
    let pv = pvc["spec"]["volumeName"]
        .as_str()
        .expect("bound")
        .to_string();
    let pv = c
        .get(Resource::PersistentVolumes, "", &pv)
        .expect("its volume");
    let csi = &pv["spec"]["csi"];
    format!(
        "kubernetes.io/csi/{}^{}",
        csi["driver"].as_str().unwrap_or_default(),
        csi["volumeHandle"].as_str().unwrap_or_default()
    )
}

/// The db's volume attached to n1, then its VolumeAttachment deleted: the
/// volume shows only in n1's `status.volumesAttached`, as an in-tree one
/// or one of a CSI driver that needs no attachment object does. Its entry.
fn only_in_node_status(c: &Cluster) -> String {
    c.wait_settled();
    c.wait_for("the volume attached", Duration::from_secs(10), |c| {
        attachments_on(c, "n1") == 1
    });
    let entry = db_volume_entry(c);
    assert_eq!(
        volumes_attached(c, "n1"),
        std::slice::from_ref(&entry),
        "listed in n1's status"
    );
    c.kubectl(&["delete", "volumeattachments", "--all"])
        .success();
    entry
}

/// The sandbox's attach/detach controller lists an attached volume in the
/// Node's `status.volumesAttached` and takes it out when it detaches; a
/// volume listed there alone (in-tree volumes and some CSI drivers show
/// only there) holds the node as a VolumeAttachment does, as Cluster API
/// waits (#67).
#[test]
fn a_volume_still_in_the_nodes_status_holds_the_node_as_its_attachment_does() {
    // Listed while attached, gone once detached.
    let c = db_with_volume("0.2").start(33);
    c.wait_settled();
    c.wait_for("the volume attached", Duration::from_secs(10), |c| {
        attachments_on(c, "n1") == 1
    });
    assert_eq!(volumes_attached(&c, "n1"), [db_volume_entry(&c)]);
    c.maintain(&["drain", "n1"]).success();
    assert_eq!(attachments_on(&c, "n1"), 0);
    assert_eq!(volumes_attached(&c, "n1"), Vec::<String>::new());
    // Listed alone, past --detach-timeout: the entry is named.
    let c = db_with_volume("0.2").start(33);
    let entry = only_in_node_status(&c);
    let out = c.maintain(&["drain", "n1", "--detach-timeout", "3s", "-o", "json"]);
    out.code(3);
    let report = out.report();
    let message = report.node("n1").message.clone().unwrap_or_default();
    assert!(
        message.contains(&format!("(volumesAttached {entry})")),
        "{out:?}"
    );
    // Listed alone, waited for: the drain ends once the entry is gone.
    let c = db_with_volume("0.2").start(33);
    only_in_node_status(&c);
    let mut run = c.maintain_watched(&["drain", "n1"]);
    run.wait_for_stderr("waiting for 1 volume to detach", Duration::from_secs(20));
    assert!(
        run.running(),
        "drained with the volume in the node's status"
    );
    let patch = json!({"status": {"volumesAttached": []}}).to_string();
    c.kubectl(&[
        "patch",
        "node",
        "n1",
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ])
    .success();
    let done = run.finish(Duration::from_secs(20));
    done.success();
}

#[test]
fn a_deadline_inside_grace_periods_is_refused_naming_the_pods_in_drain_and_roll() {
    let c = crate::pool::four_nodes().start(33);
    c.wait_settled();
    let mut drain = crate::pool::DRAIN_FOUR.to_vec();
    drain.extend(["--deadline", "4s"]);
    let roll = [
        "roll",
        "-l",
        "pool=blue",
        "--ignore-daemonsets",
        "--deadline",
        "4s",
        "--yes",
    ];
    for args in [&drain[..], &roll[..]] {
        let mark = c.mark();
        let out = c.maintain(args);
        out.code(2);
        let line = out
            .stderr
            .lines()
            .find(|l| l.contains("--deadline 4.0s is shorter than the grace period of"))
            .unwrap_or_else(|| panic!("{out:?}"));
        let web: Vec<String> = crate::pool::FOUR
            .iter()
            .flat_map(|n| c.pods_on(n))
            .filter(|p| p.starts_with("apps/web-"))
            .collect();
        assert!(!web.is_empty());
        for pod in web {
            assert!(line.contains(&format!("{pod} (30s)")), "{pod}: {line}");
        }
        assert!(line.contains("--allow-short-deadline"), "{line}");
        c.assert_asked(
            mark,
            Asked::NoWrite,
            "a deadline shorter than a grace period",
        );
    }
    // Said yes to: the drain goes on.
    let mut yes = drain.clone();
    yes.push("--allow-short-deadline");
    c.maintain(&yes).success();
}

#[test]
fn an_uncordon_that_cannot_scale_back_keeps_what_its_rerun_needs() {
    let c = surge_left_by_a_killed_drain();
    // Deployments may not be read: the scale-back cannot happen now.
    c.sandbox
        .set_role(Some(vec![kube_sandbox::config::Rule::new(
            &["*"],
            &["nodes", "nodes/status", "events", "pods"],
        )]));
    let out = c.maintain(&["uncordon", "n1"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("error: unable to uncordon node \"n1\":")
            && out.stderr.contains("Deployments"),
        "{out:?}"
    );
    // The node keeps its record (and its cordon) for the rerun.
    let n1 = c.get(Resource::Nodes, "", "n1").unwrap();
    assert_eq!(n1["spec"]["unschedulable"], true, "{n1}");
    c.sandbox.set_role(None);
    c.maintain(&["uncordon", "n1"]).success();
    assert_scaled_back(&c);
    let n1 = c.get(Resource::Nodes, "", "n1").unwrap();
    assert_ne!(n1["spec"]["unschedulable"], true, "{n1}");
}

#[test]
fn surge_is_decided_again_once_the_budget_stops_counting_a_terminating_pod() {
    // Two replicas on n1, each taking 4 s to stop, scaled down to one just
    // before the drain: `minAvailable: 1` counts the terminating pod too
    // (expected 2, healthy 1), so at the first refusal no surge looks
    // needed; 4 s later the budget allows nothing even with every pod
    // healthy, and only a surge lets the pod go.
    let c = solo_with(|d| {
        template(d)["metadata"]["annotations"] =
            json!({"sandbox.kubectl-maintain.io/shutdown-seconds": "4"});
    })
    .start(33);
    c.wait_settled();
    let solo_on_n1 = |c: &Cluster| {
        c.pods_on("n1")
            .iter()
            .filter(|p| p.starts_with("apps/solo-"))
            .count()
    };
    // The second replica on n1 too: n2 cordoned meanwhile.
    c.kubectl(&["cordon", "n2"]).success();
    c.kubectl(&["scale", "deployment", "solo", "-n", "apps", "--replicas=2"])
        .success();
    c.wait_for("two solo pods on n1", Duration::from_secs(10), |c| {
        solo_on_n1(c) == 2
    });
    c.wait_settled();
    c.kubectl(&["uncordon", "n2"]).success();
    c.kubectl(&["scale", "deployment", "solo", "-n", "apps", "--replicas=1"])
        .success();
    c.wait_for("a solo pod terminating", Duration::from_secs(10), |c| {
        c.pods().iter().any(|p| {
            p["metadata"]["labels"]["app"] == "solo"
                && !p["metadata"]["deletionTimestamp"].is_null()
        })
    });
    let out = c.maintain(&["drain", "n1", "--surge", "--timeout", "30s", "-o", "json"]);
    out.success();
    assert_eq!(out.report().node("n1").status, "drained", "{out:?}");
    assert!(
        out.stderr.contains("surging Deployment apps/solo"),
        "{out:?}"
    );
    assert_scaled_back(&c);
}
