//! A drain against a flaky API server keeps its promises: it finishes (or
//! stops with a true report and the right exit code), evicts nothing twice,
//! and never prints credentials. docs/reliability.md tabulates these.

use std::collections::BTreeSet;
use std::time::Duration;

use kube_sandbox::config::{Deny, Faults, Rule};
use kube_sandbox::resources::Resource;

use crate::drain::web_on_n1;
use crate::harness::Cluster;

fn drain(c: &Cluster) -> crate::harness::Run {
    c.maintain(&["drain", "n1", "--timeout", "90s", "-o", "json"])
}

/// The drain finished, every web pod left n1, each evicted exactly once.
fn assert_drained_once(c: &Cluster, out: &crate::harness::Run) {
    let statuses = ours(c);
    let count = |code: u16| statuses.iter().filter(|s| **s == code).count();
    // For docs/reliability.md: `cargo test --test it reliability -- --nocapture`.
    eprintln!(
        "reliability: {} requests from the drain, {} answered 500, {} 503, {} 429; exit {}",
        statuses.len(),
        count(500),
        count(503),
        count(429),
        out.code
    );
    out.success();
    assert_eq!(out.report().node("n1").status, "drained");
    assert!(
        c.pods_on("n1").iter().all(|p| !p.starts_with("apps/web-")),
        "{:?}",
        c.pods_on("n1")
    );
    let evicted: Vec<String> = c.evictions().into_iter().map(|(p, _)| p).collect();
    let unique: BTreeSet<&String> = evicted.iter().collect();
    assert_eq!(
        unique.len(),
        evicted.len(),
        "no pod evicted twice: {evicted:?}"
    );
    assert_eq!(unique.len(), 3, "{evicted:?}");
}

fn ours(c: &Cluster) -> Vec<u16> {
    c.requests()
        .into_iter()
        .filter(|r| r.user_agent.starts_with("kubectl-maintain/"))
        .map(|r| r.status)
        .collect()
}

#[test]
fn survives_500s_and_503s_on_any_request() {
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.set_faults(Faults {
        error500: 0.2,
        error503: 0.2,
        seed: 11,
        ..Faults::default()
    });
    let out = drain(&c);
    assert_drained_once(&c, &out);
    let statuses = ours(&c);
    assert!(
        statuses.contains(&500) && statuses.contains(&503),
        "faults were injected: {statuses:?}"
    );
}

/// Under `--max-parallel`, evictions share each budget's disruptions as
/// tickets; one answered 500 disrupted nothing and must give its ticket
/// back, or every pod of that budget waits until `--timeout` ("not asked:
/// every disruption ... is taken by other evictions" with nothing evicting).
#[test]
fn a_failed_eviction_under_max_parallel_gives_its_disruption_back() {
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.set_faults(Faults {
        error500: 1.0,
        only: vec!["create pods/eviction".into()],
        times: 1,
        ..Faults::default()
    });
    let out = c.maintain(&[
        "drain",
        "n1",
        "--max-parallel",
        "2",
        "--timeout",
        "60s",
        "-o",
        "json",
    ]);
    assert_drained_once(&c, &out);
    let statuses = ours(&c);
    assert_eq!(
        statuses.iter().filter(|s| **s == 500).count(),
        1,
        "one eviction was answered 500: {statuses:?}"
    );
}

#[test]
fn throttling_is_told_apart_from_a_pdb() {
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.set_faults(Faults {
        throttle429: 0.3,
        seed: 5,
        ..Faults::default()
    });
    let out = drain(&c);
    assert_drained_once(&c, &out);
    // Throttled evictions are retried as API trouble, never reported as a
    // budget: every "blocked" line names the PDB that really refused.
    assert!(ours(&c).contains(&429));
    for line in out.stderr.lines().filter(|l| l.contains("blocked:")) {
        assert!(line.contains("PDB web"), "{line}");
    }
}

#[test]
fn survives_seconds_of_latency() {
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.set_faults(Faults {
        latency_ms: 400,
        ..Faults::default()
    });
    assert_drained_once(&c, &drain(&c));
}

