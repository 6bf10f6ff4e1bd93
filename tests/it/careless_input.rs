//! Input an operator's script produces by mistake never acts: an empty or
//! blank selector, a node name no node can have, a plan rule whose
//! selector is empty, two credentials at once, a group to act as without
//! a user, a lock held by another user's live run, a stdout that cannot be
//! written. Each is run through the binary against the sandbox, beside the
//! real kubectl where kubectl has the command, and the request log says
//! what reached the cluster (crate::harness::Cluster::assert_asked).
//!
//! The property tests at the end are the guard for the whole class: any
//! node argument or selector is either refused with exit 2 and no request
//! at all, or acts only on the nodes it names.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Duration;

use kube_conventions::selector::Selector;
use kube_sandbox::resources::Resource;
use proptest::prelude::*;

use crate::harness::{Asked, Cluster};
use crate::scenario::Scenario;

/// Three open nodes in two pools, one pod on each.
fn three_nodes() -> Cluster {
    let c = Scenario::new()
        .labelled_node("n1", &[("pool", "blue"), ("zone", "a")])
        .labelled_node("n2", &[("pool", "blue"), ("zone", "b")])
        .labelled_node("n3", &[("pool", "green"), ("zone", "a")])
        .deployment("web", 3)
        .start(33);
    c.wait_settled();
    c
}

