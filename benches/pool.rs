//! A pool drained many nodes at a time, and rolled: 50 labelled nodes of a
//! generated 1,000-node cluster drained by `kubectl maintain drain
//! --max-parallel 10` (also within a pool budget) and by `kubectl get nodes
//! -l L -o name | xargs -P 10 -n1 kubectl drain` (how operators parallelise
//! kubectl today), each on a fresh copy; then `kubectl maintain roll` of 20
//! nodes, each rebooted for 5 s by the sandbox.
//!
//! For every drain: wall time, the global lower bound (common::pool_bound)
//! and the ratio to it, requests and bytes per evicted pod, pods evicted that
//! were themselves replacements, and budget violations (a budget's healthy
//! pods below what it requires, in any status the sandbox's disruption
//! controller wrote during the run). For the roll: wall time and each
//! node's time out of service.
//!
//!   cargo bench --bench pool
//!   cargo bench --bench pool -- --nodes 200 --drained 20 --roll 5

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kube_sandbox::generate::{self, DRAIN_LABEL};
use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use kube_sandbox::{Sandbox, request_log};
use serde_json::Value;

mod common;
use common::{SHUTDOWN, settled_sandbox, spec};

const PARALLEL: usize = 10;

struct Figures {
    wall: Duration,
    exit: i32,
    requests: usize,
    bytes: u64,
    evicted: usize,
    /// Successful evictions of pods created during the run.
    re_evicted: usize,
    /// Budget statuses written with fewer healthy pods than required.
    violations: usize,
    violated_budgets: usize,
    /// Each node's drain, from kubectl maintain's report (min, mean, max).
    node_times: Option<(f64, f64, f64)>,
    /// The mean of the nodes' own lower bounds.
    own_mean: f64,
    /// The most frequent requests: "METHOD resource status", count.
    kinds: Vec<(String, usize)>,
    /// Of the requests, the records others read: Events written, and
    /// node conditions written on nodes/status.
    records: (usize, usize),
}

/// Each node's drain time in a kubectl maintain report: (min, mean, max).
fn node_times(report: &Path) -> Option<(f64, f64, f64)> {
    let report: Value = serde_json::from_str(&std::fs::read_to_string(report).ok()?).ok()?;
    let times: Vec<f64> = report["nodes"]
        .as_array()?
        .iter()
        .filter_map(|n| n["elapsedMs"].as_f64())
        .map(|ms| ms / 1000.0)
        .collect();
    let min = times.iter().copied().reduce(f64::min)?;
    let max = times.iter().copied().reduce(f64::max)?;
    Some((min, times.iter().sum::<f64>() / times.len() as f64, max))
}

/// What a request was, for the breakdown: method, the resource (or
/// subresource) its path names, "watch" for a watch, and the status.
fn kind(e: &request_log::Entry) -> String {
    const NAMED: [&str; 9] = [
        "pods",
        "eviction",
        "nodes",
        "events",
        "poddisruptionbudgets",
        "leases",
        "daemonsets",
        "namespaces",
        "status",
    ];
    let resource = e
        .path
        .split('/')
        .rfind(|p| NAMED.contains(p))
        .unwrap_or("other");
    let watch = if e.query.contains("watch=") {
        " watch"
    } else {
        ""
    };
    format!("{} {resource}{watch} {}", e.method, e.status)
}

/// Pods that existed when the run began, by namespace/name.
fn pods_now(sandbox: &Sandbox) -> BTreeSet<String> {
    sandbox
        .view()
        .list(Resource::Pods)
        .iter()
        .map(|p| pods::key(p))
        .collect()
}

/// Budget statuses, written since `since`, that had fewer healthy pods than
/// the budget requires: (statuses, budgets).
fn violations(sandbox: &Sandbox, since: std::time::SystemTime) -> (usize, usize) {
    let mut budgets = BTreeSet::new();
    let mut count = 0;
    for e in sandbox
        .view()
        .history(Resource::PodDisruptionBudgets)
        .iter()
        .filter(|e| e.at >= since)
    {
        let pdb = e.object();
        let status = &pdb["status"];
        let healthy = status["currentHealthy"].as_i64().unwrap_or(0);
        let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
        if healthy < desired {
            count += 1;
            budgets.insert(pods::key(&pdb));
        }
    }
    (count, budgets.len())
}