#[test]
fn survives_cut_watches_and_expired_versions() {
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.set_faults(Faults {
        watch_cut_after: 2,
        ..Faults::default()
    });
    // After each eviction, the history the watches resume from is
    // dropped: 410 Expired while the drain waits for that pod to go.
    let out = std::thread::scope(|scope| {
        scope.spawn(|| {
            for evicted in 1..=3 {
                c.wait_for("an eviction", Duration::from_secs(60), |c| {
                    c.evictions().len() >= evicted
                });
                c.sandbox.compact_history();
            }
        });
        drain(&c)
    });
    assert_drained_once(&c, &out);
}

#[test]
fn survives_the_api_server_going_away_for_a_while() {
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox
        .outage(Duration::from_millis(700), Duration::from_secs(3));
    let out = drain(&c);
    assert_drained_once(&c, &out);
    assert!(
        out.stderr.contains("retrying"),
        "the API failing is shown: {out:?}"
    );
}

fn deny(verb: &str, resource: &str, namespace: &str) -> Deny {
    Deny {
        verb: verb.into(),
        resource: resource.into(),
        namespace: namespace.into(),
    }
}

#[test]
fn refused_permissions_name_what_to_grant_and_stop_safely() {
    // Eviction refused: stop, say which verb, resource and namespace.
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.deny(deny("create", "pods/eviction", "apps"));
    let out = c.maintain(&["drain", "n1", "--timeout", "30s"]);
    out.code(1);
    assert!(
        out.stderr
            .contains("not allowed to create pods/eviction in namespace apps"),
        "{out:?}"
    );
    assert!(
        c.pods_on("n1")
            .iter()
            .filter(|p| p.starts_with("apps/web-"))
            .count()
            == 3
    );

    // Cordon refused: nothing evicted.
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.deny(deny("patch", "nodes", ""));
    let out = c.maintain(&["drain", "n1"]);
    out.code(1);
    assert!(
        out.stderr
            .contains("the drain needs permission to patch nodes"),
        "{out:?}"
    );
    assert!(c.evictions().is_empty());

    // Listing pods refused.
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.deny(deny("list", "pods", ""));
    let out = c.maintain(&["drain", "n1"]);
    out.code(1);
    assert!(
        out.stderr
            .contains("the drain needs permission to list pods"),
        "{out:?}"
    );
    assert!(
        c.writes().iter().all(|w| w.path != "/api/v1/nodes/n1"),
        "not even cordoned"
    );

    // Events refused: only a warning.
    let c = web_on_n1(3, "maxUnavailable: 1");
    c.sandbox.deny(deny("create", "events", "default"));
    let out = c.maintain(&["drain", "n1"]);
    out.success();
    assert!(
        out.stderr
            .contains("warning: cannot record Kubernetes events"),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("grant create on events in namespace default"),
        "{out:?}"
    );
}

/// What kubectl drain needs (kubernetes/kubectl pkg/drain: the node get
/// and cordon patch, the pod list, DaemonSet gets for its filter, the
/// evictions, and a GET per pod until it is gone), and nothing more.
fn kubectl_drain_role() -> Vec<Rule> {
    vec![
        Rule::new(&["get", "patch"], &["nodes"]),
        Rule::new(&["get", "list"], &["pods"]),
        Rule::new(&["create"], &["pods/eviction"]),
        Rule::new(&["get"], &["daemonsets"]),
    ]
}

#[test]
fn exactly_kubectl_drains_permissions_are_enough() {
    // Three pods behind a budget that lets one go at a time: the drain must
    // wait for pods it may not watch and retry a budget it may not read.
    let theirs = web_on_n1(3, "maxUnavailable: 1");
    let ours = web_on_n1(3, "maxUnavailable: 1");
    for c in [&theirs, &ours] {
        c.sandbox.set_role(Some(kubectl_drain_role()));
    }
    let args = ["drain", "n1", "--ignore-daemonsets", "--timeout", "60s"];
    theirs.kubectl(&args).success();
    let out = ours.maintain(&args);
    out.success();
    assert!(out.stdout.contains("node/n1 drained"), "{out:?}");
    // Each missing permission is one warning, said once.
    for warning in [
        "warning: cannot watch pods",
        "warning: cannot watch PodDisruptionBudgets",
        "warning: cannot list nodes",
        "warning: cannot record Kubernetes events",
        "warning: cannot write the DrainInProgress/Drained conditions",
    ] {
        assert_eq!(out.stderr.matches(warning).count(), 1, "{warning}: {out:?}");
    }
    for c in [&theirs, &ours] {
        assert!(
            c.pods_on("n1").iter().all(|p| !p.starts_with("apps/web-")),
            "{:?}",
            c.pods_on("n1")
        );
        assert_eq!(
            c.get(Resource::Nodes, "", "n1").unwrap()["spec"]["unschedulable"],
            true
        );
    }
    // A refused request is not repeated in a loop: each kind is tried once
    // (a budget's watch once per budget).
    let refused: Vec<String> = ours
        .requests()
        .into_iter()
        .filter(|r| r.user_agent.starts_with("kubectl-maintain/") && r.status == 403)
        .map(|r| format!("{} {}?{}", r.method, r.path, r.query))
        .collect();
    assert!(refused.len() <= 6, "{refused:#?}");
}