fn cordoned(c: &Cluster) -> BTreeSet<String> {
    ["n1", "n2", "n3"]
        .into_iter()
        .filter(|n| {
            c.get(Resource::Nodes, "", n)
                .is_some_and(|o| o["spec"]["unschedulable"] == true)
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn an_empty_or_blank_selector_selects_nothing_in_any_verb() {
    let c = three_nodes();
    for sel in ["", " ", "\t", " , "] {
        for verb in [
            vec!["drain", "--yes", "--ignore-daemonsets"],
            vec!["roll", "--yes", "--ignore-daemonsets"],
            vec!["plan"],
            vec!["uncordon"],
        ] {
            let mark = c.mark();
            let mut args = verb.clone();
            args.extend(["-l", sel]);
            let out = c.maintain(&args);
            out.code(2);
            assert!(
                out.stderr.contains("-l/--selector") || out.stderr.contains("--selector:"),
                "{args:?}: {out:?}"
            );
            c.assert_asked(mark, Asked::Nothing, &format!("{args:?}"));
        }
        // kubectl drain refuses the same, in the words we quote for the
        // empty one (a blank one: `resource(s) were provided, but no name
        // was specified`).
        let kubectl = c.kubectl(&["drain", "-l", sel, "--ignore-daemonsets"]);
        assert_ne!(kubectl.code, 0, "{kubectl:?}");
        if sel.is_empty() {
            assert!(
                kubectl
                    .stderr
                    .contains("You must provide one or more resources by argument or filename"),
                "{kubectl:?}"
            );
        }
    }
    assert!(cordoned(&c).is_empty(), "nothing was cordoned");
}

#[test]
fn a_name_no_node_can_have_never_reaches_a_url() {
    let c = three_nodes();
    for name in [
        "n1?x", "n1#x", "..", ".", "%2F", "n1%2Fx", "n1\n", "N1", " n1",
    ] {
        for verb in ["drain", "uncordon", "status", "plan"] {
            let mark = c.mark();
            let out = c.maintain(&[verb, name]);
            out.code(2);
            c.assert_asked(mark, Asked::Nothing, &format!("{verb} {name:?}"));
        }
        // kubectl changes nothing either: it refuses, or the server finds
        // no such node.
        let kubectl = c.kubectl(&["drain", name, "--ignore-daemonsets"]);
        assert_ne!(kubectl.code, 0, "{name:?}: {kubectl:?}");
    }
    // client-go's words for what it refuses before a request.
    let out = c.maintain(&["drain", ".."]);
    assert!(
        out.stderr
            .contains(r#"invalid resource name "..": [may not be '..']"#),
        "{out:?}"
    );
    let kubectl = c.kubectl(&["drain", ".."]);
    assert!(
        kubectl.stderr.contains(r#"invalid resource name "..""#),
        "{kubectl:?}"
    );
    assert!(cordoned(&c).is_empty(), "nothing was cordoned");
}

#[test]
fn a_plan_rule_or_wave_with_an_empty_selector_changes_nothing() {
    let c = three_nodes();
    for (i, body) in [
        "rules: [{name: all, action: skip, podSelector: {}}]",
        "rules: [{name: all, action: skip, podSelector: {matchLabels: {}}}]",
        "rules: [{name: all, action: skip, podSelector: {matchExpressions: []}}]",
        "rules: [{name: all, action: skip, namespaceSelector: {}}]",
        "waves: [{podPriority: 100, podSelector: {}}]",
    ]
    .into_iter()
    .enumerate()
    {
        let plan = c.dir.path().join(format!("empty-{i}.yaml"));
        std::fs::write(
            &plan,
            format!("apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  {body}\n"),
        )
        .unwrap();
        let mark = c.mark();
        let out = c.maintain(&[
            "drain",
            "n3",
            "--yes",
            "--ignore-daemonsets",
            "--plan",
            plan.to_str().unwrap(),
        ]);
        out.code(2);
        assert!(
            out.stderr.contains(&format!("empty-{i}.yaml:4:")),
            "file and line: {out:?}"
        );
        c.assert_asked(mark, Asked::Nothing, body);
    }
    assert!(cordoned(&c).is_empty());
}

#[test]
fn two_credentials_or_a_group_without_a_user_are_refused_as_kubectl_refuses_them() {
    let c = three_nodes();
    let kubeconfig = c.kubeconfig_with_user(
        "two-methods",
        "{token: tok-secret-123, username: admin, password: pw-secret-456}",
    );
    let kc = kubeconfig.to_str().unwrap();
    let mark = c.mark();
    let ours = c.maintain(&["drain", "n1", "--ignore-daemonsets", "--kubeconfig", kc]);
    ours.code(2);
    let kubectl = c.kubectl(&["--kubeconfig", kc, "drain", "n1", "--ignore-daemonsets"]);
    assert_ne!(kubectl.code, 0);
    let words = "more than one authentication method found for u; found [token basicAuth], only one is allowed";
    assert!(ours.stderr.contains(words), "{ours:?}");
    assert!(kubectl.stderr.contains(words), "{kubectl:?}");
    for secret in ["tok-secret-123", "pw-secret-456"] {
        assert!(!ours.stderr.contains(secret) && !ours.stdout.contains(secret));
    }
    c.assert_asked(mark, Asked::Nothing, "token and login");

    // --as-group or --as-uid without --as would run as yourself.
    for flags in [
        vec!["--as-group", "ops"],
        vec!["--as-uid", "1234"],
        vec!["--as-group", "ops", "--as-group", "dev"],
    ] {
        let mark = c.mark();
        let mut args = vec!["drain", "n1", "--ignore-daemonsets", "--yes"];
        args.extend(flags.iter().copied());
        let ours = c.maintain(&args);
        ours.code(2);
        let mut kargs = flags.clone();
        kargs.extend(["drain", "n1", "--ignore-daemonsets"]);
        let kubectl = c.kubectl(&kargs);
        assert_ne!(kubectl.code, 0, "{kubectl:?}");
        let words = "without impersonating a user";
        assert!(ours.stderr.contains(words), "{ours:?}");
        assert!(kubectl.stderr.contains(words), "{kubectl:?}");
        c.assert_asked(mark, Asked::Nothing, &format!("{flags:?}"));
    }
    assert!(cordoned(&c).is_empty());
}

#[test]
fn the_sandbox_refuses_a_group_without_a_user_and_a_body_past_its_limit() {
    const TOKEN: &str = "owner-token-for-curl";
    let c = Cluster::start_with(&Scenario::new().node("n1").yaml(), 33, |cfg| {
        cfg.owner_token = Some(TOKEN.into());
    });
    let (server, _) = c.server_and_ca();
    let ca = c.dir.path().join("ca.pem");
    std::fs::write(&ca, c.sandbox.ca_pem()).unwrap();
    let token = TOKEN;
    let curl = |extra: &[&str]| {
        let mut cmd = std::process::Command::new("curl");
        cmd.args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
            .arg(&ca)
            .args(extra);
        let out = cmd.output().expect("curl runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let auth = format!("Authorization: Bearer {token}");
    // kube-apiserver's impersonation filter: groups alone are refused.
    let code = curl(&[
        "-H",
        &auth,
        "-H",
        "Impersonate-Group: ops",
        &format!("{server}/api/v1/nodes"),
    ]);
    assert_eq!(code, "500");
    // A body declared over 3 MiB: 413 before it is read (curl waits for
    // `100 Continue` and gets the refusal instead). One streamed in chunks
    // is cut at the same bound (http_body_util::Limited), and the
    // connection with it, which a client sees as a reset mid-upload.
    let big = c.dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 4 * 1024 * 1024]).unwrap();
    let data = format!("@{}", big.display());
    let url = format!("{server}/api/v1/namespaces");
    let code = curl(&[
        "-H",
        &auth,
        "-H",
        "Content-Type: application/json",
        "--data-binary",
        &data,
        &url,
    ]);
    assert_eq!(code, "413");
    // A credential the sandbox did not make: 401 on the headers alone.
    let code = curl(&[
        "-H",
        "Authorization: Bearer not-a-token",
        "--data-binary",
        &data,
        &url,
    ]);
    assert_eq!(code, "401");
}

#[test]
fn a_full_stdout_finishes_the_work_then_exits_1_with_one_line() {
    let c = Scenario::new()
        .cordoned_node("n5")
        .cordoned_node("n6")
        .start(33);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = c.maintain_with_stdout(&["uncordon", "n5", "n6"], full.into());
    out.code(1);
    assert!(!out.stderr.contains("panicked"), "{out:?}");
    assert!(
        out.stderr
            .contains("error: write /dev/stdout: no space left on device"),
        "{out:?}"
    );
    for n in ["n5", "n6"] {
        let node = c.get(Resource::Nodes, "", n).unwrap();
        assert_ne!(node["spec"]["unschedulable"], true, "{n} uncordoned");
    }
}

#[test]
fn another_users_live_roll_keeps_its_lock() {
    let c = Scenario::new()
        .node("n4")
        .node("n5")
        .deployment("web", 1)
        .start(33);
    c.wait_settled();
    // Another local user's live process: kill(pid, 0) answers EPERM.
    let mut theirs = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sleep",
            "120",
        ])
        .spawn()
        .expect("setpriv");
    let pid = theirs.id();
    let holder = format!(
        "kubectl-maintain/{}/{pid}/{}",
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap()
            .trim(),
        process_identity(pid)
    );
    let lease = serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "kubectl-maintain-n4", "namespace": "kube-system"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 3600,
                 "renewTime": kube_conventions::time::now_rfc3339_micros(),
                 "acquireTime": kube_conventions::time::now_rfc3339_micros()},
    });
    let file = c.dir.path().join("lease.json");
    std::fs::write(&file, lease.to_string()).unwrap();
    c.kubectl(&["create", "-f", file.to_str().unwrap()])
        .success();
    let mark = c.mark();
    let mut run = c.maintain_watched(&["roll", "n4", "--yes", "--ignore-daemonsets"]);
    run.wait_for_stderr(&format!("locked by {holder}"), Duration::from_secs(30));
    let out = run.finish(Duration::ZERO);
    let _ = theirs.kill();
    let _ = theirs.wait();
    assert!(!out.stderr.contains("took over"), "{out:?}");
    let after = c
        .get(Resource::Leases, "kube-system", "kubectl-maintain-n4")
        .unwrap();
    assert_eq!(after["spec"]["holderIdentity"], holder.as_str());
    // Waiting for the lock, the roll may say it plans n4 (its
    // MaintenancePlanned condition); it never cordons it.
    let ours = c.requests().into_iter().skip(mark);
    let cordons: Vec<_> = ours
        .filter(|r| r.method != "GET" && r.path == "/api/v1/nodes/n4" && r.request_bytes > 0)
        .filter(|_| {
            c.get(Resource::Nodes, "", "n4")
                .is_some_and(|n| n["spec"]["unschedulable"] == true)
        })
        .collect();
    assert!(cordons.is_empty(), "n4 not cordoned: {cordons:?}");
}