/// Runs `cmd` against a fresh copy of the cluster; its figures.
fn drain(nodes: usize, drained: usize, work: &Path, cmd: &[&str]) -> (Figures, f64) {
    let spec = spec(nodes, drained, SHUTDOWN);
    let objects = generate::cluster(&spec);
    let bound = common::pool_bound(&objects, drained, &spec, PARALLEL);
    let own = common::node_bounds(&objects, drained, &spec);
    let own_mean = own.iter().sum::<f64>() / own.len().max(1) as f64;
    let log = work.join("requests.jsonl");
    let (rt, sandbox) = settled_sandbox(objects, Some(log.clone()));
    let kubeconfig = work.join("kubeconfig");
    sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let before = request_log::read(&log).map_or(0, |l| l.len());
    let since = std::time::SystemTime::now();
    let existing = pods_now(&sandbox);
    let started = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd.join(" "))
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", work)
        .env("SELECTOR", format!("{DRAIN_LABEL}=yes"))
        .env("BIN", env!("CARGO_BIN_EXE_kubectl-maintain"))
        .env("REPORT", work.join("report.json"))
        .output()
        .expect("runs");
    let wall = started.elapsed();
    let entries = common::settled_log(&log, before);
    let evictions: Vec<String> = entries
        .iter()
        .filter(|e| e.method == "POST" && e.path.ends_with("/eviction") && e.status == 201)
        .map(|e| {
            let parts: Vec<&str> = e.path.split('/').collect();
            format!("{}/{}", parts[4], parts[6])
        })
        .collect();
    let (violations, violated_budgets) = violations(&sandbox, since);
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    let figures = Figures {
        wall,
        exit: out.status.code().unwrap_or(-1),
        requests: entries.len(),
        bytes: common::bytes(&entries),
        re_evicted: evictions.iter().filter(|p| !existing.contains(*p)).count(),
        evicted: evictions.len(),
        violations,
        violated_budgets,
        node_times: node_times(&work.join("report.json")),
        own_mean,
        records: (
            entries
                .iter()
                .filter(|e| e.method == "POST" && e.path.ends_with("/events"))
                .count(),
            entries
                .iter()
                .filter(|e| {
                    e.method == "PATCH"
                        && e.path.starts_with("/api/v1/nodes/")
                        && e.path.ends_with("/status")
                })
                .count(),
        ),
        kinds: {
            let mut counts = std::collections::BTreeMap::<String, usize>::new();
            for e in &entries {
                *counts.entry(kind(e)).or_default() += 1;
            }
            let mut kinds: Vec<(String, usize)> = counts.into_iter().collect();
            kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
            kinds.truncate(6);
            kinds
        },
    };
    sandbox.stop();
    drop(sandbox);
    drop(rt);
    (figures, bound)
}

/// `roll` of `rolled` nodes, each rebooted for 5 s by the sandbox: wall time
/// and every node's time out of service.
fn roll(nodes: usize, rolled: usize, work: &Path) {
    let spec = spec(nodes, rolled, SHUTDOWN);
    let (rt, sandbox) = settled_sandbox(generate::cluster(&spec), None);
    let kubeconfig = work.join("kubeconfig");
    sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let selector = format!("{DRAIN_LABEL}=yes");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
        .args(["roll", "-l", &selector, "--ignore-daemonsets"])
        .args(["--delete-emptydir-data", "--max-parallel", &PARALLEL.to_string()])
        .args([
            "--exec",
            "kubectl annotate node \"$NODE\" sandbox.kubectl-maintain.io/reboot-seconds=5 --overwrite >/dev/null",
            "--wait-for-reboot",
            "-o",
            "json",
        ])
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", work)
        .output()
        .expect("roll runs");
    let wall = started.elapsed();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let nodes_out: Vec<&Value> = report["nodes"]
        .as_array()
        .map(|n| n.iter().collect())
        .unwrap_or_default();
    let done = nodes_out.iter().filter(|n| n["status"] == "done").count();
    let mut out_of_service: Vec<f64> = nodes_out
        .iter()
        .map(|n| n["outOfServiceMs"].as_f64().unwrap_or(0.0) / 1000.0)
        .collect();
    out_of_service.sort_by(f64::total_cmp);
    let mean = out_of_service.iter().sum::<f64>() / out_of_service.len().max(1) as f64;
    println!(
        "roll of {rolled} of {nodes} nodes, {PARALLEL} at a time, 5 s reboots: {:.1} s wall, {done}/{rolled} done, exit {}; \
         out of service per node: min {:.1} s, mean {mean:.1} s, max {:.1} s",
        wall.as_secs_f64(),
        out.status.code().unwrap_or(-1),
        out_of_service.first().copied().unwrap_or(0.0),
        out_of_service.last().copied().unwrap_or(0.0),
    );
    sandbox.stop();
    drop(sandbox);
    drop(rt);
}

