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
//! controller wrote during the run), and the sandbox's lag (how late its
//! kubelets' and controllers' timers fired, how long its writes waited for
//! the controllers and its requests for the store: median and p99; a p99
//! over 100 ms marks the row as measuring the simulator, not the drain; with
//! the simulation's busy share and its work per write). For the roll: wall time, each node's
//! time out of service, and the rolling process's peak memory and CPU.
//!
//! The benchmark's own process, which hosts the sandbox, keeps the pages its
//! allocator frees (common::keep_freed_pages); what it measures runs as
//! shipped.
//!
//!   cargo bench --bench pool
//!   cargo bench --bench pool -- --nodes 200 --drained 20 --roll 5
//!   cargo bench --bench pool -- --nodes 5000 --drained 500 --parallel 50 --roll 0
//!   cargo bench --bench pool -- --kinds      # requests and bytes by kind
//!   cargo bench --bench pool -- --only 0     # only the first drain (0, 1, 2)
//!   cargo bench --bench pool -- --keep       # keep each run's request log and report
//!   BENCH_WRAP="heaptrack -o /tmp/drain" cargo bench --bench pool -- --only 0   # a profiler in front of the drain (and the roll)

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

/// The pool: its size, how many nodes are drained, how many at a time.
#[derive(Clone, Copy)]
struct Setup {
    nodes: usize,
    drained: usize,
    parallel: usize,
}