const SECRET: &str = "tok-SECRET-8c1f0e";

#[test]
fn credentials_work_and_are_never_printed() {
    let scenario = crate::drain::two_nodes().yaml();
    let c = Cluster::start_with(&scenario, 33, |cfg| cfg.owner_token = Some(SECRET.into()));
    let cluster = c.cluster_entry();
    let dir = c.dir.path();
    // A wrong static token: refused, and neither token is printed.
    let wrong = dir.join("wrong.kubeconfig");
    std::fs::write(
        &wrong,
        format!("apiVersion: v1\nkind: Config\nclusters: [{{name: s, cluster: {cluster}}}]\ncontexts: [{{name: s, context: {{cluster: s, user: u}}}}]\ncurrent-context: s\nusers: [{{name: u, user: {{token: tok-WRONG-77aa}}}}]\n"),
    )
    .unwrap();
    let out = c.maintain(&[
        "drain",
        "n1",
        "--kubeconfig",
        wrong.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("error: You must be logged in to the server"),
        "{out:?}"
    );
    for leak in ["tok-WRONG-77aa", SECRET] {
        assert!(
            !out.stdout.contains(leak) && !out.stderr.contains(leak),
            "{leak} leaked: {out:?}"
        );
    }
    // A broken client key: the error says so without quoting it.
    let bad_key = dir.join("bad-key.kubeconfig");
    std::fs::write(
        &bad_key,
        format!("apiVersion: v1\nkind: Config\nclusters: [{{name: s, cluster: {cluster}}}]\ncontexts: [{{name: s, context: {{cluster: s, user: u}}}}]\ncurrent-context: s\nusers: [{{name: u, user: {{client-certificate-data: Y2VydC1ieXRlcy04ODE=, client-key-data: a2V5LWJ5dGVzLTk5Mg==}}}}]\n"),
    )
    .unwrap();
    let out = c.maintain(&["drain", "n1", "--kubeconfig", bad_key.to_str().unwrap()]);
    assert_ne!(out.code, 0, "{out:?}");
    for leak in [
        "Y2VydC1ieXRlcy04ODE",
        "a2V5LWJ5dGVzLTk5Mg",
        "cert-bytes-881",
        "key-bytes-992",
    ] {
        assert!(
            !out.stdout.contains(leak) && !out.stderr.contains(leak),
            "{leak} leaked: {out:?}"
        );
    }
    // An exec credential plugin, as kubeconfigs for cloud clusters use.
    let plugin = dir.join("credential-plugin.sh");
    std::fs::write(
        &plugin,
        format!("#!/bin/sh\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{SECRET}\"}}}}'\n"),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let exec = dir.join("exec.kubeconfig");
    std::fs::write(
        &exec,
        format!("apiVersion: v1\nkind: Config\nclusters: [{{name: s, cluster: {cluster}}}]\ncontexts: [{{name: s, context: {{cluster: s, user: u}}}}]\ncurrent-context: s\nusers: [{{name: u, user: {{exec: {{apiVersion: client.authentication.k8s.io/v1, command: \"{}\", interactiveMode: Never}}}}}}]\n", plugin.display()),
    )
    .unwrap();
    let out = c.maintain(&[
        "drain",
        "n1",
        "--kubeconfig",
        exec.to_str().unwrap(),
        "--allow-no-schedulable-nodes",
        "-o",
        "yaml",
    ]);
    out.success();
    assert!(
        !out.stdout.contains(SECRET) && !out.stderr.contains(SECRET),
        "{out:?}"
    );
    let authed = c
        .requests()
        .into_iter()
        .filter(|r| r.auth == "bearer" && r.status == 200)
        .count();
    assert!(authed > 0, "requests carried the plugin's token");
    let n1 = c.get(Resource::Nodes, "", "n1").unwrap();
    assert_eq!(n1["spec"]["unschedulable"], true);
}

/// An OIDC id-token from the kubeconfig's auth-provider (valid until 2100).
const ID_TOKEN: &str = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJpc3MiOiJodHRwczovL2lzc3Vlci5leGFtcGxlIiwic3ViIjoib2lkYy11c2VyIiwiZXhwIjo0MTAyNDQ0ODAwfQ.c2lnbmF0dXJl";

#[test]
fn oidc_id_tokens_from_the_kubeconfig_work_and_are_never_printed() {
    let c = Cluster::start_with(&crate::drain::two_nodes().yaml(), 33, |cfg| {
        cfg.owner_token = Some(ID_TOKEN.into());
    });
    let kc = c.dir.path().join("oidc.kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: s, cluster: {}}}]\ncontexts: [{{name: s, context: {{cluster: s, user: u}}}}]\ncurrent-context: s\nusers:\n- name: u\n  user:\n    auth-provider:\n      name: oidc\n      config: {{client-id: kubectl, idp-issuer-url: \"https://issuer.example\", id-token: \"{ID_TOKEN}\"}}\n",
            c.cluster_entry()
        ),
    )
    .unwrap();
    let out = c.maintain(&[
        "plan",
        "n1",
        "--kubeconfig",
        kc.to_str().unwrap(),
        "-o",
        "json",
    ]);
    out.success();
    assert!(!out.stdout.contains(ID_TOKEN) && !out.stderr.contains(ID_TOKEN));
    assert!(
        c.requests()
            .iter()
            .any(|r| r.auth == "bearer" && r.status == 200)
    );
}

/// One namespace's evictions refused: kubectl drain evicts the rest and
/// fails; so do we, and the report says which pod was refused and why.
#[test]
fn one_refused_eviction_does_not_stop_the_others() {
    let scenario = crate::scenario::Scenario::new()
        .node("n1")
        .node("spare")
        .deployment("web", 1)
        .object(serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}))
        .pod("other", "free", "n1", |p| {
            p["metadata"]["ownerReferences"] = serde_json::json!([]);
        })
        .yaml();
    let denied = |cfg: &mut kube_sandbox::SandboxConfig| {
        cfg.deny.push(deny("create", "pods/eviction", "other"));
    };
    let theirs = Cluster::start_with(&scenario, 33, denied);
    let ours = Cluster::start_with(&scenario, 33, denied);
    for c in [&theirs, &ours] {
        c.wait_settled();
    }
    let args = ["drain", "n1", "--force", "--timeout", "30s"];
    let kubectl = theirs.kubectl(&args);
    kubectl.code(1);
    let out = ours.maintain(&[&args[..], &["-o", "json"]].concat());
    out.code(1);
    let report = out.report();
    let n1 = report.node("n1");
    assert_eq!(n1.status, "failed", "{out:?}");
    assert!(
        n1.message
            .as_deref()
            .is_some_and(|m| m.contains("not allowed to create pods/eviction in namespace other")),
        "{out:?}"
    );
    assert_eq!(n1.pod("other/free").result["cause"]["kind"], "forbidden");
    for c in [&theirs, &ours] {
        assert!(
            c.get(Resource::Pods, "other", "free").is_some(),
            "refused pod stays"
        );
        assert!(
            c.pods_on("n1").iter().all(|p| !p.starts_with("apps/")),
            "the others were evicted: {:?}",
            c.pods_on("n1")
        );
    }
}