fn arg(args: &[String], flag: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let nodes = arg(&args, "--nodes", 1000);
    let drained = arg(&args, "--drained", 50);
    let rolled = arg(&args, "--roll", 20);
    let work = std::env::temp_dir().join(format!("km-pool-{}", std::process::id()));
    let parallel = PARALLEL.to_string();
    let runs: [(&str, Vec<&str>); 3] = [
        (
            "kubectl maintain drain --max-parallel 10",
            vec![
                "$BIN drain -l $SELECTOR --ignore-daemonsets --delete-emptydir-data --max-parallel",
                &parallel,
                "-o json >$REPORT",
            ],
        ),
        (
            "kubectl maintain drain --max-parallel 10 --max-unavailable 10%",
            vec![
                "$BIN drain -l $SELECTOR --ignore-daemonsets --delete-emptydir-data --max-parallel",
                &parallel,
                "--max-unavailable 10% -o json >$REPORT",
            ],
        ),
        (
            "xargs -P 10 kubectl drain",
            vec![
                "kubectl get nodes -l $SELECTOR -o name | xargs -P",
                &parallel,
                "-n1 kubectl drain --ignore-daemonsets --delete-emptydir-data >/dev/null",
            ],
        ),
    ];
    println!(
        "| cluster | drained | tool | wall | global lower bound | wall / bound | evicted | replacements evicted again | requests / evicted pod | KiB / evicted pod | budget violations | exit |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut breakdown = Vec::new();
    for (i, (name, cmd)) in runs.iter().enumerate() {
        let dir = work.join(i.to_string());
        std::fs::create_dir_all(&dir).expect("work dir");
        let (f, bound) = drain(nodes, drained, &dir, cmd);
        let per = |x: f64| x / f.evicted.max(1) as f64;
        println!(
            "| {nodes} nodes, {} pods | {drained} | {name} | {:.1} s | {bound:.1} s | {:.2} | {} | {} | {:.2} | {:.1} | {} in {} budgets | {} |",
            nodes * common::PODS_PER_NODE,
            f.wall.as_secs_f64(),
            f.wall.as_secs_f64() / bound.max(0.001),
            f.evicted,
            f.re_evicted,
            per(f.requests as f64),
            per(f.bytes as f64) / 1024.0,
            f.violations,
            f.violated_budgets,
            f.exit,
        );
        let top: Vec<String> = f.kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let nodes = f.node_times.map_or(String::new(), |(min, mean, max)| {
            format!(
                "; each node's drain {min:.1} / {mean:.1} / {max:.1} s (min / mean / max; its own bound {:.1} s on average)",
                f.own_mean
            )
        });
        let (events, conditions) = f.records;
        let records = if events + conditions > 0 {
            format!(
                "; requests per evicted pod {:.2}: the drain's own {:.2}, Events {:.2}, node conditions {:.2}",
                per(f.requests as f64),
                per((f.requests - events - conditions) as f64),
                per(events as f64),
                per(conditions as f64),
            )
        } else {
            String::new()
        };
        breakdown.push(format!("{name}: {}{nodes}{records}", top.join(", ")));
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!("\nmost frequent requests:");
    for line in breakdown {
        println!("- {line}");
    }
    let dir = work.join("roll");
    std::fs::create_dir_all(&dir).expect("work dir");
    roll(nodes, rolled, &dir);
    let _ = std::fs::remove_dir_all(&work);
}
