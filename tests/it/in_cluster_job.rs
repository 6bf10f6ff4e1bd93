//! A run handed to the cluster, run for real: the sandbox's kubelet runs
//! the Job's pod as this binary, with the rendered ServiceAccount's token
//! over HTTPS, and RBAC decides each of its requests.

use std::time::Duration;

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use serde_json::Value;

use crate::harness::Cluster;
use crate::in_cluster::{ROLL, run_name};
use crate::pool::four_nodes;

const POOL: [&str; 4] = ["r1", "r2", "r3", "r4"];

fn job_done(c: &Cluster, name: &str) -> bool {
    c.get(Resource::Jobs, "kube-system", name)
        .is_some_and(|j| pods::condition_true(&j, "Complete"))
}

/// The Job's pods as they are now.
fn job_pods(c: &Cluster, name: &str) -> Vec<std::sync::Arc<Value>> {
    c.pods()
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["job-name"] == name)
        .collect()
}

/// `kubectl auth can-i VERB WHAT --as SA`: "yes" or "no".
fn can_i(c: &Cluster, sa: &str, verb: &str, what: &[&str]) -> String {
    c.kubectl(&[&["auth", "can-i", verb][..], what, &["--as", sa]].concat())
        .stdout
        .trim()
        .to_string()
}

/// Every pool node rolled: its lease says the roll finished, and it is back in service.
fn every_node_rolled(c: &Cluster) {
    for node in POOL {
        let n = c.get(Resource::Nodes, "", node).expect("node");
        assert_ne!(n["spec"]["unschedulable"], true, "{node} still cordoned");
        let lease = c
            .get(
                Resource::Leases,
                "kube-system",
                &format!("kubectl-maintain-{node}"),
            )
            .expect("the node's lease");
        assert_eq!(
            lease["metadata"]["annotations"]["kubectl-maintain.io/phase"], "finished",
            "{node}: {lease}"
        );
    }
}

/// The spare nodes cordoned: the Job's pod can only sit on a pool node.
fn only_the_pool_schedulable(c: &Cluster) {
    c.kubectl(&["cordon", "spare0", "spare1"]).success();
}

#[test]
fn a_roll_run_as_the_jobs_pod_survives_its_own_eviction_and_finishes() {
    let c = Cluster::start_running_our_image(&four_nodes().yaml(), 33);
    c.wait_settled();
    only_the_pool_schedulable(&c);
    let out = c.maintain(&ROLL);
    out.success();
    let name = run_name(&out.stderr);
    let logs = c.maintain_spawn(&["logs", "-f"]);
    let status = c.maintain_spawn(&["status", "-w"]);
    let sa = format!("system:serviceaccount:kube-system:{name}");
    // The rendered RBAC, and no more: the token is the ServiceAccount's.
    let can = |verb: &str, what: &[&str]| can_i(&c, &sa, verb, what);
    assert_eq!(can("patch", &["nodes"]), "yes");
    assert_eq!(can("create", &["pods", "--subresource=eviction"]), "yes");
    assert_eq!(can("create", &["pods"]), "no");
    assert_eq!(can("delete", &["nodes"]), "no");
    assert_eq!(can("get", &["secrets", "-A"]), "no");

    let first_node = std::cell::RefCell::new(None);
    c.wait_for(
        "the Job's pod on a pool node",
        Duration::from_secs(20),
        |c| {
            let on = job_pods(c, &name)
                .first()
                .and_then(|p| pods::node_name(p).map(str::to_string));
            *first_node.borrow_mut() = on.clone();
            on.is_some_and(|n| n.starts_with('r'))
        },
    );
    c.wait_for("the Job complete", Duration::from_secs(120), |c| {
        job_done(c, &name)
    });
    every_node_rolled(&c);
    // Its first pod was evicted with its node; another took the roll up.
    let pods_made: std::collections::BTreeSet<String> = c
        .history(Resource::Pods)
        .iter()
        .map(|e| e.object())
        .filter(|o| o["metadata"]["labels"]["job-name"] == name.as_str())
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        pods_made.len() >= 2,
        "{pods_made:?} (first on {first_node:?})"
    );
    let refused: Vec<_> = c
        .requests()
        .into_iter()
        .filter(|r| r.status == 401 || r.status == 403)
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
    // Its log is served: the last pod's run ends with the pool done.
    let log = c.kubectl(&["-n", "kube-system", "logs", &format!("job/{name}")]);
    log.success();
    assert!(log.stdout.contains("pool: 4/4 done"), "{log:?}");
    // Followed from elsewhere to the end, across the pods.
    let logs = Cluster::finish(logs, Duration::from_secs(30));
    logs.success();
    assert!(logs.stderr.contains("was replaced by pod"), "{logs:?}");
    assert!(logs.stdout.contains("node/r1 done"), "{logs:?}");
    assert!(logs.stdout.contains("pool: 4/4 done"), "{logs:?}");
    let status = Cluster::finish(status, Duration::from_secs(30));
    status.success();
    assert!(
        status
            .stdout
            .contains(&format!("run {name} in kube-system: complete")),
        "{status:?}"
    );
    assert!(status.stdout.contains("nodes: 4/4 done"), "{status:?}");
    assert!(
        status.stdout.contains("cordoned"),
        "a node seen in its drain: {status:?}"
    );
    nothing_outlives_the_run(&c, &name);
}

