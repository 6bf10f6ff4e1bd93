//! What a CI script sees: the real kubectl drain (1.33 and 1.27) and our
//! binary on two copies of one scenario, stdout piped as in a shell step,
//! compared line by line as scripts read them: `grep -c evicted`,
//! `grep "^node/.* drained"`, `2>err; cat err`, the exit status.

use std::collections::BTreeSet;

use kube_sandbox::objects::pods;
use serde_json::json;

use crate::harness::{Cluster, Run};
use crate::scenario::{Scenario, shutdown, template};

/// What one side printed, as a script reads it: generated pod names made
/// alike on both copies, the orders kubectl takes from Go maps and
/// goroutines made canonical.
#[derive(Debug)]
struct Seen {
    code: i32,
    stdout: Vec<String>,
    stderr: Vec<String>,
}

/// Each generated pod name on the copy, with its generateName and `*`:
/// alike on both copies.
fn generated_names(c: &Cluster) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = c
        .pods()
        .iter()
        .filter_map(|p| {
            let generated = p["metadata"]["generateName"].as_str()?;
            Some((
                pods::key(p).split('/').nth(1)?.to_string(),
                format!("{generated}*"),
            ))
        })
        .collect();
    names.sort_by_key(|(name, _)| std::cmp::Reverse(name.len()));
    names
}

impl Seen {
    fn of(names: &[(String, String)], run: &Run) -> Self {
        let lines = |text: &str| -> Vec<String> {
            text.lines()
                .map(|l| {
                    let mut l = l.to_string();
                    for (name, alike) in names {
                        l = l.replace(name.as_str(), alike);
                    }
                    canonical(&l)
                })
                .collect()
        };
        Seen {
            code: run.code,
            stdout: lines(&run.stdout),
            stderr: lines(&run.stderr),
        }
    }

    /// `grep -c PATTERN` on stdout.
    fn count(&self, pattern: &str) -> usize {
        self.stdout.iter().filter(|l| l.contains(pattern)).count()
    }

    /// Lines as a set: kubectl asks again every 5 s and says so each time.
    fn set(lines: &[String]) -> BTreeSet<&str> {
        lines.iter().map(String::as_str).collect()
    }
}

/// One order for what kubectl orders at random: the errors inside an
/// aggregate's brackets, the messages of a `Warning:` line.
fn canonical(line: &str) -> String {
    if let Some(rest) = line.strip_prefix("Warning: ") {
        let mut parts: Vec<&str> = rest.split("; ").collect();
        parts.sort_unstable();
        return format!("Warning: {}", parts.join("; "));
    }
    let (Some(open), Some(close)) = (line.find('['), line.rfind(']')) else {
        return line.to_string();
    };
    let inner = &line[open + 1..close];
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, _) in inner.match_indices(", ") {
        let next = &inner[i + 2..];
        if i >= start && (next.starts_with("error when") || next.starts_with("cannot delete")) {
            parts.push(&inner[start..i]);
            start = i + 2;
        }
    }
    parts.push(&inner[start..]);
    parts.sort_unstable();
    format!(
        "{}[{}]{}",
        &line[..open],
        parts.join(", "),
        &line[close + 1..]
    )
}