/// `BOOT.PIDNS.START` as crate::roll::holder writes it, read here from
/// /proc so that the test does not take the product's word for it.
fn process_identity(pid: u32) -> String {
    let boot: String = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap()
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(12)
        .collect();
    let ns = std::fs::read_link("/proc/self/ns/pid").unwrap();
    let ns = ns.to_str().unwrap();
    let ns = &ns[5..ns.len() - 1];
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let start = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(19)
        .unwrap()
        .to_string();
    format!("{boot}.{ns}.{start}")
}

/// Every entry of tests/corpus/careless (one argument list each, what a
/// script produces by mistake) is refused with exit 2 before any request.
/// A case found later belongs there.
#[test]
fn every_careless_corpus_entry_is_refused_before_any_request() {
    let c = three_nodes();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let plans = root.join("careless-plans");
    let mut entries: Vec<_> = std::fs::read_dir(root.join("careless"))
        .expect("tests/corpus/careless")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    assert!(entries.len() >= 20, "{entries:?}");
    for entry in entries {
        let argv: Vec<String> =
            serde_json::from_str(&std::fs::read_to_string(&entry).expect("readable"))
                .expect("a JSON list of arguments");
        let argv: Vec<String> = argv
            .into_iter()
            .map(|a| a.replace("{careless-plans}", plans.to_str().expect("utf-8")))
            .collect();
        let args: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mark = c.mark();
        let out = c.maintain(&args);
        out.code(2);
        assert!(!out.stderr.contains("panicked"), "{entry:?}: {out:?}");
        c.assert_asked(mark, Asked::Nothing, &entry.display().to_string());
    }
    assert!(cordoned(&c).is_empty());
}