/// kubectl hands its global flags to the plugin; runbooks carry them. Each
/// is accepted with kubectl's meaning: impersonation reaches the API, and
/// --server with --token needs no kubeconfig at all.
#[test]
fn kubectl_global_flags_work_as_in_kubectl() {
    let c = Cluster::start_with(&crate::drain::two_nodes().yaml(), 33, |cfg| {
        cfg.owner_token = Some(SECRET.into());
    });
    let url = c.sandbox.url();
    // The same flags, to the real kubectl and to us.
    let flags = [
        "--server",
        &url,
        "--token",
        SECRET,
        "--as",
        "jane",
        "--as-group",
        "ops",
        "--as-group",
        "oncall",
        "-n",
        "default",
        "-v=4",
        "--request-timeout=30s",
        "--insecure-skip-tls-verify",
        "--warnings-as-errors",
        "--disable-compression=true",
        "--kubeconfig",
        "/nonexistent/but/overridden",
    ];
    let no_kubeconfig = &flags[..flags.len() - 2];
    let nowhere = [("KUBECONFIG", "/nonexistent")];
    // Whom they impersonate needs rights, as on a real cluster.
    let binding = c.dir.path().join("ops-admin.yaml");
    std::fs::write(
        &binding,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ops-admin}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: ops}]\n",
    )
    .expect("binding written");
    c.kubectl(&["apply", "-f", binding.to_str().expect("utf-8")])
        .success();
    c.kubectl_env(&[&["get", "nodes"][..], no_kubeconfig].concat(), &nowhere)
        .success();
    // --kubeconfig naming no file is an error for both.
    assert_ne!(
        c.kubectl(&[&["get", "nodes"][..], &flags[..]].concat())
            .code,
        0
    );
    assert_ne!(c.maintain(&[&["status"][..], &flags[..]].concat()).code, 0);
    let before = c.requests().len();
    // kubectl's --match-server-version compares kubectl's own version with
    // the server's; ours accepts it and has no kubectl version to compare.
    let out = c.maintain_env(
        &[
            &["drain", "n1", "--dry-run=server", "--match-server-version"][..],
            no_kubeconfig,
        ]
        .concat(),
        &nowhere,
    );
    out.success();
    let ours: Vec<_> = c.requests().into_iter().skip(before).collect();
    assert!(!ours.is_empty());
    for r in &ours {
        assert_eq!(r.impersonate_user, "jane", "{r:?}");
        assert_eq!(r.impersonate_groups, ["ops", "oncall"], "{r:?}");
        assert_eq!(r.auth, "bearer", "{r:?}");
    }
    assert!(!out.stdout.contains(SECRET) && !out.stderr.contains(SECRET));
}