/// A finished run's rights are gone: it deleted its ClusterRole, and the
/// garbage collector what that role owned (its binding, its Roles in other
/// namespaces); what is in the Job's namespace is the Job's, and goes with it.
fn nothing_outlives_the_run(c: &Cluster, name: &str) {
    c.wait_for(
        "the run's cluster-wide rights gone",
        Duration::from_secs(10),
        |c| {
            c.get(Resource::ClusterRoles, "", name).is_none()
                && c.get(Resource::ClusterRoleBindings, "", name).is_none()
                && c.get(Resource::Roles, "kube-node-lease", name).is_none()
                && c.get(Resource::RoleBindings, "kube-node-lease", name)
                    .is_none()
        },
    );
    let job = c.get(Resource::Jobs, "kube-system", name).expect("the Job");
    let owned = [
        Resource::ServiceAccounts,
        Resource::ConfigMaps,
        Resource::Roles,
        Resource::RoleBindings,
    ];
    for res in owned {
        let object = c
            .get(res, "kube-system", name)
            .expect("still there with its Job");
        assert_eq!(
            object["metadata"]["ownerReferences"][0]["uid"], job["metadata"]["uid"],
            "{res:?}: {object}"
        );
    }
    c.kubectl(&["-n", "kube-system", "delete", "job", name])
        .success();
    c.wait_for(
        "the Job's objects collected",
        Duration::from_secs(10),
        |c| {
            owned
                .iter()
                .all(|res| c.get(*res, "kube-system", name).is_none())
        },
    );
}