/// Runs `args` with kubectl 1.`minor` on one copy and with our binary on
/// the other, and checks what a script would read: the same stdout lines,
/// the same `evicted`/`deleted`/`drained` counts, every kubectl stderr line
/// in ours, and failure where kubectl fails.
fn side_by_side(scenario: &Scenario, minor: u32, settle: fn(&Cluster), args: &[&str]) -> Seen {
    let theirs_c = scenario.start(minor);
    let ours_c = scenario.start(minor);
    for c in [&theirs_c, &ours_c] {
        settle(c);
    }
    let (theirs_names, ours_names) = (generated_names(&theirs_c), generated_names(&ours_c));
    let theirs_run = theirs_c.kubectl_minor(minor, args);
    let ours_run = ours_c.maintain(args);
    let (theirs, ours) = (
        Seen::of(&theirs_names, &theirs_run),
        Seen::of(&ours_names, &ours_run),
    );
    let both = format!("kubectl 1.{minor}: {theirs_run:?}\n\nours: {ours_run:?}");
    assert_eq!(
        Seen::set(&theirs.stdout),
        Seen::set(&ours.stdout),
        "stdout lines differ\n{both}"
    );
    for pattern in [" evicted", " deleted", " drained", " cordoned"] {
        assert_eq!(
            theirs.count(pattern),
            ours.count(pattern),
            "grep -c '{pattern}'\n{both}"
        );
    }
    let ours_err = Seen::set(&ours.stderr);
    for line in Seen::set(&theirs.stderr) {
        assert!(
            ours_err.contains(line),
            "kubectl's stderr line is not in ours: {line}\n{both}"
        );
    }
    assert_eq!(theirs.code == 0, ours.code == 0, "exit status\n{both}");
    ours
}

/// n1 runs two web pods, a pod with no controller, a pod with an emptyDir
/// and a DaemonSet's pod; n2 takes what leaves n1.
fn mixed() -> Scenario {
    Scenario::new()
        .node("n1")
        .cordoned_node("n2")
        .deployment("web", 2)
        .deployment_with("scratch", 1, |d| {
            template(d)["spec"]["volumes"] = json!([{"name": "tmp", "emptyDir": {}}]);
        })
        .pod("default", "bare", "n1", |_| {})
        .object(json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "c", "image": "x"}]}}}}))
}

/// Every pod Ready on n1, then n2 opened.
fn settle(c: &Cluster) {
    c.wait_settled();
    c.kubectl(&["uncordon", "n2"]).success();
}

const ALL_FLAGS: [&str; 6] = [
    "--force",
    "--ignore-daemonsets",
    "--delete-emptydir-data",
    "--timeout",
    "30s",
    "--grace-period=1",
];

fn drain(nodes: &[&'static str], flags: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec!["drain"];
    args.extend_from_slice(nodes);
    args.extend_from_slice(flags);
    args
}

#[test]
fn a_drain_that_succeeds_prints_kubectls_lines() {
    for minor in [33, 27] {
        let ours = side_by_side(&mixed(), minor, settle, &drain(&["n1"], &ALL_FLAGS));
        assert_eq!(ours.code, 0, "{ours:?}");
        assert_eq!(ours.count("pod/"), 4, "{ours:?}");
        assert_eq!(
            ours.stdout.last().map(String::as_str),
            Some("node/n1 drained")
        );
    }
}

#[test]
fn a_refused_drain_says_why_on_stderr_in_each_minors_words() {
    for minor in [33, 27] {
        let ours = side_by_side(&mixed(), minor, settle, &drain(&["n1"], &[]));
        assert_eq!(ours.code, 3, "{ours:?}");
        assert_eq!(ours.stdout, ["node/n1 cordoned"], "{ours:?}");
    }
}

/// n1 runs a pod whose budget allows no disruption and one that takes
/// 30 s to stop: a `--timeout` of 3 s ends the drain on both.
fn stuck() -> Scenario {
    Scenario::new()
        .node("n1")
        .cordoned_node("n2")
        .deployment("db", 1)
        .pdb("db", "minAvailable: 1")
        .deployment_with("slow", 1, |d| {
            shutdown(template(d), 30.0);
            template(d)["spec"]["terminationGracePeriodSeconds"] = json!(60);
        })
}

#[test]
fn a_timeout_fails_the_node_with_kubectls_errors() {
    for minor in [33, 27] {
        let ours = side_by_side(
            &stuck(),
            minor,
            settle,
            &drain(&["n1"], &["--timeout", "3s"]),
        );
        assert_eq!(ours.code, 3, "{ours:?}");
        assert!(
            ours.stderr
                .iter()
                .any(|l| l == "There are pending nodes to be drained:"),
            "{ours:?}"
        );
    }
}

#[test]
fn dry_runs_print_what_kubectl_would_evict() {
    for dry_run in ["--dry-run=client", "--dry-run=server"] {
        let mut flags = ALL_FLAGS.to_vec();
        flags.push(dry_run);
        let ours = side_by_side(&mixed(), 33, settle, &drain(&["n1"], &flags));
        assert!(ours.count("evicting pod") == 4, "{ours:?}");
    }
}

#[test]
fn disable_eviction_says_deleted_and_times_out_as_kubectl() {
    let mut flags = ALL_FLAGS.to_vec();
    flags.push("--disable-eviction");
    let ours = side_by_side(&mixed(), 33, settle, &drain(&["n1"], &flags));
    assert_eq!(ours.count(" deleted"), 4, "{ours:?}");
    assert_eq!(ours.count("evicting"), 0, "{ours:?}");
    for minor in [33, 27] {
        side_by_side(
            &stuck(),
            minor,
            settle,
            &drain(&["n1"], &["--disable-eviction", "--timeout", "2s"]),
        );
    }
}

/// n1 and n2 each run web pods; a pod with no controller on n2 makes
/// kubectl refuse n2 without `--force`; n3 takes what leaves.
fn two_pools() -> Scenario {
    Scenario::new()
        .labelled_node("n1", &[("pool", "web")])
        .node("n2")
        .object(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n3", "labels": {"pool": "web"}},
            "spec": {"unschedulable": true}}))
        .deployment_with("web", 2, |d| {
            template(d)["spec"]["nodeSelector"] = json!({"pool": "web"});
        })
        .pod("default", "bare", "n2", |_| {})
}