/// A KUBECONFIG of several files is merged as kubectl merges it: the first
/// file to name a cluster, user or context, or the current context, wins.
#[test]
fn a_kubeconfig_of_several_files_is_merged_as_kubectl_merges_it() {
    let c = Cluster::start_with(&crate::drain::two_nodes().yaml(), 33, |cfg| {
        cfg.owner_token = Some(SECRET.into());
    });
    let write = |name: &str, text: String| {
        let path = c.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let context = write(
        "context.yaml",
        "apiVersion: v1\nkind: Config\ncurrent-context: sandbox\ncontexts:\n- name: sandbox\n  context: {cluster: sandbox, user: sandbox}\n".into(),
    );
    let cluster = |entry: &str| {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sandbox\n  cluster: {entry}\nusers:\n- name: sandbox\n  user: {{token: {SECRET}}}\n"
        )
    };
    let good = write("good.yaml", cluster(&c.cluster_entry()));
    let bad = write("bad.yaml", cluster("{server: 'http://127.0.0.1:9'}"));
    for (paths, works) in [
        (format!("{context}:{good}:{bad}"), true),
        (format!("{context}:{bad}:{good}"), false),
    ] {
        let env = [("KUBECONFIG", paths.as_str())];
        let theirs = c.kubectl_env(&["get", "nodes", "--request-timeout=5s"], &env);
        let ours = c.maintain_env(&["status", "--request-timeout=5s"], &env);
        assert_eq!(theirs.code == 0, works, "{paths}: {theirs:?}");
        assert_eq!(ours.code == 0, works, "{paths}: {ours:?}");
    }
}