/// Node arguments as scripts make them: mostly names, some with the
/// characters a mistake brings (`?`, `#`, `%`, `/`, spaces, newlines,
/// capitals, dots), some `TYPE/NAME`.
fn node_arg() -> impl Strategy<Value = String> {
    let name = prop::string::string_regex("[a-z0-9N.?#%/ \\n_-]{0,12}").expect("regex");
    let prefix = prop::sample::select(vec!["", "", "node/", "nodes/", "no/", "pod/", "/"]);
    let known = prop::sample::select(vec!["n1", "n2", "n3", "n9"]);
    prop_oneof![
        (prefix.clone(), name).prop_map(|(p, n)| format!("{p}{n}")),
        (prefix, known).prop_map(|(p, n)| format!("{p}{n}")),
    ]
}

/// Selectors as scripts make them: blank, half-rendered, or well formed.
fn selector() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "",
        " ",
        ",",
        "pool",
        "pool=",
        "=blue",
        "pool=blue",
        "pool!=blue",
        "zone",
        "!zone",
        "zone in (a)",
        "zone notin (a,b)",
        "pool==green",
        "(",
        "$POOL",
        "\n",
    ]);
    prop::collection::vec(word, 0..3).prop_map(|w| w.join(""))
}

/// The nodes a run changed (dry runs included: they are what it would
/// change) from its requests.
fn nodes_touched(requests: &[kube_sandbox::request_log::Entry]) -> BTreeSet<String> {
    requests
        .iter()
        .filter(|r| r.method != "GET")
        .filter_map(|r| r.path.strip_prefix("/api/v1/nodes/"))
        .map(|rest| rest.split('/').next().unwrap_or_default().to_string())
        .collect()
}

