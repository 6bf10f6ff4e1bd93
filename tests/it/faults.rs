//! A flaky API server does not stop the work (issue #27): a pool drain
//! under `--max-parallel 4` and a `roll`, each under seeded 500s, 503s and
//! throttling 429s on every request plus cut watches, end with every node
//! drained and returned, no Lease held, no pod evicted twice, and a report
//! that says so. Each runs with two seeds here; `FAULT_SEEDS=1-40 cargo
//! test --test it faults` soaks many more.

use std::collections::BTreeSet;

use kube_sandbox::config::Faults;
use kube_sandbox::resources::Resource;

use crate::harness::Cluster;
use crate::pool::{DRAIN_FOUR, FOUR, four_nodes, roll_report, statuses};

/// The seeds to run: `FAULT_SEEDS` (`3` or `1-40`), two by default.
fn seeds() -> Vec<u64> {
    let spec = std::env::var("FAULT_SEEDS").unwrap_or_else(|_| "1-2".into());
    match spec.split_once('-') {
        Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect(),
        None => vec![spec.parse().unwrap()],
    }
}

fn faults(seed: u64) -> Faults {
    Faults {
        error500: 0.10,
        error503: 0.10,
        throttle429: 0.10,
        watch_cut_after: 25,
        seed,
        ..Faults::default()
    }
}

/// Every pod evicted at most once, and every node schedulable, with its
/// maintenance Lease released.
fn assert_returned_clean(c: &Cluster, seed: u64) {
    let evicted: Vec<String> = c.evictions().into_iter().map(|(p, _)| p).collect();
    let unique: BTreeSet<&String> = evicted.iter().collect();
    assert_eq!(unique.len(), evicted.len(), "seed {seed}: {evicted:?}");
    for n in FOUR {
        let node = c.get(Resource::Nodes, "", n).unwrap();
        assert!(
            node["spec"]["unschedulable"].is_null() || node["spec"]["unschedulable"] == false,
            "seed {seed}: {n} left cordoned"
        );
        if let Some(lease) = c.get(
            Resource::Leases,
            "kube-system",
            &format!("kubectl-maintain-{n}"),
        ) {
            assert!(
                lease["spec"]["holderIdentity"].is_null(),
                "seed {seed}: {lease}"
            );
        }
    }
}

/// The 500s the run's own requests met: proof that faults were injected.
fn faults_met(c: &Cluster) -> usize {
    c.requests()
        .iter()
        .filter(|r| r.user_agent.starts_with("kubectl-maintain/") && r.status >= 429)
        .count()
}

#[test]
fn a_pool_drain_under_max_parallel_survives_server_errors_throttling_and_cut_watches() {
    for seed in seeds() {
        let c = four_nodes().start(33);
        c.wait_settled();
        c.sandbox.set_faults(faults(seed));
        let mut drain = DRAIN_FOUR.to_vec();
        drain.extend(["--timeout", "120s", "-o", "json"]);
        let out = c.maintain(&drain);
        out.success();
        let report = out.report();
        for n in FOUR {
            assert_eq!(report.node(n).status, "drained", "seed {seed}: {out:?}");
            assert!(
                c.pods_on(n).iter().all(|p| !p.starts_with("apps/web-")),
                "seed {seed}: {n}: {:?}",
                c.pods_on(n)
            );
        }
        assert!(faults_met(&c) > 0, "seed {seed}: no fault was injected");
        assert!(
            out.stderr.contains("retrying"),
            "seed {seed}: {}",
            out.stderr
        );
        let out = c.maintain(&["uncordon", "-l", "pool=blue"]);
        out.success();
        assert_returned_clean(&c, seed);
    }
}

#[test]
fn a_roll_survives_server_errors_throttling_and_cut_watches() {
    for seed in seeds() {
        let c = four_nodes().start(33);
        c.wait_settled();
        c.sandbox.set_faults(faults(seed));
        // The action runs no kubectl of its own: the real kubectl does not
        // retry a 500, and the faults are for what the roll sends.
        let out = c.maintain(&[
            "roll",
            "-l",
            "pool=blue",
            "--ignore-daemonsets",
            "--max-parallel",
            "2",
            "--exec",
            "true",
            "--wait-for-budgets",
            "--ready-timeout",
            "60s",
            "-o",
            "json",
        ]);
        out.success();
        let report = roll_report(&out);
        for (node, status) in statuses(&report) {
            assert_eq!(status, "done", "seed {seed}: {node}: {out:?}");
        }
        assert!(faults_met(&c) > 0, "seed {seed}: no fault was injected");
        assert_returned_clean(&c, seed);
    }
}

