//! What the benchmarks share: a settled sandbox, the request log read once
//! it stops growing, and GNU time's peak memory.

#![allow(dead_code)] // each benchmark uses its part

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube_sandbox::generate::{self, ClusterSpec};
use kube_sandbox::request_log::{self, Entry};
use kube_sandbox::resources::Resource;
use kube_sandbox::{Options, Sandbox};
use serde_json::Value;

/// The sandbox runs in the benchmark's process with the allocator
/// `kubectl maintain sandbox` and `demo` ship with (src/main.rs): with the
/// system allocator, serving 150,000 pods spent a third of its time in
/// malloc and free, which is the benchmark measuring itself.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's option of how long a freed page stays with the process before
/// it goes back to the OS (10 ms by default). The sandbox serving 150,000
/// pods frees and allocates hundreds of MB a second, and every page handed
/// back faults in zeroed again: a 5,000-node pool drain measured 20.4-20.9 s
/// with the default, 18.2-18.6 s with pages kept (perf: the kernel's
/// `clear_page_rep` was 6 % of the simulation thread and 8 % of the API
/// workers). mimalloc reads it from the environment at start only.
pub(crate) const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";

/// Runs this benchmark again with freed pages kept (`PURGE_DELAY` -1, "never
/// purge") unless the environment already says, and exits with its status.
/// Only the benchmark's process, which hosts the sandbox, keeps them: the
/// commands it measures run with `PURGE_DELAY` removed (`as_shipped`).
pub(crate) fn keep_freed_pages() {
    if std::env::var_os(PURGE_DELAY).is_some() {
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().expect("own path"))
        .args(std::env::args_os().skip(1))
        .env(PURGE_DELAY, "-1")
        .status()
        .expect("the benchmark runs itself");
    std::process::exit(status.code().unwrap_or(1));
}

/// A measured command, with the allocator's settings the drain ships with.
pub(crate) fn as_shipped(cmd: &mut std::process::Command) -> &mut std::process::Command {
    cmd.env_remove(PURGE_DELAY)
}

/// Seconds a pod takes to stop, unless `--shutdown` says otherwise.
pub(crate) const SHUTDOWN: f64 = 0.4;
pub(crate) const READY: f64 = 0.4;
pub(crate) const PODS_PER_NODE: usize = 30;

/// The benchmarks' generated cluster: `nodes` nodes, the first `drained`
/// labelled to be drained.
pub(crate) fn spec(nodes: usize, drained: usize, shutdown: f64) -> ClusterSpec {
    ClusterSpec {
        nodes,
        pods_per_node: PODS_PER_NODE,
        replicas_per_deployment: 10,
        namespaces: (nodes / 10).max(1),
        shutdown_seconds: shutdown,
        ready_seconds: READY,
        mix: true,
        labelled_nodes: drained,
    }
}

/// A sandbox serving `objects` once its controllers have written their statuses.
pub(crate) fn settled_sandbox(
    objects: impl IntoIterator<Item = (Resource, Value)>,
    request_log: Option<PathBuf>,
) -> (tokio::runtime::Runtime, Sandbox) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let sandbox = rt
        .block_on(Sandbox::start(
            objects,
            Options {
                request_log,
                ..Options::default()
            },
        ))
        .expect("sandbox");
    rt.block_on(async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        sandbox.wait_idle().await;
    });
    (rt, sandbox)
}

/// GNU time's "Maximum resident set size", in KiB.
pub(crate) fn peak_rss(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The request log after entry `skip`, read once it stops growing: watches
/// are logged when the sandbox sees their connection close, a moment after
/// the client exits.
pub(crate) fn settled_log(log: &Path, skip: usize) -> Vec<Entry> {
    let mut entries = request_log::read(log).unwrap_or_default();
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(250));
        let now = request_log::read(log).unwrap_or_default();
        if now.len() == entries.len() {
            break;
        }
        entries = now;
    }
    entries.into_iter().skip(skip).collect()
}

/// Request and response bodies, summed.
pub(crate) fn bytes(entries: &[Entry]) -> u64 {
    entries
        .iter()
        .map(|e| e.request_bytes + e.response_bytes)
        .sum()
}