const LABELS: [(&str, &[(&str, &str)]); 3] = [
    ("n1", &[("pool", "blue"), ("zone", "a")]),
    ("n2", &[("pool", "blue"), ("zone", "b")]),
    ("n3", &[("pool", "green"), ("zone", "a")]),
];

/// What a refused run may have asked: nothing, unless the cluster had to
/// say that no node has that name or matches that selector (exit 2 too).
fn refused(out: &crate::harness::Run) -> Asked {
    if out.stderr.contains("not found\n") && out.stderr.contains("Error from server (NotFound)")
        || out.stderr.to_lowercase().contains("no nodes match")
    {
        Asked::NoWrite
    } else {
        Asked::Nothing
    }
}

fn runner() -> proptest::test_runner::TestRunner {
    proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })
}

/// Any node arguments: refused with exit 2 and no request, or a dry run
/// that would change only the nodes they name.
#[test]
fn any_node_argument_is_refused_or_acts_only_on_what_it_names() {
    let c = three_nodes();
    let result = runner().run(&prop::collection::vec(node_arg(), 1..3), |args| {
        let mark = c.mark();
        let mut argv = vec![
            "drain",
            "--dry-run=server",
            "--ignore-daemonsets",
            "--force",
            "--delete-emptydir-data",
        ];
        argv.extend(args.iter().map(String::as_str));
        let out = c.maintain(&argv);
        if out.code == 2 {
            c.assert_asked(mark, refused(&out), &format!("{args:?}"));
        } else {
            let named: BTreeSet<String> = args
                .iter()
                .map(|a| {
                    a.rsplit_once('/')
                        .map_or(a.as_str(), |(_, n)| n)
                        .to_string()
                })
                .collect();
            let ours = c.assert_asked(mark, Asked::NoWrite, &format!("{args:?}"));
            let touched = nodes_touched(&ours);
            prop_assert!(
                touched.is_subset(&named),
                "{args:?} touched {touched:?}: {out:?}"
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(cordoned(&c).is_empty());
}

/// Any selector: refused with exit 2 and no request, or a dry run that
/// would change only the nodes it matches, never every node by accident.
#[test]
fn any_selector_is_refused_or_acts_only_on_what_it_selects() {
    let c = three_nodes();
    let result = runner().run(&selector(), |sel| {
        let mark = c.mark();
        let out = c.maintain(&[
            "drain",
            "-l",
            &sel,
            "--dry-run=server",
            "--ignore-daemonsets",
            "--force",
            "--delete-emptydir-data",
        ]);
        let parsed = Selector::parse(&sel);
        if out.code == 2 {
            c.assert_asked(mark, refused(&out), &sel);
            prop_assert!(
                parsed.as_ref().map_or(true, Selector::is_everything)
                    || out.stderr.to_lowercase().contains("no nodes match"),
                "{sel:?} refused: {out:?}"
            );
        } else {
            let parsed = parsed.expect("what was taken parses");
            prop_assert!(
                !parsed.is_everything(),
                "{sel:?} selected everything: {out:?}"
            );
            let matched: BTreeSet<String> = LABELS
                .iter()
                .filter(|(_, l)| {
                    parsed.matches(
                        &l.iter()
                            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                            .collect(),
                    )
                })
                .map(|(n, _)| (*n).to_string())
                .collect();
            let ours = c.assert_asked(mark, Asked::NoWrite, &sel);
            let touched = nodes_touched(&ours);
            prop_assert!(
                touched.is_subset(&matched),
                "{sel:?} touched {touched:?}, matches {matched:?}"
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(cordoned(&c).is_empty());
}

/// A selector as a plan's template renders it: absent, empty in each
/// spelling, or one that says which pods.
fn plan_selector() -> impl Strategy<Value = Option<&'static str>> {
    prop::sample::select(vec![
        None,
        Some("{}"),
        Some("{matchLabels: {}}"),
        Some("{matchExpressions: []}"),
        Some("{matchLabels: {}, matchExpressions: []}"),
        Some("{matchLabels: {app: web}}"),
        Some("{matchExpressions: [{key: app, operator: Exists}]}"),
    ])
}

fn is_empty_selector(s: Option<&str>) -> bool {
    s.is_some_and(|s| !s.contains("app"))
}

/// Any plan of rules and waves: refused with exit 2 and no request when a
/// rule would match every pod or a wave's selector is empty, taken (a dry
/// run on the node named, and only there) otherwise.
#[test]
fn any_plan_with_an_empty_selector_is_refused_and_any_other_taken() {
    let c = three_nodes();
    let rule = (
        prop::sample::select(vec!["skip", "waitCompleted"]),
        plan_selector(),
        plan_selector(),
    );
    let wave = (plan_selector(), plan_selector());
    let plans = (
        prop::collection::vec(rule, 0..3),
        prop::collection::vec(wave, 0..2),
    );
    let n = std::sync::atomic::AtomicUsize::new(0);
    let result = runner().run(&plans, |(rules, waves)| {
        let n = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut yaml = String::from(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  surge: false\n",
        );
        let field =
            |name: &str, s: Option<&str>| s.map_or(String::new(), |s| format!(", {name}: {s}"));
        if !rules.is_empty() {
            yaml.push_str("  rules:\n");
            for (i, (action, pods, namespaces)) in rules.iter().enumerate() {
                let (pods, namespaces) = match (pods, namespaces) {
                    // A rule with no selector at all is refused already;
                    // give it one that says which pods.
                    (None, None) => (Some("{matchLabels: {app: web}}"), None),
                    other => (*other.0, *other.1),
                };
                let _ = writeln!(
                    yaml,
                    "  - {{name: r{i}, action: {action}{}{}}}",
                    field("podSelector", pods),
                    field("namespaceSelector", namespaces)
                );
            }
        }
        if !waves.is_empty() {
            yaml.push_str("  waves:\n");
            for (i, (pods, namespaces)) in waves.iter().enumerate() {
                let _ = writeln!(
                    yaml,
                    "  - {{name: w{i}, podPriority: {}{}{}}}",
                    100 * (i + 1),
                    field("podSelector", *pods),
                    field("namespaceSelector", *namespaces)
                );
            }
        }
        let every_pod = rules.iter().any(|(_, p, ns)| {
            let given: Vec<&str> = [*p, *ns].into_iter().flatten().collect();
            !given.is_empty() && given.iter().all(|s| is_empty_selector(Some(s)))
        });
        let empty_wave = waves
            .iter()
            .any(|(p, ns)| is_empty_selector(*p) || is_empty_selector(*ns));
        let file = c.dir.path().join(format!("plan-{n}.yaml"));
        std::fs::write(&file, &yaml).unwrap();
        let mark = c.mark();
        let out = c.maintain(&[
            "drain",
            "n1",
            "--plan",
            file.to_str().unwrap(),
            "--dry-run=server",
            "--ignore-daemonsets",
        ]);
        if every_pod || empty_wave {
            prop_assert_eq!(out.code, 2, "{}: {:?}", yaml, out);
            c.assert_asked(mark, Asked::Nothing, &yaml);
        } else {
            prop_assert_ne!(out.code, 2, "{}: {:?}", yaml, out);
            let ours = c.assert_asked(mark, Asked::NoWrite, &yaml);
            let touched = nodes_touched(&ours);
            prop_assert!(touched.iter().all(|t| t == "n1"), "{yaml}: {touched:?}");
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(cordoned(&c).is_empty());
}