/// Node conditions as `type=status`, sorted.
fn conditions(c: &Cluster, node: &str) -> Vec<String> {
    let n = c.get(Resource::Nodes, "", node).unwrap();
    let mut out: Vec<String> = n["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "Drained" || c["type"] == "DrainInProgress")
        .map(|c| {
            format!(
                "{}={}",
                c["type"].as_str().unwrap(),
                c["status"].as_str().unwrap()
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn condition_writes_are_retried_and_a_lasting_failure_fails_the_command() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let status_500s = |times| Faults {
        error500: 1.0,
        only: vec!["patch nodes/status".into()],
        times,
        ..Faults::default()
    };
    // Six condition writes answered 500: retried, the drain succeeds and
    // followers read the truth.
    c.sandbox.set_faults(status_500s(6));
    c.maintain(&DRAIN_FOUR).success();
    for n in FOUR {
        assert_eq!(
            conditions(&c, n),
            ["DrainInProgress=False", "Drained=True"],
            "{n}"
        );
    }
    // Every write failing past --request-timeout: the nodes are returned,
    // but Drained=True stays on them, so the command must not succeed.
    c.sandbox.set_faults(status_500s(0));
    let uncordon = ["uncordon", "-l", "pool=blue"];
    let mut bounded = uncordon.to_vec();
    bounded.extend(["--request-timeout", "2s"]);
    let out = c.maintain(&bounded);
    out.code(1);
    for n in FOUR {
        assert!(
            out.stderr.contains(&format!(
                "error: node/{n}: its DrainInProgress/Drained conditions could not be written"
            )),
            "{out:?}"
        );
    }
    // The API healthy again, uncordon run again puts them right.
    c.sandbox.set_faults(Faults::default());
    c.maintain(&uncordon).success();
    for n in FOUR {
        assert_eq!(
            conditions(&c, n),
            ["DrainInProgress=False", "Drained=False"],
            "{n}"
        );
    }
}

/// A server that answers nothing but 500, and one that does not answer:
/// each command ends with one line naming what failed, the server's URL
/// and what to check, never a debug structure.
#[test]
fn a_server_failing_everything_gets_one_readable_line() {
    let c = four_nodes().start(33);
    c.wait_settled();
    c.sandbox.set_faults(Faults {
        error500: 1.0,
        ..Faults::default()
    });
    let url = c.sandbox.url();
    let debug_marks = ["Status {", "Some(", "ApiError", "ServiceError", "{ "];
    for command in [
        &["drain", "n1", "--request-timeout=2s"][..],
        &["uncordon", "n1", "--request-timeout=2s"],
        &["status", "--request-timeout=2s"],
        &["roll", "n1", "--request-timeout=2s", "--yes"],
    ] {
        let out = c.maintain(command);
        out.code(1);
        let error = out.stderr.lines().last().unwrap_or_default();
        assert!(error.starts_with("error: "), "{command:?}: {out:?}");
        assert!(
            error.contains(url.trim_end_matches('/')),
            "{command:?}: {error}"
        );
        assert!(error.contains("answered 500"), "{command:?}: {error}");
        assert!(
            error.contains("after 2s of retries"),
            "{command:?}: {error}"
        );
        assert!(
            error.contains("kubectl get --raw /readyz"),
            "{command:?}: {error}"
        );
        for mark in debug_marks {
            assert!(!out.stderr.contains(mark), "{command:?}: {mark}: {out:?}");
        }
    }
    let nowhere = c.maintain(&["status", "-s", "http://127.0.0.1:1", "--request-timeout=1s"]);
    nowhere.code(1);
    let error = nowhere.stderr.lines().last().unwrap_or_default();
    // kubectl's line, whatever the command.
    assert_eq!(
        error,
        "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?",
        "{nowhere:?}"
    );
    for mark in debug_marks {
        assert!(!nowhere.stderr.contains(mark), "{mark}: {nowhere:?}");
    }
}
