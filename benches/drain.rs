//! kubectl maintain drain against kubectl drain, on the same generated
//! cluster served by the sandbox, one fresh copy per run. For every run:
//! wall time, the lower bound the scenario allows and the ratio to it, API
//! requests and bytes per evicted pod (from the request log), peak memory of
//! the draining process, and time to the first eviction.
//!
//!   cargo bench --bench drain                        # 100, 1,000, 5,000 nodes; 1, 10, 50 drained
//!   cargo bench --bench drain -- --sizes 100 --drains 1,10
//!   cargo bench --bench drain -- --plan-timing 5000   # plan for 50 nodes of 5,000
//!   cargo bench --bench drain -- --simulate-timing 5000   # plan --simulate for 50 nodes of 5,000
//!   BENCH_WRAP="heaptrack -o /tmp/plan" cargo bench --bench drain -- --simulate-timing 5000   # where its memory goes
//!   cargo bench --bench drain -- --sizes 100 --drains 10 --keep   # keep the request logs
//!   cargo bench --bench drain -- --sizes 100 --drains 10 --shutdown 5  # pods that take 5 s to stop
//!   cargo bench --bench drain -- --sizes 100 --drains 10 --kubectl-role  # only kubectl drain's permissions
//!   cargo bench --bench drain -- --sizes 100 --drains 10 --kinds  # requests and bytes by kind

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use kube_sandbox::Rule;
use kube_sandbox::generate::{self, ClusterSpec, DRAIN_LABEL};
use kube_sandbox::request_log;
use kube_sandbox::resources::Resource;

mod common;
use common::{PODS_PER_NODE, SHUTDOWN, peak_rss, settled_sandbox, spec};
use serde_json::Value;

#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Maintain,
    Kubectl,
}

struct Figures {
    wall: Duration,
    exit: i32,
    requests: usize,
    bytes: u64,
    evicted: usize,
    peak_rss_kib: u64,
    first_eviction: Option<Duration>,
    /// How late the sandbox acted during the run.
    lag: kube_sandbox::SandboxLag,
    /// The run's requests, for `--kinds`.
    entries: Vec<request_log::Entry>,
}

/// The shortest a sequential drain of the labelled nodes can take: the sum
/// of each node's own bound (`common::node_bounds`).
fn lower_bound(objects: &[(Resource, Value)], drained: usize, spec: &ClusterSpec) -> Duration {
    Duration::from_secs_f64(common::node_bounds(objects, drained, spec).iter().sum())
}

/// What `kubectl drain -l` needs, and nothing more: no pod watch (kubectl
/// maintain then lists each node's pods every second), no budgets, no Events.
fn kubectl_drain_role() -> Vec<Rule> {
    vec![
        Rule::new(&["get", "list", "patch"], &["nodes"]),
        Rule::new(&["get", "list"], &["pods"]),
        Rule::new(&["create"], &["pods/eviction"]),
        Rule::new(&["get"], &["daemonsets"]),
    ]
}

fn run(
    tool: Tool,
    (nodes, drained, shutdown): (usize, usize, f64),
    kubectl_role: bool,
    work: &Path,
) -> (Figures, Duration) {
    let spec = spec(nodes, drained, shutdown);
    let objects = generate::cluster(&spec);
    let bound = lower_bound(&objects, drained, &spec);
    let log = work.join("requests.jsonl");
    let (rt, sandbox) = settled_sandbox(objects, Some(log.clone()));
    if kubectl_role {
        sandbox.set_role(Some(kubectl_drain_role()));
    }
    let kubeconfig = work.join("kubeconfig");
    sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let before = request_log::read(&log).map_or(0, |l| l.len());
    let selector = format!("{DRAIN_LABEL}=yes");
    let cache = work.join("cache");
    let mut cmd = Command::new("/usr/bin/time");
    cmd.arg("-v");
    match tool {
        Tool::Maintain => {
            cmd.arg(env!("CARGO_BIN_EXE_kubectl-maintain")).args([
                "drain",
                "-l",
                &selector,
                "--ignore-daemonsets",
                "--delete-emptydir-data",
                "--timeout",
                "60m",
                "-o",
                "json",
            ]);
        }
        Tool::Kubectl => {
            cmd.args(["kubectl", "--cache-dir", cache.to_str().unwrap()])
                .args([
                    "drain",
                    "-l",
                    &selector,
                    "--ignore-daemonsets",
                    "--delete-emptydir-data",
                    "--timeout",
                    "60m",
                ]);
        }
    }
    cmd.env("KUBECONFIG", &kubeconfig).env("HOME", work);
    sandbox.reset_lag();
    let started = Instant::now();
    let start_ms = k8s_openapi::jiff::Timestamp::now().as_millisecond();
    let out = cmd.output().expect("runs");
    let wall = started.elapsed();
    let lag = sandbox.lag();
    let entries = common::settled_log(&log, before);
    let evictions: Vec<_> = entries
        .iter()
        .filter(|e| e.method == "POST" && e.path.ends_with("/eviction") && e.status == 201)
        .collect();
    let first = evictions.first().and_then(|e| {
        let t: k8s_openapi::jiff::Timestamp = e.ts.parse().ok()?;
        Some(Duration::from_millis(
            (t.as_millisecond() - start_ms).max(0) as u64,
        ))
    });
    let figures = Figures {
        wall,
        exit: out.status.code().unwrap_or(-1),
        requests: entries.len(),
        bytes: common::bytes(&entries),
        evicted: evictions.len(),
        peak_rss_kib: peak_rss(&String::from_utf8_lossy(&out.stderr)),
        first_eviction: first,
        lag,
        entries,
    };
    sandbox.stop();
    drop(sandbox);
    drop(rt);
    (figures, bound)
}

