//! The real kubectl (1.27 and 1.33, chosen by the sandbox's /version)
//! cannot tell the sandbox from a kube-apiserver for what a drain does.

use std::time::Duration;

use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;

use crate::harness::Cluster;

const SMALL: &str = include_str!("../../examples/scenarios/small.yaml");

/// A second PDB over the web pods: their evictions must fail with a 500.
const SECOND_WEB_PDB: &str = "
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web-too
  namespace: shop
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
";

fn node_of(c: &Cluster, ns: &str, name: &str) -> String {
    let pod = c.get(Resource::Pods, ns, name).expect("pod exists");
    pods::node_name(&pod).expect("bound").to_string()
}

fn web_pod_on(c: &Cluster, node: &str) -> Option<String> {
    c.pods_on(node)
        .into_iter()
        .find(|p| p.starts_with("shop/web-"))
}

/// A worker with a web pod and neither the StatefulSet pod nor the bare pod.
fn free_worker(c: &Cluster) -> String {
    let db = node_of(c, "shop", "db-0");
    ["worker-1", "worker-2", "worker-3"]
        .into_iter()
        .find(|n| *n != db && *n != "worker-1" && web_pod_on(c, n).is_some())
        .expect("a free worker")
        .to_string()
}

fn get_shows_usual_columns(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    c.wait_settled();
    let nodes = c.kubectl(&["get", "nodes"]);
    nodes.success();
    let lines: Vec<&str> = nodes.stdout.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]);
    let cp: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("control-plane"))
        .expect("row")
        .split_whitespace()
        .collect();
    assert_eq!(cp[1..3], ["Ready", "control-plane"]);
    assert_eq!(cp[4], format!("v1.{minor}.0"));
    assert_eq!(lines.len(), 5, "{nodes:?}");

    let wide = c.kubectl(&["get", "pods", "-A", "-o", "wide"]);
    wide.success();
    let header = wide.stdout.lines().next().expect("header");
    for col in [
        "NAMESPACE",
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ] {
        assert!(header.contains(col), "missing {col} in {header}");
    }
    let db_node = node_of(&c, "shop", "db-0");
    let row: Vec<&str> = wide
        .stdout
        .lines()
        .find(|l| l.contains(" db-0 "))
        .expect("db-0 row")
        .split_whitespace()
        .collect();
    assert_eq!(row[0], "shop");
    assert_eq!(row[2..4], ["1/1", "Running"]);
    assert_eq!(row[7], db_node);
    assert_eq!(wide.stdout.lines().count(), 1 + c.pods().len());

    // The dispatcher ran the kubectl the sandbox's /version asked for.
    let ua = format!("kubectl/v1.{minor}.");
    assert!(
        c.requests()
            .iter()
            .any(|r| r.path == "/api/v1/nodes" && r.user_agent.starts_with(&ua)),
        "no request from {ua}"
    );
}

#[test]
fn get_shows_usual_columns_1_27() {
    get_shows_usual_columns(27);
}

#[test]
fn get_shows_usual_columns_1_33() {
    get_shows_usual_columns(33);
}

fn cordon_and_uncordon(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    let unschedulable = |c: &Cluster| {
        c.get(Resource::Nodes, "", "worker-2")
            .expect("node")
            .pointer("/spec/unschedulable")
            .and_then(serde_json::Value::as_bool)
            == Some(true)
    };
    let out = c.kubectl(&["cordon", "worker-2"]);
    out.success();
    assert!(out.stdout.contains("node/worker-2 cordoned"), "{out:?}");
    assert!(unschedulable(&c));
    let again = c.kubectl(&["cordon", "worker-2"]);
    assert!(again.stdout.contains("already cordoned"), "{again:?}");
    let out = c.kubectl(&["uncordon", "worker-2"]);
    out.success();
    assert!(!unschedulable(&c));
    let node = c.get(Resource::Nodes, "", "worker-2").expect("node");
    assert!(
        node.pointer("/spec/unschedulable").is_none(),
        "uncordon deletes the key: {node}"
    );
    // Cordoning is a strategic-merge PATCH, and an already cordoned node got none.
    let patches = c
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH" && r.path == "/api/v1/nodes/worker-2")
        .count();
    assert_eq!(patches, 2);
}