#[test]
fn a_roll_killed_mid_node_is_finished_by_its_restart() {
    let c = Cluster::start_running_our_image(&slow_pool(), 33);
    c.wait_settled();
    let out = c.maintain(&ROLL);
    out.success();
    let name = run_name(&out.stderr);
    let logs = c.maintain_spawn(&["logs", "-f", &name]);
    let pod = std::cell::RefCell::new(String::new());
    c.wait_for("a node in its drain", Duration::from_secs(30), |c| {
        let cordoned = POOL.iter().any(|n| {
            c.get(Resource::Nodes, "", n)
                .is_some_and(|n| n["spec"]["unschedulable"] == true)
        });
        if let Some(p) = job_pods(c, &name).first() {
            *pod.borrow_mut() = p["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
        cordoned
    });
    let pid = c
        .sandbox
        .container_pid("kube-system", &pod.borrow(), "kubectl-maintain")
        .expect("the roll's process");
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    c.wait_for("the Job complete", Duration::from_secs(120), |c| {
        job_done(c, &name)
    });
    every_node_rolled(&c);
    let p = c
        .get(Resource::Pods, "kube-system", &pod.borrow())
        .expect("the same pod, restarted");
    let status = &p["status"]["containerStatuses"][0];
    assert_eq!(status["restartCount"], 1, "{status}");
    assert_eq!(
        status["lastState"]["terminated"]["exitCode"], 137,
        "{status}"
    );
    let logs = Cluster::finish(logs, Duration::from_secs(30));
    logs.success();
    assert!(
        logs.stderr.contains("restarted its container (restart 1)"),
        "{logs:?}"
    );
    assert!(logs.stdout.contains("pool: 4/4 done"), "{logs:?}");
}

/// Web pods that take two seconds to stop: a node's drain lasts long
/// enough to be caught in.
fn slow_pool() -> String {
    four_nodes().yaml().replace(
        "app: web\n",
        "app: web\n      annotations:\n        sandbox.kubectl-maintain.io/shutdown-seconds: \"2\"\n",
    )
}

#[test]
fn abort_stops_a_roll_after_the_node_in_progress_and_removes_its_job() {
    let c = Cluster::start_running_our_image(&slow_pool(), 33);
    c.wait_settled();
    let out = c.maintain(&ROLL);
    out.success();
    let name = run_name(&out.stderr);
    let first = std::cell::RefCell::new(String::new());
    c.wait_for("a node in its drain", Duration::from_secs(30), |c| {
        let cordoned = POOL.iter().find(|n| {
            c.get(Resource::Nodes, "", n)
                .is_some_and(|n| n["spec"]["unschedulable"] == true)
        });
        *first.borrow_mut() = cordoned.map(ToString::to_string).unwrap_or_default();
        cordoned.is_some()
    });
    let abort = c.maintain(&["abort"]);
    abort.success();
    assert!(
        abort.stderr.contains(&format!("abort asked of run {name}")),
        "{abort:?}"
    );
    assert!(
        abort.stderr.contains(&format!("job.batch/{name} deleted")),
        "{abort:?}"
    );
    let first = first.borrow().clone();
    assert!(
        abort.stderr.contains(&format!("rolled: {first}\n")),
        "only the node in progress: {abort:?}"
    );
    assert!(
        abort.stderr.contains("no node is left cordoned"),
        "{abort:?}"
    );
    for node in POOL {
        let n = c.get(Resource::Nodes, "", node).expect("node");
        assert_ne!(n["spec"]["unschedulable"], true, "{node} left cordoned");
    }
    c.wait_for("the Job gone", Duration::from_secs(10), |c| {
        c.get(Resource::Jobs, "kube-system", &name).is_none()
    });
}

/// A pool with what every rule of a roll's role is for: a KubeVirt VM on
/// r1, a StatefulSet on a CSI volume, kured's DaemonSet.
fn rich_pool() -> String {
    const VMI_UID: &str = "0f6e1a32-0000-4000-8000-00000000b001";
    four_nodes()
        .zonal_db(|_| {})
        .object(serde_json::json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": "vm1", "namespace": "vms", "uid": VMI_UID,
                "annotations": {"sandbox.kubectl-maintain.io/migration-seconds": "0.3"}},
            "spec": {"evictionStrategy": "LiveMigrate"},
            "status": {"phase": "Running", "nodeName": "r1"},
        }))
        .pod("vms", "virt-launcher-vm1-x7k2p", "r1", |p| {
            p["metadata"]["labels"] = serde_json::json!(
                {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": VMI_UID});
            crate::scenario::shutdown(p, 0.3);
            p["metadata"]["ownerReferences"] = serde_json::json!([{"apiVersion": "kubevirt.io/v1",
                "kind": "VirtualMachineInstance", "name": "vm1", "uid": VMI_UID, "controller": true}]);
        })
        .object(serde_json::json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "kubevirt-disruption-budget-vm1", "namespace": "vms"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"kubevirt.io/created-by": VMI_UID}}},
        }))
        .object(crate::scenario::kured())
        .yaml()
}