fn list(args: &[String], flag: &str, default: &[usize]) -> Vec<usize> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map_or_else(
            || default.to_vec(),
            |v| v.split(',').filter_map(|x| x.parse().ok()).collect(),
        )
}

/// `kubectl maintain plan` for `drained` nodes of a cluster: how long it takes.
fn plan_timing(nodes: usize, drained: usize, work: &Path) {
    let spec = spec(nodes, drained, SHUTDOWN);
    let (_rt, sandbox) = settled_sandbox(generate::cluster(&spec), None);
    std::fs::create_dir_all(work).expect("work dir");
    let kubeconfig = work.join("kubeconfig");
    sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let selector = format!("{DRAIN_LABEL}=yes");
    let mut times = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
            .args(["plan", "-l", &selector, "--ignore-daemonsets", "-o", "json"])
            .env("KUBECONFIG", &kubeconfig)
            .output()
            .expect("plan runs");
        times.push(started.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times.sort();
    println!(
        "plan for {drained} nodes of {nodes} nodes ({} pods): median {:.3} s, max {:.3} s over 5 runs",
        nodes * PODS_PER_NODE,
        times[2].as_secs_f64(),
        times[4].as_secs_f64()
    );
}

/// `kubectl maintain plan --simulate` for `drained` nodes of a cluster: the
/// wall time and peak memory of predicting their drain, and what it predicts.
fn simulate_timing(nodes: usize, drained: usize, work: &Path) {
    let spec = spec(nodes, drained, SHUTDOWN);
    let (_rt, sandbox) = settled_sandbox(generate::stream(&spec), None);
    std::fs::create_dir_all(work).expect("work dir");
    let kubeconfig = work.join("kubeconfig");
    sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let selector = format!("{DRAIN_LABEL}=yes");
    // `BENCH_WRAP` puts a profiler in front of the plan, as the pool
    // bench's (`BENCH_WRAP="heaptrack -o /tmp/plan"`).
    let wrap: Vec<String> = std::env::var("BENCH_WRAP")
        .map(|w| w.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .args(&wrap)
        .arg(env!("CARGO_BIN_EXE_kubectl-maintain"))
        .args(["plan", "-l", &selector, "--simulate", "--ignore-daemonsets"])
        .args(["--max-parallel", "10", "--timeout", "30m", "-o", "json"])
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .expect("plan --simulate runs (and /usr/bin/time is there)");
    let wall = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // A profiler in front (heaptrack) writes its own lines around the report.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = if stdout.starts_with('{') {
        0
    } else {
        stdout.find("\n{").map_or(0, |i| i + 1)
    };
    let end = stdout.rfind('}').map_or(stdout.len(), |i| i + 1);
    let report: Value = serde_json::from_str(&stdout[json..end]).expect("a report");
    let drained_nodes = report["nodes"]
        .as_array()
        .map_or(0, |n| n.iter().filter(|n| n["status"] == "drained").count());
    println!(
        "plan --simulate for {drained} nodes of {nodes} ({} pods): {:.1} s wall, peak {} MiB; \
         predicts {drained_nodes} drained in {:.1} s of simulated time, {} replacements, computed in {:.1} s after reading and loading the copy",
        nodes * PODS_PER_NODE,
        wall.as_secs_f64(),
        peak_rss(&stderr) / 1024,
        report["elapsedMs"].as_u64().unwrap_or(0) as f64 / 1000.0,
        report["prediction"]["replacements"]
            .as_array()
            .map_or(0, Vec::len),
        report["prediction"]["computedMs"].as_u64().unwrap_or(0) as f64 / 1000.0,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--simulate-timing") {
        let nodes = args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(5000);
        let work = std::env::temp_dir().join(format!("km-simulate-{}", std::process::id()));
        simulate_timing(nodes, 50, &work);
        let _ = std::fs::remove_dir_all(&work);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--plan-timing") {
        let nodes = args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(5000);
        let work = std::env::temp_dir().join(format!("km-plan-{}", std::process::id()));
        plan_timing(nodes, 50, &work);
        let _ = std::fs::remove_dir_all(&work);
        return;
    }
    let sizes = list(&args, "--sizes", &[100, 1000, 5000]);
    // Keep each run's request log (work dir) to see where requests and bytes go.
    let keep = args.iter().any(|a| a == "--keep");
    // Seconds pods take to stop: kubectl drain polls each pod every second
    // until it is gone, so its requests grow with this; a watch's do not.
    let shutdown = args
        .iter()
        .position(|a| a == "--shutdown")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(SHUTDOWN);
    let drains = list(&args, "--drains", &[1, 10, 50]);
    let kubectl_role = args.iter().any(|a| a == "--kubectl-role");
    // Where requests and bytes go, by kind of request, after the table.
    let mut breakdowns = args.iter().any(|a| a == "--kinds").then(Vec::new);
    let work = std::env::temp_dir().join(format!("km-bench-{}", std::process::id()));
    println!(
        "| cluster | drained | tool | wall | lower bound | wall / bound | evicted | requests / evicted pod | KiB / evicted pod | peak memory | first eviction | exit | sandbox lag p50 / p99: timers; writes; requests; the simulation |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &nodes in &sizes {
        for &drained in drains.iter().filter(|d| **d <= nodes) {
            let mut pair = Vec::new();
            for tool in [Tool::Maintain, Tool::Kubectl] {
                let dir: PathBuf = work.join(format!("{nodes}-{drained}-{}", tool as u8));
                std::fs::create_dir_all(&dir).expect("work dir");
                let (mut f, bound) = run(tool, (nodes, drained, shutdown), kubectl_role, &dir);
                let name = if tool == Tool::Maintain {
                    "kubectl maintain"
                } else {
                    "kubectl drain"
                };
                let per = |x: f64| {
                    if f.evicted == 0 {
                        0.0
                    } else {
                        x / f.evicted as f64
                    }
                };
                let mut stop = if (shutdown - SHUTDOWN).abs() > f64::EPSILON {
                    format!(", {shutdown} s to stop")
                } else {
                    String::new()
                };
                if kubectl_role {
                    stop.push_str(", kubectl drain's permissions only");
                }
                println!(
                    "| {nodes} nodes, {} pods{stop} | {drained} | {name} | {:.1} s | {:.1} s | {:.2} | {} | {:.2} | {:.1} | {} MiB | {} | {} | {} |",
                    nodes * PODS_PER_NODE,
                    f.wall.as_secs_f64(),
                    bound.as_secs_f64(),
                    f.wall.as_secs_f64() / bound.as_secs_f64().max(0.001),
                    f.evicted,
                    per(f.requests as f64),
                    per(f.bytes as f64) / 1024.0,
                    f.peak_rss_kib / 1024,
                    f.first_eviction
                        .map_or_else(|| "-".into(), |d| format!("{:.2} s", d.as_secs_f64())),
                    f.exit,
                    common::lag_cell(&f.lag, f.wall),
                );
                if let Some(b) = breakdowns.as_mut() {
                    // The row is printed: only the breakdown reads the log.
                    let title = format!("{name}, {drained} of {nodes} nodes");
                    b.push((title, std::mem::take(&mut f.entries), f.evicted));
                }
                pair.push(f);
                if keep {
                    eprintln!("kept {}", dir.display());
                } else {
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
            let (m, k) = (&pair[0], &pair[1]);
            println!(
                "| | | kubectl drain / kubectl maintain | {:.2}x | | | | {:.2}x | {:.2}x | {:.2}x | | | |",
                k.wall.as_secs_f64() / m.wall.as_secs_f64(),
                (k.requests as f64 / k.evicted.max(1) as f64)
                    / (m.requests as f64 / m.evicted.max(1) as f64),
                (k.bytes as f64 / k.evicted.max(1) as f64)
                    / (m.bytes as f64 / m.evicted.max(1) as f64),
                k.peak_rss_kib as f64 / m.peak_rss_kib.max(1) as f64,
            );
        }
    }
    for (title, entries, evicted) in breakdowns.unwrap_or_default() {
        common::print_kinds(&title, &entries, evicted);
    }
}