/// A pod of the labelled nodes, as the bounds see it.
struct Leaving {
    node: String,
    app: String,
    critical: bool,
    shutdown: f64,
    /// How long after one batch leaves the next may: its replacements
    /// Ready, and for a StatefulSet its pod gone first.
    gate: f64,
    /// Disruptions its budget allows at once.
    allowed: f64,
}

fn leaving(objects: &[(Resource, Value)], drained: usize, spec: &ClusterSpec) -> Vec<Leaving> {
    let nodes: Vec<String> = (0..drained).map(generate::node_name).collect();
    let replicas = spec.replicas_per_deployment as f64;
    objects
        .iter()
        .filter(|(res, _)| *res == Resource::Pods)
        .filter_map(|(_, o)| {
            let node = o.pointer("/spec/nodeName").and_then(Value::as_str)?;
            if !nodes.iter().any(|n| n == node) {
                return None;
            }
            let owner = o
                .pointer("/metadata/ownerReferences/0/kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if owner == "DaemonSet" {
                return None;
            }
            let app = o
                .pointer("/metadata/labels/app")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let d: usize = app.trim_start_matches("app-").parse().unwrap_or(0);
            let shutdown = generate::shutdown_of(spec, d);
            Some(Leaving {
                node: node.to_string(),
                critical: o
                    .pointer("/spec/priority")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    > 1_000_000_000,
                gate: if owner == "StatefulSet" {
                    shutdown + READY
                } else {
                    READY
                },
                allowed: match generate::workload(spec, d) {
                    generate::Workload::Quorum => (replicas - (replicas * 0.8).ceil()).max(1.0),
                    _ => 1.0,
                },
                app,
                shutdown,
            })
        })
        .collect()
}

/// The longest chain of one group of pods: `n` pods leave `allowed` at a
/// time, each batch a gate after the one before, the last taking its shutdown.
fn chain(n: usize, p: &Leaving) -> f64 {
    ((n as f64 / p.allowed).ceil() - 1.0) * p.gate + p.shutdown
}

/// The shortest each labelled node's drain can take on its own: its waves
/// one after another; per wave, the longest chain of shutdowns and
/// PDB-forced waits of one workload's pods on that node.
pub(crate) fn node_bounds(
    objects: &[(Resource, Value)],
    drained: usize,
    spec: &ClusterSpec,
) -> Vec<f64> {
    let pods = leaving(objects, drained, spec);
    (0..drained)
        .map(generate::node_name)
        .map(|node| {
            let mut waves: BTreeMap<bool, BTreeMap<&str, (usize, &Leaving)>> = BTreeMap::new();
            for p in pods.iter().filter(|p| p.node == node) {
                waves
                    .entry(p.critical)
                    .or_default()
                    .entry(&p.app)
                    .or_insert((0, p))
                    .0 += 1;
            }
            waves
                .values()
                .map(|w| w.values().map(|(n, p)| chain(*n, p)).fold(0.0, f64::max))
                .sum()
        })
        .collect()
}

/// The shortest a drain of the labelled nodes can take with `parallel`
/// nodes at a time, budgets counted across nodes: no less than the longest
/// chain of one workload's pods over every drained node (they leave at most
/// `allowed` at a time, pool-wide), and no less than the nodes' own bounds
/// shared among `parallel` slots.
pub(crate) fn pool_bound(
    objects: &[(Resource, Value)],
    drained: usize,
    spec: &ClusterSpec,
    parallel: usize,
) -> f64 {
    let pods = leaving(objects, drained, spec);
    let mut workloads: BTreeMap<&str, (usize, &Leaving)> = BTreeMap::new();
    for p in &pods {
        workloads.entry(&p.app).or_insert((0, p)).0 += 1;
    }
    let longest = workloads
        .values()
        .map(|(n, p)| chain(*n, p))
        .fold(0.0, f64::max);
    let nodes = node_bounds(objects, drained, spec);
    let shared = nodes.iter().sum::<f64>() / parallel.max(1) as f64;
    let slowest = nodes.iter().copied().fold(0.0, f64::max);
    longest.max(shared).max(slowest)
}