#[test]
fn cordon_and_uncordon_1_27() {
    cordon_and_uncordon(27);
}

#[test]
fn cordon_and_uncordon_1_33() {
    cordon_and_uncordon(33);
}

fn drain_free_node(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    c.wait_settled();
    let node = free_worker(&c);
    let web = web_pod_on(&c, &node).expect("web pod");
    let ds_pod = c
        .pods_on(&node)
        .into_iter()
        .find(|p| p.starts_with("monitoring/"))
        .expect("daemonset pod");
    let out = c.kubectl(&[
        "drain",
        &node,
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout",
        "30s",
    ]);
    out.success();
    assert!(
        out.stdout.contains(&format!("node/{node} drained")),
        "{out:?}"
    );
    let n = c.get(Resource::Nodes, "", &node).expect("node");
    assert_eq!(n["spec"]["unschedulable"], true);
    // The evicted web pod is gone and the ReplicaSet made a replacement elsewhere.
    assert!(!c.pods_on(&node).contains(&web));
    c.wait_for("three web pods Ready again", Duration::from_secs(10), |c| {
        let web: Vec<_> = c
            .pods()
            .into_iter()
            .filter(|p| p["metadata"]["labels"]["app"] == "web")
            .collect();
        web.len() == 3
            && web
                .iter()
                .all(|p| pods::is_ready(p) && pods::node_name(p) != Some(&node))
    });
    // The DaemonSet pod stays.
    assert!(c.pods_on(&node).contains(&ds_pod), "{:?}", c.pods_on(&node));
    // Through the eviction subresource, as kubectl does when discovery offers it.
    assert!(
        c.requests()
            .iter()
            .any(|r| r.method == "POST" && r.path.ends_with("/eviction") && r.status == 201)
    );
}

#[test]
fn drain_free_node_1_27() {
    drain_free_node(27);
}

#[test]
fn drain_free_node_1_33() {
    drain_free_node(33);
}