struct Figures {
    wall: Duration,
    exit: i32,
    /// The largest resident set of the draining process (of any one
    /// `kubectl drain` under xargs).
    peak_rss_kib: u64,
    /// CPU seconds the sandbox (this process) spent serving the run.
    sandbox_cpu: f64,
    /// CPU seconds of the draining processes.
    drain_cpu: f64,
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
    /// How late the sandbox's kubelets and controllers acted during the
    /// run (kube_sandbox::SandboxLag).
    lag: kube_sandbox::SandboxLag,
    /// The run's requests, for the breakdown by kind.
    entries: Vec<request_log::Entry>,
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

/// The plugin as the drains run it: `BENCH_WRAP` puts a profiler in front
/// (`BENCH_WRAP="heaptrack -o /tmp/drain"` for where the memory goes).
fn bin() -> String {
    let bin = env!("CARGO_BIN_EXE_kubectl-maintain");
    match std::env::var("BENCH_WRAP") {
        Ok(wrap) if !wrap.trim().is_empty() => format!("{wrap} {bin}"),
        _ => bin.to_string(),
    }
}

/// Runs `cmd` against a fresh copy of the cluster; its figures.
fn drain(setup: Setup, work: &Path, cmd: &str) -> (Figures, f64) {
    let Setup {
        nodes,
        drained,
        parallel,
    } = setup;
    let spec = spec(nodes, drained, SHUTDOWN);
    let objects = generate::cluster(&spec);
    let bound = common::pool_bound(&objects, drained, &spec, parallel);
    let own = common::node_bounds(&objects, drained, &spec);
    let own_mean = own.iter().sum::<f64>() / own.len().max(1) as f64;
    let log = work.join("requests.jsonl");
    let (rt, sandbox) = settled_sandbox(objects, Some(log.clone()));
    let kubeconfig = work.join("kubeconfig");
    sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let before = request_log::read(&log).map_or(0, |l| l.len());
    let since = std::time::SystemTime::now();
    let existing = pods_now(&sandbox);
    let cpu_before = common::own_cpu_seconds();
    sandbox.reset_lag();
    let started = Instant::now();
    let out = common::as_shipped(&mut Command::new("/usr/bin/time"))
        .args(["-v", "sh", "-c", cmd])
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", work)
        .env("SELECTOR", format!("{DRAIN_LABEL}=yes"))
        .env("BIN", bin())
        .env("REPORT", work.join("report.json"))
        .env("PARALLEL", parallel.to_string())
        .output()
        .expect("runs");
    let wall = started.elapsed();
    let lag = sandbox.lag();
    let sandbox_cpu = common::own_cpu_seconds() - cpu_before;
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
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::write(work.join("stderr.txt"), stderr.as_bytes());
    if !out.status.success() {
        eprintln!("{stderr}");
    }
    let figures = Figures {
        wall,
        exit: out.status.code().unwrap_or(-1),
        peak_rss_kib: common::peak_rss(&stderr),
        sandbox_cpu,
        drain_cpu: common::cpu_seconds(&stderr),
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
        lag,
        entries,
    };
    sandbox.stop();
    drop(sandbox);
    drop(rt);
    (figures, bound)
}

/// `roll` of `rolled` nodes, each rebooted for 5 s by the sandbox: wall time
/// and every node's time out of service.
fn roll(setup: Setup, rolled: usize, work: &Path) {
    let Setup {
        nodes, parallel, ..
    } = setup;
    let spec = spec(nodes, rolled, SHUTDOWN);
    let (rt, sandbox) = settled_sandbox(generate::cluster(&spec), None);
    let kubeconfig = work.join("kubeconfig");
    sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let selector = format!("{DRAIN_LABEL}=yes");
    let started = Instant::now();
    let out = common::as_shipped(&mut Command::new("/usr/bin/time"))
        .arg("-v")
        .args(bin().split_whitespace())
        .args(["roll", "-l", &selector, "--ignore-daemonsets"])
        .args(["--delete-emptydir-data", "--max-parallel", &parallel.to_string()])
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
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "roll of {rolled} of {nodes} nodes, {parallel} at a time, 5 s reboots: {:.1} s wall, {done}/{rolled} done, exit {}; \
         out of service per node: min {:.1} s, mean {mean:.1} s, max {:.1} s; \
         peak memory {} MiB, CPU {:.2} of the wall",
        wall.as_secs_f64(),
        out.status.code().unwrap_or(-1),
        out_of_service.first().copied().unwrap_or(0.0),
        out_of_service.last().copied().unwrap_or(0.0),
        common::peak_rss(&stderr) / 1024,
        common::cpu_seconds(&stderr) / wall.as_secs_f64(),
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

const DRAIN: &str =
    "$BIN drain -l $SELECTOR --ignore-daemonsets --delete-emptydir-data --max-parallel $PARALLEL";

/// One row of the table for a drain's figures.
fn print_row(setup: Setup, name: &str, f: &Figures, bound: f64) {
    let Setup { nodes, drained, .. } = setup;
    let per = |x: f64| x / f.evicted.max(1) as f64;
    println!(
        "| {nodes} nodes, {} pods | {drained} | {name} | {:.1} s | {bound:.1} s | {:.2} | {} | {} | {:.2} | {:.1} | {} in {} budgets | {} MiB | {:.2}, {:.2} | {} | {} |",
        nodes * common::PODS_PER_NODE,
        f.wall.as_secs_f64(),
        f.wall.as_secs_f64() / bound.max(0.001),
        f.evicted,
        f.re_evicted,
        per(f.requests as f64),
        per(f.bytes as f64) / 1024.0,
        f.violations,
        f.violated_budgets,
        f.peak_rss_kib / 1024,
        f.drain_cpu / f.wall.as_secs_f64(),
        f.sandbox_cpu / f.wall.as_secs_f64(),
        f.exit,
        common::lag_cell(&f.lag, f.wall),
    );
}

/// The line under the table for a drain: its most frequent requests, its
/// nodes' times, its requests per pod split.
fn breakdown_line(name: &str, f: &Figures) -> String {
    let per = |x: f64| x / f.evicted.max(1) as f64;
    let top: Vec<String> = common::by_kind(&f.entries)
        .iter()
        .take(6)
        .map(|(k, n, _)| format!("{n} {k}"))
        .collect();
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
    format!("{name}: {}{nodes}{records}", top.join(", "))
}

fn main() {
    common::keep_freed_pages();
    let args: Vec<String> = std::env::args().collect();
    let setup = Setup {
        nodes: arg(&args, "--nodes", 1000),
        drained: arg(&args, "--drained", 50),
        parallel: arg(&args, "--parallel", 10),
    };
    let parallel = setup.parallel;
    let rolled = arg(&args, "--roll", 20);
    // Where requests and bytes go, by kind of request, after the table.
    let kinds = args.iter().any(|a| a == "--kinds");
    // Keep each run's request log and report (work dir) to look into.
    let keep = args.iter().any(|a| a == "--keep");
    let work = std::env::temp_dir().join(format!("km-pool-{}", std::process::id()));
    let runs = [
        (
            format!("kubectl maintain drain --max-parallel {parallel}"),
            format!("{DRAIN} -o json >$REPORT"),
        ),
        (
            format!("kubectl maintain drain --max-parallel {parallel} --max-unavailable 10%"),
            format!("{DRAIN} --max-unavailable 10% -o json >$REPORT"),
        ),
        (
            format!("xargs -P {parallel} kubectl drain"),
            "kubectl get nodes -l $SELECTOR -o name | xargs -P $PARALLEL -n1 kubectl drain --ignore-daemonsets --delete-emptydir-data >/dev/null"
                .to_string(),
        ),
    ];
    // `--only N`: just the Nth drain (0, 1, 2): big pools take long per run.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse::<usize>().ok());
    println!(
        "| cluster | drained | tool | wall | global lower bound | wall / bound | evicted | replacements evicted again | requests / evicted pod | KiB / evicted pod | budget violations | peak memory | CPU / wall: drain, sandbox | exit | sandbox lag p50 / p99: timers; writes; requests; the simulation |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut breakdown = Vec::new();
    let mut tables = Vec::new();
    for (i, (name, cmd)) in runs.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let dir = work.join(i.to_string());
        std::fs::create_dir_all(&dir).expect("work dir");
        let (f, bound) = drain(setup, &dir, cmd);
        print_row(setup, name, &f, bound);
        breakdown.push(breakdown_line(name, &f));
        if kinds {
            tables.push((name.clone(), f.entries, f.evicted));
        }
        if keep {
            eprintln!("kept {}", dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    println!("\nthe requests with the most bytes:");
    for line in breakdown {
        println!("- {line}");
    }
    for (title, entries, evicted) in tables {
        common::print_kinds(&title, &entries, evicted);
    }
    if rolled > 0 {
        let dir = work.join("roll");
        std::fs::create_dir_all(&dir).expect("work dir");
        roll(setup, rolled, &dir);
    }
    if !keep {
        let _ = std::fs::remove_dir_all(&work);
    }
}