/// What a pool roll does without each rule of its rendered ClusterRole
/// (docs/usage.md): the exit code, and the refusal it names.
fn without(rule: &Value) -> Option<(i32, &'static str)> {
    let resources = rule["resources"].to_string();
    let verbs = rule["verbs"].to_string();
    let has = |r: &str| resources.contains(&format!("\"{r}\""));
    Some(match () {
        () if has("nodes") => (1, r#"cannot list resource "nodes""#),
        () if has("pods") => (1, r#"cannot list resource "pods""#),
        () if has("daemonsets") && verbs.contains("get") => {
            (1, r#"cannot get resource "daemonsets""#)
        }
        () if has("daemonsets") => (1, r#"cannot update resource "daemonsets""#),
        () if has("poddisruptionbudgets") => (0, r#"cannot list resource "poddisruptionbudgets""#),
        // The roll's lock is read before it is made, by name.
        () if has("leases") && verbs.contains("get") => (1, r#"cannot get resource "leases""#),
        () if has("leases") => (1, r#"cannot create resource "leases""#),
        () if has("events") => (0, r#"cannot create resource "events""#),
        () if has("pods/eviction") => (3, r#"cannot create resource "pods/eviction""#),
        () if has("nodes/status") => (0, r#"cannot patch resource "nodes/status""#),
        () if has("jobs") => (0, r#"cannot get resource "jobs""#),
        // Its end: the role it runs under stays, said.
        () if has("clusterroles") => (0, r#"cannot delete resource "clusterroles""#),
        () if has("virtualmachineinstances") => {
            (0, r#"cannot get resource "virtualmachineinstances""#)
        }
        () if has("volumeattachments") => (0, r#"cannot list resource "volumeattachments""#),
        // Without it the detach wait follows the VolumeAttachments alone, said.
        () if has("persistentvolumes") => (0, r#"cannot get resource "persistentvolumes""#),
        () if has("persistentvolumeclaims") => {
            (0, r#"cannot get resource "persistentvolumeclaims""#)
        }
        () => return None,
    })
}

/// The run's roles: its ClusterRole, then its Role in each namespace.
fn roles_of(c: &Cluster, name: &str) -> Vec<(Resource, String, Value)> {
    let mut all = vec![(
        Resource::ClusterRoles,
        String::new(),
        (*c.get(Resource::ClusterRoles, "", name).expect("the role")).clone(),
    )];
    for ns in ["default", "kube-node-lease", "kube-system"] {
        if let Some(role) = c.get(Resource::Roles, ns, name) {
            all.push((Resource::Roles, ns.to_string(), (*role).clone()));
        }
    }
    all
}

/// Each rule of a roll's rendered roles (its ClusterRole and its Roles),
/// removed in turn: the roll, run as its ServiceAccount (impersonated:
/// RBAC decides as for its token), names the verb and resource refused,
/// and stops or goes on as documented. It never hangs.
#[test]
fn each_rule_of_the_rendered_role_is_needed() {
    let (name, rules) = {
        let c = Cluster::start(&rich_pool(), 33);
        let out = c.maintain(&ROLL);
        out.success();
        let name = run_name(&out.stderr);
        let rules: Vec<(Resource, String, usize, Value)> = roles_of(&c, &name)
            .into_iter()
            .flat_map(|(kind, ns, role)| {
                let rules = role["rules"].as_array().expect("rules").clone();
                rules
                    .into_iter()
                    .enumerate()
                    .map(move |(i, r)| (kind, ns.clone(), i, r))
            })
            .collect();
        (name, rules)
    };
    let sa = format!("system:serviceaccount:kube-system:{name}");
    let job_env = [
        ("KUBECTL_MAINTAIN_JOB", name.as_str()),
        ("KUBECTL_MAINTAIN_NAMESPACE", "kube-system"),
    ];
    let mut exercised = 0;
    for (kind, ns, i, _) in &rules {
        let c = Cluster::start(&rich_pool(), 33);
        c.wait_settled();
        c.maintain(&ROLL).success();
        let mut role = (*c.get(*kind, ns, &name).expect("role")).clone();
        let removed = role["rules"].as_array_mut().expect("rules").remove(*i);
        role["metadata"] = serde_json::json!({"name": name});
        if !ns.is_empty() {
            role["metadata"]["namespace"] = serde_json::json!(ns);
        }
        let file = c.dir.path().join("role.json");
        std::fs::write(&file, role.to_string()).expect("role written");
        c.kubectl(&["apply", "-f", file.to_str().expect("utf-8")])
            .success();
        let run = c.maintain_env(
            &[
                "roll",
                "-l",
                "pool=blue",
                "--ignore-daemonsets",
                "--yes",
                "--as",
                &sa,
            ],
            &job_env,
        );
        // The heartbeat Role is read only for a node that is not Ready,
        // which this pool has none of: the roll goes on without it.
        let expected = if ns == "kube-node-lease" {
            None
        } else {
            without(&removed)
        };
        if let Some((code, refusal)) = expected {
            exercised += 1;
            assert_eq!(run.code, code, "without {removed}: {run:?}");
            let said = format!("User \"{sa}\" {refusal}");
            assert!(run.stderr.contains(&said), "without {removed}: {run:?}");
        } else {
            run.success();
            assert!(
                !run.stderr.contains("forbidden"),
                "without {removed}: {run:?}"
            );
        }
    }
    let heartbeats = rules.iter().filter(|r| r.1 == "kube-node-lease").count();
    assert_eq!(heartbeats, 1, "{rules:?}");
    assert_eq!(exercised + heartbeats, rules.len(), "{rules:?}");
}

/// A webhook's URL is a credential: it reaches the Job's pod through the
/// run's Secret (`secretKeyRef`), and is in no argument, ConfigMap, Event
/// or line; the roll's locks are writable in `--lock-namespace` alone.
#[test]
fn a_webhook_reaches_the_job_through_its_secret_and_nowhere_else() {
    let c = Cluster::start_running_our_image(&four_nodes().yaml(), 33);
    c.wait_settled();
    // Its namespace enforces Pod Security "restricted": a pod without the
    // hardening is refused, the Job's is not.
    c.kubectl(&[
        "label",
        "namespace",
        "kube-system",
        "pod-security.kubernetes.io/enforce=restricted",
    ])
    .success();
    let bare = c.kubectl(&["-n", "kube-system", "run", "bare", "--image=busybox"]);
    assert_ne!(bare.code, 0, "{bare:?}");
    assert!(
        bare.stderr
            .contains(r#"violates PodSecurity "restricted:latest""#),
        "{bare:?}"
    );
    let (port, got) = crate::unattended::receiver(0);
    let hook = format!("http://127.0.0.1:{port}/hook/SECRET-PATH-77");
    let mut roll = ROLL.to_vec();
    roll.extend(["--notify", &hook]);
    let out = c.maintain(&roll);
    out.success();
    let name = run_name(&out.stderr);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !got
        .lock()
        .unwrap()
        .iter()
        .any(|g| g.path == "/hook/SECRET-PATH-77")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no notification from the Job: {:?}",
            job_pods(&c, &name)
                .iter()
                .map(|p| {
                    let pod = p["metadata"]["name"].as_str().unwrap_or_default();
                    (
                        p["status"].to_string(),
                        c.kubectl(&["logs", "-n", "kube-system", pod]),
                    )
                })
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let secret = c
        .get(Resource::Secrets, "kube-system", &name)
        .expect("the run's Secret");
    let stored = secret["data"]["notify-0"].as_str().unwrap();
    assert_eq!(
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, stored).unwrap(),
        hook.as_bytes()
    );
    assert!(secret.get("stringData").is_none(), "{secret}");
    let job = c.get(Resource::Jobs, "kube-system", &name).unwrap();
    let config = c.get(Resource::ConfigMaps, "kube-system", &name).unwrap();
    let events = c.kubectl(&["-n", "kube-system", "get", "events", "-o", "json"]);
    for (what, text) in [
        ("the Job", job.to_string()),
        ("the ConfigMap", config.to_string()),
        ("the Events", events.stdout.clone()),
        (
            "the submission's lines",
            format!("{}{}", out.stdout, out.stderr),
        ),
    ] {
        assert!(!text.contains("SECRET-PATH"), "{what}: {text}");
    }
    assert!(
        job.to_string()
            .contains("--notify=env:KUBECTL_MAINTAIN_SECRET_0")
    );
    let sa = format!("system:serviceaccount:kube-system:{name}");
    let can = |verb: &str, what: &[&str]| can_i(&c, &sa, verb, what);
    assert_eq!(can("create", &["leases", "-n", "kube-system"]), "yes");
    assert_eq!(can("create", &["leases", "-n", "default"]), "no");
    assert_eq!(can("get", &["leases", "-n", "kube-node-lease"]), "yes");
    assert_eq!(can("get", &["secrets", "-n", "kube-system"]), "no");
    // kured is not installed: no rule for its DaemonSet.
    assert_eq!(can("update", &["daemonsets", "-n", "kube-system"]), "no");
}