fn drain_blocked_by_pdb(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    c.wait_settled();
    let node = node_of(&c, "shop", "db-0");
    let out = c.kubectl(&[
        "drain",
        &node,
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout",
        "3s",
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(r#"error when evicting pods/"db-0" -n "shop" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."#),
        "{out:?}"
    );
    assert!(out.stderr.contains("global timeout reached: 3s"), "{out:?}");
    let db = c.get(Resource::Pods, "shop", "db-0").expect("db-0 stays");
    assert!(!pods::is_terminating(&db));
    let refusals = c
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/namespaces/shop/pods/db-0/eviction")
        .collect::<Vec<_>>();
    assert!(
        !refusals.is_empty() && refusals.iter().all(|r| r.status == 429),
        "{refusals:?}"
    );
}

#[test]
fn drain_blocked_by_pdb_1_27() {
    drain_blocked_by_pdb(27);
}

#[test]
fn drain_blocked_by_pdb_1_33() {
    drain_blocked_by_pdb(33);
}

fn two_pdbs_are_an_error(minor: u32) {
    let c = Cluster::start(&format!("{SMALL}{SECOND_WEB_PDB}"), minor);
    c.wait_settled();
    let node = free_worker(&c);
    let web = web_pod_on(&c, &node).expect("web pod");
    let out = c.kubectl(&["drain", &node, "--ignore-daemonsets", "--timeout", "10s"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."),
        "{out:?}"
    );
    assert!(c.pods_on(&node).contains(&web), "the pod stays");
    // Ours fails that pod at once too, and names both budgets.
    let ours = c.maintain(&["drain", &node, "--ignore-daemonsets", "--timeout", "10s"]);
    ours.code(1);
    assert!(
        ours.stderr
            .contains("PodDisruptionBudgets web, web-too select it"),
        "{ours:?}"
    );
    // kubectl's own line for it, as a script captures it.
    assert!(
        ours.stderr.contains("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."),
        "{ours:?}"
    );
    assert!(c.pods_on(&node).contains(&web), "the pod stays");
}

#[test]
fn two_pdbs_are_an_error_1_27() {
    two_pdbs_are_an_error(27);
}

#[test]
fn two_pdbs_are_an_error_1_33() {
    two_pdbs_are_an_error(33);
}

#[test]
fn unknown_field_selector_is_a_bad_request() {
    let c = Cluster::start(SMALL, 33);
    let out = c.kubectl(&["get", "pods", "-A", "--field-selector", "spec.bogus=x"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("field label not supported: spec.bogus"),
        "{out:?}"
    );
    let ok = c.kubectl(&[
        "get",
        "pods",
        "-A",
        "--field-selector",
        "spec.nodeName=worker-1",
        "-o",
        "name",
    ]);
    ok.success();
    assert!(ok.stdout.contains("pod/debug-shell"), "{ok:?}");
    assert_eq!(ok.stdout.lines().count(), c.pods_on("worker-1").len());
}

/// `kubectl scale` goes through the scale subresource: the Deployment's
/// replicas change and its controller follows.
fn scale_a_deployment(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    c.wait_settled();
    let out = c.kubectl(&["scale", "deployment", "web", "-n", "shop", "--replicas=5"]);
    out.success();
    assert!(out.stdout.contains("deployment.apps/web scaled"), "{out:?}");
    c.wait_for("five web pods", Duration::from_secs(10), |c| {
        c.pods()
            .iter()
            .filter(|p| p["metadata"]["labels"]["app"] == "web" && pods::is_ready(p))
            .count()
            == 5
    });
    let scale = c.kubectl(&[
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/shop/deployments/web/scale",
    ]);
    scale.success();
    let scale: serde_json::Value = serde_json::from_str(&scale.stdout).unwrap();
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(scale["status"]["selector"], "app=web");
}

#[test]
fn scale_a_deployment_1_27() {
    scale_a_deployment(27);
}

#[test]
fn scale_a_deployment_1_33() {
    scale_a_deployment(33);
}

/// The rehearsal docs/sandbox.md suggests, made with `kubectl create` as an
/// operator types it: kubectl 1.33 sends these bodies as protobuf, 1.27 as
/// JSON, and our drain then meets the budget made.
fn objects_made_by_kubectl_create_hold_a_drain(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    c.wait_settled();
    for args in [
        &["create", "namespace", "rehearse"][..],
        &[
            "create",
            "deployment",
            "api",
            "-n",
            "rehearse",
            "--image=nginx",
            "--replicas=2",
        ],
        &[
            "create",
            "pdb",
            "api",
            "-n",
            "rehearse",
            "--selector=app=api",
            "--min-available=2",
        ],
        &[
            "create",
            "configmap",
            "api-env",
            "-n",
            "rehearse",
            "--from-literal=MODE=test",
        ],
        &[
            "create",
            "secret",
            "generic",
            "api-key",
            "-n",
            "rehearse",
            "--from-literal=key=s3cr3t",
        ],
        &["create", "serviceaccount", "api", "-n", "rehearse"],
        &[
            "create",
            "job",
            "once",
            "-n",
            "rehearse",
            "--image=busybox",
            "--",
            "true",
        ],
    ] {
        c.kubectl(args).success();
    }
    c.wait_for("two api pods", Duration::from_secs(10), |c| {
        c.pods()
            .iter()
            .filter(|p| p["metadata"]["labels"]["app"] == "api" && pods::is_ready(p))
            .count()
            == 2
    });
    let pdb = c
        .get(Resource::PodDisruptionBudgets, "rehearse", "api")
        .unwrap();
    assert_eq!(pdb["spec"]["minAvailable"], 2, "{pdb}");
    let secret = c.get(Resource::Secrets, "rehearse", "api-key").unwrap();
    assert_eq!(secret["data"]["key"], "czNjcjN0", "{secret}");
    let cm = c.get(Resource::ConfigMaps, "rehearse", "api-env").unwrap();
    assert_eq!(cm["data"]["MODE"], "test", "{cm}");
    let deploy = c.get(Resource::Deployments, "rehearse", "api").unwrap();
    let container = &deploy["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx", "{deploy}");
    assert!(container.get("stdin").is_none(), "zeros stay out: {deploy}");

    let node = node_of(&c, "rehearse", &web_like_pod(&c, "api"));
    let out = c.maintain(&[
        "drain",
        &node,
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--force",
        "--timeout",
        "2s",
        "--yes",
    ]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr
            .contains("blocked by PodDisruptionBudget rehearse/api"),
        "{out:?}"
    );
}

fn web_like_pod(c: &Cluster, app: &str) -> String {
    c.pods()
        .iter()
        .find(|p| p["metadata"]["labels"]["app"] == app)
        .and_then(|p| p["metadata"]["name"].as_str().map(str::to_string))
        .expect("a pod of the app")
}

#[test]
fn objects_made_by_kubectl_create_hold_a_drain_1_27() {
    objects_made_by_kubectl_create_hold_a_drain(27);
}

#[test]
fn objects_made_by_kubectl_create_hold_a_drain_1_33() {
    objects_made_by_kubectl_create_hold_a_drain(33);
}

/// `kubectl get -w` keeps its columns after the first screen (watch events
/// are Tables), and `--sort-by` on a field outside metadata sorts rows
/// (`includeObject=Object`).
fn get_watch_and_sort_by(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    c.wait_settled();
    let before = c.requests().len();
    let watching = std::process::Command::new(crate::harness::kubectl_path())
        .env("KUBECONFIG", &c.kubeconfig)
        .args(["get", "pods", "-n", "shop", "-w", "--request-timeout=4s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // kubectl watches from the resourceVersion its list returned: once the
    // list is answered, no later change is missed.
    c.wait_for("kubectl get -w's list", Duration::from_secs(10), |c| {
        c.requests().iter().skip(before).any(|r| {
            r.user_agent.starts_with("kubectl/")
                && r.path == "/api/v1/namespaces/shop/pods"
                && !r.query.contains("watch")
        })
    });
    let web = web_pod_on(&c, &node_of_any_web(&c)).expect("a web pod");
    let name = web.split('/').nth(1).unwrap().to_string();
    c.kubectl(&["delete", "pod", "-n", "shop", &name, "--wait=false"])
        .success();
    let out = watching.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header: Vec<&str> = stdout
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{stdout}"
    );
    let changes: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter(|l| l.starts_with(&name))
        .collect();
    assert!(
        changes
            .iter()
            .any(|l| l.split_whitespace().nth(2) == Some("Terminating")),
        "kubectl 1.{minor}: the deleted pod's rows keep READY and STATUS:\n{stdout}"
    );
    let sorted = c.kubectl(&[
        "get",
        "pods",
        "-n",
        "shop",
        "--sort-by=.spec.nodeName",
        "-o",
        "wide",
    ]);
    sorted.success();
    assert!(!sorted.stdout.contains("No resources found"), "{sorted:?}");
    let nodes: Vec<&str> = sorted
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(6))
        .collect();
    let mut expected = nodes.clone();
    expected.sort_unstable();
    assert!(nodes.len() > 1 && nodes == expected, "{sorted:?}");
}

fn node_of_any_web(c: &Cluster) -> String {
    c.pods()
        .iter()
        .find(|p| p["metadata"]["labels"]["app"] == "web")
        .and_then(|p| pods::node_name(p).map(str::to_string))
        .expect("a web pod on a node")
}

#[test]
fn get_watch_and_sort_by_1_27() {
    get_watch_and_sort_by(27);
}

#[test]
fn get_watch_and_sort_by_1_33() {
    get_watch_and_sort_by(33);
}

/// `kubectl auth can-i` answers from the sandbox's own refusals, so a
/// rehearsal of a restricted role can be checked before the drain.
fn auth_can_i(minor: u32) {
    use kube_sandbox::Rule;
    let c = Cluster::start(SMALL, minor);
    c.sandbox.set_role(Some(vec![
        Rule::new(&["get", "patch"], &["nodes"]),
        Rule::new(&["get", "list"], &["pods"]),
        Rule::new(&["create"], &["pods/eviction"]),
    ]));
    let can = |args: &[&str]| c.kubectl(&[&["auth", "can-i"][..], args].concat());
    let yes = can(&["create", "pods", "--subresource=eviction", "-n", "shop"]);
    assert_eq!((yes.code, yes.stdout.trim()), (0, "yes"), "{yes:?}");
    let no = can(&["watch", "pods", "-n", "shop"]);
    assert_eq!((no.code, no.stdout.trim()), (1, "no"), "{no:?}");
    let no = can(&["list", "poddisruptionbudgets", "-A"]);
    assert_eq!(no.stdout.trim(), "no", "{no:?}");
    if minor >= 28 {
        let me = c.kubectl(&["auth", "whoami"]);
        me.success();
        assert!(me.stdout.contains("kubernetes-admin"), "{me:?}");
    }
}

#[test]
fn auth_can_i_1_27() {
    auth_can_i(27);
}

#[test]
fn auth_can_i_1_33() {
    auth_can_i(33);
}

/// A wrong-typed patch is refused with 422 naming the field, and nothing is
/// stored that would break kubectl afterwards.
fn a_wrong_typed_patch_is_refused(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    c.wait_settled();
    let node = free_worker(&c);
    let out = c.kubectl(&[
        "patch",
        "node",
        &node,
        "-p",
        r#"{"spec":{"unschedulable":"yes"}}"#,
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "Node \"{node}\" is invalid: spec.unschedulable: Invalid value: \"yes\""
        )),
        "kubectl 1.{minor}: {out:?}"
    );
    let status = c
        .requests()
        .iter()
        .rev()
        .find(|r| r.method == "PATCH")
        .map(|r| r.status);
    assert_eq!(status, Some(422));
    c.kubectl(&["get", "nodes"]).success();
    let scaled = c.kubectl(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "shop",
        "-p",
        r#"{"spec":{"selector":{"matchLabels":{"app":"other"}}}}"#,
    ]);
    assert!(scaled.stderr.contains("field is immutable"), "{scaled:?}");
    // A taint whose value is no label value, as a script's unrendered
    // template makes it: refused as kube-apiserver refuses it.
    let tainted = c.kubectl(&[
        "patch",
        "node",
        &node,
        "-p",
        r#"{"spec":{"taints":[{"key":"maintenance","value":"${REASON}","effect":"NoSchedule"}]}}"#,
    ]);
    assert!(
        tainted.stderr.contains(&format!(
            "Node \"{node}\" is invalid: spec.taints[0].value: Invalid value: \"${{REASON}}\": a valid label must be an empty string"
        )),
        "kubectl 1.{minor}: {tainted:?}"
    );
    assert!(c.get(Resource::Nodes, "", &node).unwrap()["spec"]["taints"].is_null());
    // Two taints of one key and effect (a patch that appends without
    // looking): refused as kube-apiserver's validateNodeTaints refuses it.
    let twice = c.kubectl(&[
        "patch",
        "node",
        &node,
        "-p",
        r#"{"spec":{"taints":[{"key":"m","value":"a","effect":"NoSchedule"},{"key":"m","value":"b","effect":"NoSchedule"}]}}"#,
    ]);
    assert!(
        twice.stderr.contains(&format!(
            "Node \"{node}\" is invalid: spec.taints[1]: Duplicate value: core.Taint{{Key:\"m\", Value:\"b\", Effect:\"NoSchedule\", TimeAdded:<nil>}}: taints must be unique by key and effect pair"
        )),
        "kubectl 1.{minor}: {twice:?}"
    );
    assert!(c.get(Resource::Nodes, "", &node).unwrap()["spec"]["taints"].is_null());
}

#[test]
fn a_wrong_typed_patch_is_refused_1_27() {
    a_wrong_typed_patch_is_refused(27);
}

#[test]
fn a_wrong_typed_patch_is_refused_1_33() {
    a_wrong_typed_patch_is_refused(33);
}

/// `kubectl rollout restart` changes the template: a new ReplicaSet rolls
/// the pods over within maxSurge and maxUnavailable, and `rollout status`
/// waits for it, as against a real cluster.
fn rollout_restart_replaces_the_pods(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    c.wait_settled();
    let web = |c: &Cluster| -> std::collections::BTreeSet<String> {
        c.pods()
            .iter()
            .filter(|p| p["metadata"]["labels"]["app"] == "web" && !pods::is_terminating(p))
            .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let before = web(&c);
    c.kubectl(&["rollout", "restart", "deployment/web", "-n", "shop"])
        .success();
    let status = c.kubectl(&[
        "rollout",
        "status",
        "deployment/web",
        "-n",
        "shop",
        "--timeout=30s",
    ]);
    status.success();
    assert!(
        status.stdout.contains("successfully rolled out"),
        "{status:?}"
    );
    let after = web(&c);
    assert_eq!(after.len(), before.len(), "{after:?}");
    assert!(
        after.is_disjoint(&before),
        "every pod replaced: {before:?} -> {after:?}"
    );
    let sets = c.kubectl(&["get", "rs", "-n", "shop", "-l", "app=web", "--no-headers"]);
    let replicas: Vec<&str> = sets
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(
        replicas.len(),
        2,
        "the old ReplicaSet is kept, scaled to 0: {sets:?}"
    );
    assert!(replicas.contains(&"0"), "{sets:?}");
}

#[test]
fn rollout_restart_replaces_the_pods_1_27() {
    rollout_restart_replaces_the_pods(27);
}

#[test]
fn rollout_restart_replaces_the_pods_1_33() {
    rollout_restart_replaces_the_pods(33);
}

/// What the components record, `kubectl describe` shows: the scheduler's,
/// the ReplicaSet controller's and the kubelet's Events for a new pod, and
/// the kubelet's Killing when one is deleted.
#[test]
fn components_record_their_events() {
    let c = Cluster::start(SMALL, 33);
    c.wait_settled();
    c.kubectl(&["scale", "deployment", "web", "-n", "shop", "--replicas=4"])
        .success();
    c.wait_settled();
    let events = c.kubectl(&["get", "events", "-n", "shop"]);
    events.success();
    for reason in [
        "Scheduled",
        "SuccessfulCreate",
        "Pulled",
        "Created",
        "Started",
    ] {
        assert!(
            events
                .stdout
                .lines()
                .any(|l| l.split_whitespace().any(|w| w == reason)),
            "{reason}: {events:?}"
        );
    }
    let web = web_pod_on(&c, &node_of_any_web(&c)).expect("a web pod");
    let name = web.split('/').nth(1).unwrap().to_string();
    c.kubectl(&["delete", "pod", "-n", "shop", &name, "--wait=false"])
        .success();
    c.wait_for("Killing", Duration::from_secs(5), |c| {
        c.kubectl(&[
            "get",
            "events",
            "-n",
            "shop",
            "--field-selector",
            "reason=Killing",
        ])
        .stdout
        .contains(&name)
    });
}

const MANIFESTS: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: api:1, env: [{name: A, value: '1'}]}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: shop}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers: [{name: c, image: legacy:1}]
";

/// `apply -f`, `create -f` and `explain` without flags: kubectl reads the
/// OpenAPI documents, leaves validation to the server (`fieldValidation=
/// Strict`), and the server refuses an unknown field by its path, or with
/// `--validate=warn` drops it and says so in a Warning. A
/// ReplicationController is served and runs its pods; node heartbeats are
/// Leases.
#[allow(clippy::too_many_lines)] // long on purpose: one scenario, kubectl's three verbs in turn
fn apply_create_and_explain(minor: u32) {
    let c = Cluster::start(SMALL, minor);
    let dir = crate::harness::TempDir::new("manifests");
    let file = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let all = file("all.yaml", MANIFESTS);
    let applied = c.kubectl(&["apply", "-f", &all]);
    applied.success();
    assert!(
        applied.stdout.contains("deployment.apps/api created")
            && applied
                .stdout
                .contains("replicationcontroller/legacy created"),
        "kubectl 1.{minor}: {applied:?}"
    );
    let creates = c.requests();
    let creates: Vec<_> = creates.iter().filter(|r| r.method == "POST").collect();
    assert!(
        creates
            .iter()
            .all(|r| r.query.contains("fieldValidation=Strict")),
        "validation is left to the server: {creates:?}"
    );
    let again = c.kubectl(&["apply", "-f", &all]);
    assert!(
        again.stdout.contains("deployment.apps/api unchanged"),
        "{again:?}"
    );

    // A second env var merges into the container by name.
    let more = MANIFESTS.replace(
        "[{name: A, value: '1'}]",
        "[{name: A, value: '1'}, {name: B, value: '2'}]",
    );
    c.kubectl(&["apply", "-f", &file("more.yaml", &more)])
        .success();
    let d = c.get(Resource::Deployments, "shop", "api").unwrap();
    let env = &d["spec"]["template"]["spec"]["containers"][0]["env"];
    assert_eq!(env.as_array().map(Vec::len), Some(2), "{d}");

    let typo = MANIFESTS.replace("replicas: 1\n", "replicas: 1\n  replica: 2\n");
    let refused = c.kubectl(&["create", "-f", &file("typo.yaml", &typo)]);
    assert!(
        refused.stderr.contains(
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replica\""
        ),
        "kubectl 1.{minor}: {refused:?}"
    );
    assert!(
        c.get(Resource::Deployments, "shop", "api").unwrap()["spec"]
            .get("replica")
            .is_none()
    );
    // `--validate=warn` asks the server to drop the field and say so.
    let warned = c.kubectl(&["apply", "--validate=warn", "-f", &file("typo.yaml", &typo)]);
    warned.success();
    assert!(
        warned
            .stderr
            .contains("Warning: unknown field \"spec.replica\""),
        "kubectl 1.{minor}: {warned:?}"
    );

    c.wait_for("two legacy pods", Duration::from_secs(10), |c| {
        c.pods()
            .iter()
            .filter(|p| p["metadata"]["labels"]["app"] == "legacy" && pods::is_ready(p))
            .count()
            == 2
    });
    let rc = c.kubectl(&["get", "rc", "legacy", "-n", "shop"]);
    let row: Vec<&str> = rc
        .stdout
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row[..4], ["legacy", "2", "2", "2"], "{rc:?}");

    let explain = c.kubectl(&["explain", "pod.spec.nodeName"]);
    explain.success();
    assert!(
        explain.stdout.contains("FIELD: nodeName <string>")
            && explain
                .stdout
                .contains("NodeName indicates in which node this pod is scheduled"),
        "kubectl 1.{minor}: {explain:?}"
    );

    let leases = c.kubectl(&["get", "leases", "-n", "kube-node-lease"]);
    leases.success();
    let holders: Vec<&str> = leases
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert!(
        holders.contains(&"worker-1")
            && holders.len()
                == c.kubectl(&["get", "nodes", "-o", "name"])
                    .stdout
                    .lines()
                    .count(),
        "{leases:?}"
    );
}

