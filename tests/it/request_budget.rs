//! What a pool drain asks of the API server, counted from the sandbox's
//! request log: every node it drains adds a fixed number of requests
//! besides its evictions (its pods listed and watched, its cordon, its
//! conditions and Events), and the run adds a few of its own (the nodes,
//! the budgets, the DaemonSets). A roll's node adds its drain's and the
//! roll's own (its Lease, its reads, its uncordon). Counted, not timed: the
//! counts do not depend on the machine.

use std::collections::BTreeMap;
use std::time::Duration;

use kube_sandbox::request_log::Entry;

use crate::pool::pool;

/// The requests `kubectl maintain ARGS` over `nodes` blue nodes sends
/// besides its evictions, by "METHOD path-kind", once the log has them
/// all (a watch is logged when its connection closes, a moment after the
/// command exits).
fn requests_of(nodes: usize, args: &[&str]) -> BTreeMap<String, usize> {
    let zones = ["a", "b"];
    let names: Vec<String> = (0..nodes).map(|i| format!("n{i}")).collect();
    let blue: Vec<(&str, &str)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), zones[i % 2]))
        .collect();
    // Two pods of one Deployment per blue node, one budget over them all.
    let c = pool(
        &blue,
        2,
        u32::try_from(2 * (nodes + 2)).unwrap(),
        "maxUnavailable: 2",
    )
    .start(33);
    c.wait_settled();
    let before = c.requests().len();
    c.maintain(args).success();
    let mut seen = 0;
    let mut entries: Vec<Entry> = Vec::new();
    for _ in 0..40 {
        entries = c.requests();
        if entries.len() == seen {
            break;
        }
        seen = entries.len();
        std::thread::sleep(Duration::from_millis(250));
    }
    let mut kinds = BTreeMap::new();
    for e in entries.iter().skip(before) {
        let drains = e.user_agent.contains("kubectl-maintain");
        if !drains || e.path.ends_with("/eviction") {
            continue;
        }
        *kinds.entry(kind(e)).or_default() += 1;
    }
    kinds
}

/// A request's method and what it names: the path with names left out.
fn kind(e: &Entry) -> String {
    let parts: Vec<&str> = e.path.split('/').collect();
    let mut out = Vec::new();
    let mut it = parts.iter().peekable();
    while let Some(p) = it.next() {
        out.push(*p);
        // A collection is followed by a name: leave it out.
        if [
            "namespaces",
            "nodes",
            "pods",
            "events",
            "daemonsets",
            "poddisruptionbudgets",
            "leases",
        ]
        .contains(p)
            && it.peek().is_some()
        {
            it.next();
            out.push("*");
        }
    }
    let watch = if e.query.contains("watch=") {
        " (watch)"
    } else {
        ""
    };
    format!("{} {}{watch}", e.method, out.join("/"))
}

/// What two and four nodes cost: the requests each node adds, the
/// requests of the run itself, and which kinds grew with the nodes.
fn per_node_and_run(args: &[&str]) -> (usize, usize, BTreeMap<String, usize>, String) {
    let two = requests_of(2, args);
    let four = requests_of(4, args);
    let total = |k: &BTreeMap<String, usize>| k.values().sum::<usize>();
    let per_node = (total(&four) - total(&two)) / 2;
    let per_run = total(&two) - 2 * per_node;
    let mut growth: Vec<String> = four
        .iter()
        .map(|(k, n)| (k, n.saturating_sub(two.get(k).copied().unwrap_or(0))))
        .filter(|(_, d)| *d > 0)
        .map(|(k, d)| format!("{k}: {}", d as f64 / 2.0))
        .collect();
    growth.sort();
    (per_node, per_run, two, growth.join("\n"))
}

const DRAIN: [&str; 8] = [
    "drain",
    "-l",
    "pool=blue",
    "--max-parallel",
    "2",
    "--ignore-daemonsets",
    "--timeout",
    "60s",
];

#[test]
fn each_drained_node_adds_eight_requests_besides_its_evictions() {
    let (per_node, per_run, two, growth) = per_node_and_run(&DRAIN);
    // Per node: its pods listed and watched, its cordon, its two
    // conditions (drain started, finished) and its three Events.
    assert!(
        per_node <= 8,
        "each node now adds {per_node} requests besides its evictions (was 8):\n{growth}"
    );
    // Per run: the server's version, the selected nodes and a sample of
    // schedulable ones, every budget listed once and watched (the scenario
    // has no DaemonSet to look up), and whether EvictionRequests are served
    // (one discovery request for `--eviction-api=auto`; 1.33 serves none,
    // so each node's requests are what they were before it).
    assert!(
        per_run <= 6,
        "the run adds {per_run} requests of its own (was 6): {two:#?}"
    );
}

#[test]
fn each_rolled_node_adds_32_requests_besides_its_evictions() {
    let (per_node, _, _, growth) = per_node_and_run(&[
        "roll",
        "-l",
        "pool=blue",
        "--max-parallel",
        "2",
        "--ignore-daemonsets",
        "--exec",
        "true",
        "--timeout",
        "60s",
    ]);
    // Per node (counted 2026-11-27): its drain's eight; its Lease, the
    // progress a roll resumes from after kill -9 (created, read 3 and
    // written 9 times); the node read twice (by its drain, and before its
    // uncordon: the action's boot ID and addresses come from the roll's
    // watch of every node) and a sample of schedulable nodes listed once;
    // kured's DaemonSet looked for once (and, were it there, read again to
    // give its lock back); 4 more condition patches, its uncordon; and
    // its claim among the node's planners, made when the roll plans it and
    // taken back when it returns it (two metadata patches, so that
    // MaintenancePlanned stays True while another run still plans the node,
    // crate::publish::planners). Counted, not timed: stable over runs, as
    // the writes follow the roll's steps, not a clock.
    assert!(
        per_node <= 32,
        "each rolled node now adds {per_node} requests besides its evictions (was 32):\n{growth}"
    );
}