fn settle_two(c: &Cluster) {
    c.wait_settled();
    c.kubectl(&["uncordon", "n3"]).success();
}

#[test]
fn several_nodes_with_one_refused_and_resource_names_as_kubectl_prints_them() {
    for minor in [33, 27] {
        let ours = side_by_side(
            &two_pools(),
            minor,
            settle_two,
            &drain(&["node/n1", "nodes/n2"], &["--timeout", "30s"]),
        );
        assert_eq!(ours.code, 3, "{ours:?}");
        assert!(
            ours.stdout.contains(&"node/n1 drained".to_string()),
            "{ours:?}"
        );
        assert!(ours.stderr.contains(&" n2".to_string()), "{ours:?}");
    }
}

#[test]
fn uncordon_prints_kubectls_lines() {
    let cordon_n1 = |c: &Cluster| {
        c.wait_settled();
        c.kubectl(&["cordon", "n1"]).success();
    };
    let ours = side_by_side(
        &two_pools(),
        33,
        cordon_n1,
        &["uncordon", "node/n1", "nodes/n2"],
    );
    assert_eq!(
        ours.stdout,
        ["node/n1 uncordoned", "node/n2 already uncordoned"],
        "{ours:?}"
    );
}

#[test]
fn a_pod_terminating_past_skip_wait_for_delete_timeout_is_told_as_kubectl_tells_it() {
    let held = Scenario::new()
        .node("n1")
        .pod("default", "held", "n1", |p| {
            // Its containers stop at once; its finalizer keeps it Terminating.
            p["metadata"]["finalizers"] = json!(["example.com/cleanup"]);
            shutdown(p, 0.2);
        });
    let ours = side_by_side(
        &held,
        33,
        Cluster::wait_settled,
        &drain(
            &["n1"],
            &[
                "--force",
                "--skip-wait-for-delete-timeout=1",
                "--timeout",
                "20s",
            ],
        ),
    );
    assert!(
        ours.stdout
            .contains(&"pod \"held\" has DeletionTimestamp older than 1 seconds, skipping".into()),
        "{ours:?}"
    );
    assert_eq!(ours.code, 0, "{ours:?}");
}