#[test]
fn apply_create_and_explain_1_27() {
    apply_create_and_explain(27);
}

#[test]
fn apply_create_and_explain_1_33() {
    apply_create_and_explain(33);
}

/// kubectl reads lists in pages (`--chunk-size`, 500 by default): every
/// page size gives the same objects, and the remaining count is given only
/// for an unfiltered list, as ListMeta.remainingItemCount says.
#[test]
fn lists_come_in_pages_as_the_apiserver_gives_them() {
    let c = Cluster::start(SMALL, 33);
    c.wait_settled();
    let names = |args: &[&str]| {
        let out = c.kubectl(args);
        out.success();
        out.stdout.lines().map(str::to_string).collect::<Vec<_>>()
    };
    let all = names(&["get", "pods", "-A", "-o", "name"]);
    assert!(all.len() > 3, "{all:?}");
    assert_eq!(
        names(&["get", "pods", "-A", "-o", "name", "--chunk-size=2"]),
        all
    );
    let web = names(&["get", "pods", "-A", "-o", "name", "-l", "app=web"]);
    assert_eq!(web.len(), 3, "{web:?}");
    let paged = [
        "get",
        "pods",
        "-A",
        "-o",
        "name",
        "-l",
        "app=web",
        "--chunk-size=1",
    ];
    assert_eq!(names(&paged), web);

    let raw = |path: &str| -> serde_json::Value {
        let out = c.kubectl(&["get", "--raw", path]);
        out.success();
        serde_json::from_str(&out.stdout).expect("a list")
    };
    let page = raw("/api/v1/pods?limit=2");
    assert_eq!(page["items"].as_array().map(Vec::len), Some(2));
    assert!(
        page["metadata"]["continue"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    );
    assert_eq!(page["metadata"]["remainingItemCount"], all.len() - 2);
    let page = raw("/api/v1/pods?limit=1&labelSelector=app%3Dweb");
    assert!(
        page["metadata"]["continue"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    );
    assert!(
        page["metadata"].get("remainingItemCount").is_none(),
        "{page}"
    );
    let last = raw(&format!("/api/v1/pods?limit={}", all.len()));
    assert!(last["metadata"].get("continue").is_none(), "{last}");
    assert!(
        last["metadata"].get("remainingItemCount").is_none(),
        "{last}"
    );
}

/// `kubectl delete namespace` returns once the namespace controller has
/// deleted what was in it (pods with their grace period) and finalized it,
/// as against a kube-apiserver; meanwhile `get` shows it Terminating.
#[test]
fn a_deleted_namespace_is_emptied_and_removed() {
    let c = Cluster::start(SMALL, 33);
    c.wait_settled();
    let pods_in = |c: &Cluster| {
        c.sandbox
            .view()
            .list(Resource::Pods)
            .iter()
            .filter(|p| p["metadata"]["namespace"] == "shop")
            .count()
    };
    assert!(pods_in(&c) > 0);
    let ns = c.kubectl(&[
        "get",
        "namespace",
        "shop",
        "-o",
        "jsonpath={.spec.finalizers}",
    ]);
    assert!(ns.stdout.contains("kubernetes"), "{ns:?}");
    let delete = c.kubectl(&["delete", "namespace", "shop", "--wait=false"]);
    delete.success();
    let wait = c.kubectl(&["wait", "--for=delete", "namespace/shop", "--timeout=60s"]);
    wait.success();
    // It was Terminating on its way out: read from the store's history,
    // not from a `get` that may come after the controller has finished.
    let phases: Vec<String> = c
        .history(Resource::Namespaces)
        .iter()
        .filter(|e| e.object()["metadata"]["name"] == "shop")
        .filter_map(|e| e.object()["status"]["phase"].as_str().map(str::to_string))
        .collect();
    assert!(phases.iter().any(|p| p == "Terminating"), "{phases:?}");
    assert_eq!(pods_in(&c), 0);
    assert!(c.get(Resource::Deployments, "shop", "web").is_none());
}