/// What a request was, for the breakdown by kind: method, the resource (or
/// subresource) its path names, list/get/watch, and the representation
/// asked for when it was metadata only.
pub(crate) fn kind(e: &Entry) -> String {
    let parts: Vec<&str> = e.path.split('/').filter(|p| !p.is_empty()).collect();
    // /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]] or /apis/G/V/...
    let rest = match parts.first() {
        Some(&"api") => &parts[parts.len().min(2)..],
        Some(&"apis") => &parts[parts.len().min(3)..],
        _ => return format!("{} {}", e.method, e.path),
    };
    let rest = match rest {
        ["namespaces", _, tail @ ..] if !tail.is_empty() => tail,
        r => r,
    };
    let (resource, named) = match rest {
        [r] => ((*r).to_string(), false),
        [r, _] => ((*r).to_string(), true),
        [r, _, sub, ..] => (format!("{r}/{sub}"), true),
        [] => ("namespaces".to_string(), false),
    };
    let verb = match (e.method.as_str(), named) {
        ("GET", _) if e.query.contains("watch=") => "watch",
        ("GET", false) => "list",
        ("GET", true) => "get",
        ("POST", _) => "create",
        ("PATCH", _) => "patch",
        ("PUT", _) => "update",
        ("DELETE", _) => "delete",
        (m, _) => m,
    };
    let meta = if e.accept.contains("PartialObjectMetadata") {
        " (metadata)"
    } else {
        ""
    };
    let fields = if e.query.contains("fieldSelector=") {
        " (field-selected)"
    } else {
        ""
    };
    format!("{verb} {resource}{meta}{fields}")
}

/// Requests and bytes by kind, most bytes first.
pub(crate) fn by_kind(entries: &[Entry]) -> Vec<(String, usize, u64)> {
    let mut kinds = BTreeMap::<String, (usize, u64)>::new();
    for e in entries {
        let k = kinds.entry(kind(e)).or_default();
        k.0 += 1;
        k.1 += e.request_bytes + e.response_bytes;
    }
    let mut kinds: Vec<(String, usize, u64)> =
        kinds.into_iter().map(|(k, (n, b))| (k, n, b)).collect();
    kinds.sort_by_key(|k| std::cmp::Reverse(k.2));
    kinds
}

/// A markdown table of `by_kind`, per evicted pod.
pub(crate) fn print_kinds(title: &str, entries: &[Entry], evicted: usize) {
    let per = |x: f64| x / evicted.max(1) as f64;
    println!("\n{title}: requests and bytes by kind, per evicted pod ({evicted} evicted)\n");
    println!("| request | count | requests / evicted pod | KiB / evicted pod |");
    println!("|---|---|---|---|");
    for (k, n, b) in by_kind(entries) {
        println!(
            "| {k} | {n} | {:.3} | {:.3} |",
            per(n as f64),
            per(b as f64) / 1024.0
        );
    }
}

/// CPU seconds this process (the sandbox, in a benchmark) has used, user
/// and system, over all its threads (/proc/self/stat, in USER_HZ = 100
/// ticks a second).
pub(crate) fn own_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// GNU time's user and system seconds of the measured process.
pub(crate) fn cpu_seconds(stderr: &str) -> f64 {
    ["User time (seconds): ", "System time (seconds): "]
        .iter()
        .filter_map(|p| {
            stderr
                .lines()
                .find_map(|l| l.trim().strip_prefix(p))
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
        .sum()
}

/// The sandbox's lateness during a run of `wall`: timers', writes' and
/// requests' (their wait for the store) median and p99, and the
/// simulation's busy and waiting shares (what a write costs it, and why it
/// is late when it is). A p99 over `LAG_BOUND` marks the row as measuring
/// the simulator.
pub(crate) fn lag_cell(lag: &kube_sandbox::SandboxLag, wall: Duration) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    format!(
        "{:.1} / {:.1} ms; {:.1} / {:.1} ms; {:.1} / {:.1} ms; {}{}",
        ms(lag.timers.median),
        ms(lag.timers.p99),
        ms(lag.changes.median),
        ms(lag.changes.p99),
        ms(lag.requests.median),
        ms(lag.requests.p99),
        lag.cause(wall),
        if lag.late(LAG_BOUND) {
            " **(late: the row measures the simulator, not the drain)**"
        } else {
            ""
        }
    )
}

/// The lateness past which a row says more of the sandbox than of the drain.
pub(crate) const LAG_BOUND: Duration = Duration::from_millis(100);