/// kubectl drain never lists namespaces; neither do we, unless a plan
/// selects pods by namespace labels: then a refusal stops before any change.
#[test]
fn listing_namespaces_is_needed_only_for_namespace_selectors() {
    let scenario = crate::drain::two_nodes().deployment("web", 1).yaml();
    let no_namespaces = |cfg: &mut kube_sandbox::SandboxConfig| {
        cfg.deny.push(deny("list", "namespaces", ""));
    };
    let theirs = Cluster::start_with(&scenario, 33, no_namespaces);
    let ours = Cluster::start_with(&scenario, 33, no_namespaces);
    for c in [&theirs, &ours] {
        c.wait_settled();
        c.kubectl(&["uncordon", "n2"]).success();
    }
    theirs.kubectl(&["drain", "n1"]).success();
    let out = ours.maintain(&["drain", "n1"]);
    out.success();
    assert!(!out.stderr.contains("namespaces"), "{out:?}");
    assert!(
        ours.requests()
            .iter()
            .all(|r| !r.path.ends_with("/namespaces")),
        "no namespace list"
    );
    // With a namespace selector in the plan it is needed: a clear 403 first.
    let plan = ours.dir.path().join("plan.yaml");
    std::fs::write(
        &plan,
        "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  rules:\n  - name: keep\n    action: skip\n    namespaceSelector: {matchLabels: {team: x}}\n",
    )
    .unwrap();
    let out = ours.maintain(&["drain", "n2", "--plan", plan.to_str().unwrap()]);
    out.code(1);
    assert!(
        out.stderr
            .contains("the drain needs permission to list namespaces"),
        "{out:?}"
    );
}

/// Every global flag of kubectl 1.27 and 1.33 (`kubectl options`) is one of
/// ours; those kubectl's own process alone uses are accepted with valid
/// values and refused with bad ones (exit 2, no request); `--username` and
/// `--password` authenticate as kubectl's do.
#[test]
fn every_kubectl_global_flag_is_accepted() {
    let c = Cluster::start(&crate::drain::two_nodes().yaml(), 33);
    let help = c.maintain(&["drain", "--help"]);
    help.success();
    for minor in [27, 33] {
        let options = c.kubectl_minor(minor, &["options"]);
        options.success();
        let flags: Vec<&str> = options
            .stdout
            .lines()
            .filter_map(|l| l.trim_start().split(['=', ':']).next())
            .flat_map(|l| l.split(", "))
            .filter(|f| f.starts_with("--"))
            .collect();
        assert!(flags.len() > 20, "{options:?}");
        for flag in flags {
            assert!(
                help.stdout.contains(&format!("{flag} "))
                    || help.stdout.contains(&format!("{flag}[")),
                "kubectl 1.{minor}'s {flag} is not ours: {}",
                help.stdout
            );
        }
    }
    // Beside the sandbox kubeconfig's token, a login is refused as kubectl
    // refuses it (clientcmd's validateAuthInfo), before any request.
    let mark = c.mark();
    let both = c.maintain(&["status", "--username=admin", "--password=s3cret-basic"]);
    both.code(2);
    let kubectl = c.kubectl(&[
        "get",
        "nodes",
        "--username=admin",
        "--password=s3cret-basic",
    ]);
    let words = "more than one authentication method found for sandbox; found [token basicAuth], only one is allowed";
    assert!(both.stderr.contains(words), "{both:?}");
    assert!(kubectl.stderr.contains(words), "{kubectl:?}");
    c.assert_asked(mark, crate::harness::Asked::Nothing, "token and login");
    // A kubeconfig with no credential of its own takes the login.
    let login_only = c.kubeconfig_with_user("login-only", "{}");
    let before = c.requests().len();
    let out = c.maintain(&[
        "status",
        "--kubeconfig",
        login_only.to_str().unwrap(),
        "--log-flush-frequency=5s",
        "--vmodule=drain*=4,cordon=2",
        "--profile=cpu",
        "--profile-output=/nonexistent/profile.pprof",
        "--username=admin",
        "--password=s3cret-basic",
    ]);
    // Sent as a login, which kube-apiserver (as the sandbox) no longer
    // takes: refused in kubectl's words.
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("You must be logged in to the server"),
        "{out:?}"
    );
    let ours: Vec<_> = c.requests().into_iter().skip(before).collect();
    assert!(!ours.is_empty());
    for r in &ours {
        assert_eq!(r.auth, "basic", "{r:?}");
    }
    assert!(!out.stdout.contains("s3cret") && !out.stderr.contains("s3cret"));
    for bad in [
        "--log-flush-frequency=soon",
        "--vmodule=drain",
        "--profile=everything",
    ] {
        let before = c.requests().len();
        let out = c.maintain(&["status", bad]);
        out.code(2);
        assert_eq!(c.requests().len(), before, "no request for {bad}");
    }
}
