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
