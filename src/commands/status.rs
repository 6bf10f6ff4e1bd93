//! `kubectl maintain status`: the nodes under maintenance (those with our
//! record), since when, why, what is still on them, and for each node what
//! it waits on and what to do next; with `-w` (or `--run`), a run handed to
//! the cluster (crate::in_cluster::watch).
//!
//! A pod left is read as the drain would meet it: terminating (within its
//! grace period, past it, or held by finalizers: `deletionTimestamp` is when
//! the grace period ends, kubernetes pkg/registry/rest/delete.go), on a node
//! whose kubelet is down, held by a budget that allows no disruption, or
//! refused by kubectl's filters (pkg/drain/filters.go) to a drain without
//! the flag that lets it go.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::ListParams;
use serde::Serialize;

use crate::cli::StatusArgs;
use crate::cli::exit::{self, Exit};
use crate::client;
use crate::drain::budgets::Budget;
use crate::drain::budgets::lookup::TightBudgets;
use crate::drain::pod_watch::{self, PodQuery};
use crate::policy::classify::{
    Context, Disposition, FilterFlags, MIRROR_ANNOTATION, controller_kind,
};
use crate::policy::maintenance;
use crate::policy::node_health::NodeDown;
use crate::vocabulary::DrainError;
use crate::vocabulary::api_error::api_error;
use crate::vocabulary::outcome::Cause;
use crate::vocabulary::pod_key::PodKey;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeStatus {
    node: String,
    /// From the node's conditions: `draining`, `drained`, `not drained`,
    /// `cordoned` (or `uncordoned` for a stale record).
    state: &'static str,
    since: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    was_cordoned: bool,
    /// The node was uncordoned by hand: the record is left over, and the
    /// next drain replaces it.
    stale: bool,
    taints: Vec<String>,
    /// Pods still on the node that a drain would evict or wait for.
    pods_remaining: Vec<String>,
    /// Why each of them is still there, as the cluster shows it: going
    /// (terminating), or held by a budget that allows no disruption now.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    waiting_on: BTreeMap<String, String>,
    /// DaemonSet and static pods, which stay.
    pods_staying: usize,
    /// What the node waits on, in a line: the cause that holds it first
    /// (a refusal before a budget before a grace period).
    #[serde(skip_serializing_if = "Option::is_none")]
    waiting: Option<String>,
    /// What the operator does next for this node.
    next: String,
}

/// The `MaintenanceStatus` document's body.
#[derive(Serialize)]
struct Nodes {
    nodes: Vec<NodeStatus>,
}

/// The nodes named (all when none are); a name that is no node is an
/// error (exit 2), as for a drain.
fn named(nodes: Vec<Node>, names: &[String]) -> Result<Vec<Node>, Exit> {
    let name_of = |n: &Node| n.metadata.name.clone().unwrap_or_default();
    let missing: Vec<String> = names
        .iter()
        .filter(|want| !nodes.iter().any(|n| name_of(n) == **want))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(Exit::from(DrainError::NodesNotFound(missing)));
    }
    Ok(nodes
        .into_iter()
        .filter(|n| names.is_empty() || names.contains(&name_of(n)))
        .collect())
}

pub(crate) async fn run(args: StatusArgs) -> anyhow::Result<u8> {
    let clients = client::connect(&args.cluster).await?;
    if args.watch || args.run.is_some() {
        let ns = crate::in_cluster::run::namespace(args.cluster.namespace.as_ref());
        let job = crate::in_cluster::run::find(&clients, &ns, args.run.as_deref()).await?;
        return Ok(crate::in_cluster::watch::watch(&clients, &job, args.watch).await?);
    }
    // Retries of a failing API server are said, not waited out in silence.
    let _retries = crate::ui::lines::retries(&clients);
    let api: Api<Node> = Api::all(clients.main.clone());
    let nodes = api
        .list(&ListParams::default())
        .await
        .map_err(|e| Exit::from(api_error("list", "nodes", None, e)))?;
    let mut out = Vec::new();
    // Every budget listed once, at the first node with pods left.
    let mut tight = None;
    let chosen = named(nodes.items, &args.nodes)?.into_iter().filter(|n| {
        args.kubelet_version
            .as_ref()
            .is_none_or(|r| r.takes_node(n))
    });
    for node in chosen {
        if let Some(status) = node_status(&clients.main, &node, &mut tight).await? {
            out.push(status);
        }
    }
    let doc = Nodes { nodes: out };
    if let Some(text) = crate::ui::report::document("MaintenanceStatus", &doc, args.output)? {
        crate::out!("{text}");
        return Ok(exit::OK);
    }
    if doc.nodes.is_empty() {
        crate::errln!("No nodes are under maintenance.");
        return Ok(exit::OK);
    }
    crate::out!(
        "{}",
        crate::ui::fit::for_stdout(table(&doc, !args.nodes.is_empty()))
    );
    Ok(exit::OK)
}

/// A node under maintenance (our record on it) as the cluster shows it:
/// its state, and the pods left on it, with why; `None` for another node.
/// `tight`: the budgets that allow no disruption, listed when first needed.
async fn node_status(
    client: &kube::Client,
    node: &Node,
    tight: &mut Option<TightBudgets>,
) -> Result<Option<NodeStatus>, Exit> {
    let Some(record) = maintenance::record_of(node) else {
        return Ok(None);
    };
    let name = node.metadata.name.clone().unwrap_or_default();
    let query = PodQuery {
        node: name.clone(),
        pod_selector: None,
        chunk_size: 500,
    };
    let pods = pod_watch::list(&Api::all(client.clone()), &query)
        .await
        .map_err(|e| Exit::from(api_error("list", "pods", None, e)))?
        .pods;
    let (staying, remaining): (Vec<_>, Vec<_>) = pods.iter().partition(|p| {
        let mirror = p
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION));
        mirror || controller_kind(p).is_some_and(|(k, _)| k == "DaemonSet")
    });
    if tight.is_none() && !remaining.is_empty() {
        *tight = Some(TightBudgets::list(client).await);
    }
    let tight = tight
        .as_ref()
        .map(|t| t.of(remaining.iter().copied()))
        .unwrap_or_default();
    let down = crate::drain::heartbeat::check(client, node).await;
    let now = kube_conventions::time::now();
    let causes: Vec<(PodKey, Cause, Option<String>)> = remaining
        .iter()
        .filter_map(|p| {
            let cause = cause_of(p, &tight, down.as_ref().map(|d| (name.as_str(), d)), now)?;
            let owner = controller_kind(p).map(|(k, _)| k.to_string());
            Some((PodKey::of(p), cause, owner))
        })
        .collect();
    let waiting_on = causes
        .iter()
        .map(|(key, cause, _)| (key.to_string(), pod_words(cause)))
        .collect();
    let state = state(node);
    let stale = maintenance::is_stale(node);
    let (waiting, next) = next_step(&name, state, stale, down.as_ref(), &causes, remaining.len());
    Ok(Some(NodeStatus {
        state,
        waiting_on,
        node: name,
        since: record.started_at.clone(),
        reason: record.reason.clone(),
        was_cordoned: record.was_unschedulable,
        stale,
        taints: record.taints.iter().map(ToString::to_string).collect(),
        pods_remaining: remaining
            .iter()
            .map(|p| PodKey::of(p).to_string())
            .collect(),
        pods_staying: staying.len(),
        waiting,
        next,
    }))
}

/// The table; with `named` nodes, each pod left and why below it.
fn table(doc: &Nodes, named: bool) -> String {
    let mut t = crate::ui::report::kubectl_table(&[
        "NODE",
        "STATE",
        "SINCE",
        "REASON",
        "TAINTS",
        "PODS LEFT",
        "STAYING",
    ]);
    let mut by_node: BTreeMap<&str, &NodeStatus> = BTreeMap::new();
    for n in &doc.nodes {
        by_node.insert(&n.node, n);
    }
    for n in by_node.values() {
        let age = kube_conventions::time::seconds_since(&n.since).map_or_else(
            || n.since.clone(),
            |s| format!("{} ago", kube_conventions::time::human_duration(s)),
        );
        let age = if n.stale {
            format!("{age} (stale: uncordoned by hand)")
        } else {
            age
        };
        t.add_row([
            n.node.clone(),
            n.state.to_string(),
            age,
            n.reason.clone().unwrap_or_else(|| "-".into()),
            if n.taints.is_empty() {
                "-".into()
            } else {
                n.taints.join(",")
            },
            n.pods_remaining.len().to_string(),
            n.pods_staying.to_string(),
        ]);
    }
    let mut out = format!("{}\n", t.trim_fmt());
    // Each node: what it waits on and what to do; named nodes also each
    // pod left, and why, as the cluster shows it.
    for n in by_node.values() {
        out.push('\n');
        if named {
            for pod in &n.pods_remaining {
                let why = n
                    .waiting_on
                    .get(pod)
                    .map_or("not evicted yet", String::as_str);
                let _ = writeln!(out, "node/{} pod/{pod}: {why}", n.node);
            }
        }
        if let Some(waiting) = &n.waiting {
            let _ = writeln!(out, "node/{}: waiting on {waiting}", n.node);
        }
        let _ = writeln!(out, "node/{}: next: {}", n.node, n.next);
    }
    out
}

/// The node's drain as its conditions tell it (crate::publish::conditions).
fn state(node: &Node) -> &'static str {
    let condition = |kind: &str| {
        node.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == kind))
    };
    let is = |kind: &str| condition(kind).is_some_and(|c| c.status == "True");
    if is(maintenance::DRAIN_IN_PROGRESS) {
        "draining"
    } else if is(maintenance::DRAINED) {
        "drained"
    } else if condition(maintenance::DRAINED)
        .is_some_and(|c| c.reason.as_deref() == Some("DrainNotCompleted"))
    {
        "not drained"
    } else if maintenance::unschedulable(node) {
        "cordoned"
    } else {
        "uncordoned"
    }
}

/// Why a pod is still on a node under maintenance, as the drain meets it:
/// going (within its grace period, past it, held by finalizers), stuck on
/// a node whose kubelet is down, held by a budget that allows no
/// disruption now, or refused by kubectl's filters without a flag; `None`
/// when nothing holds it (not evicted yet).
fn cause_of(
    pod: &Pod,
    tight: &BTreeMap<PodKey, (String, Budget)>,
    down: Option<(&str, &NodeDown)>,
    now: Timestamp,
) -> Option<Cause> {
    if pod.metadata.deletion_timestamp.is_some() {
        return Some(match down {
            Some((node, d)) => Cause::NodeNotReady {
                node: node.to_string(),
                ready: d.ready.clone(),
                since: d.since.clone(),
            },
            None => crate::drain::conclude::terminating_cause(pod, now),
        });
    }
    if let Some((name, b)) = tight.get(&PodKey::of(pod)) {
        return Some(Cause::Pdb {
            name: name.clone(),
            disruptions_allowed: Some(b.disruptions_allowed),
            current_healthy: Some(b.current_healthy),
            desired_healthy: Some(b.desired_healthy),
            expected_pods: Some(b.expected_pods),
            message: String::new(),
        });
    }
    // kubectl's filters as a drain without --force, --delete-emptydir-data
    // or --ignore-daemonsets applies them (DaemonSet pods stay, above).
    let plan = crate::policy::plan::defaults::plan();
    let flags = FilterFlags {
        ignore_daemonsets: true,
        ..FilterFlags::default()
    };
    let (labels, daemonsets) = (HashMap::new(), HashMap::new());
    let context = Context {
        plan: &plan,
        flags: &flags,
        namespace_labels: &labels,
        daemonsets: &daemonsets,
        now,
    };
    match context.classify(pod) {
        Disposition::Refuse { refusal } => Some(Cause::Refused {
            message: refusal.kubectl_message(),
            refusal,
        }),
        _ => None,
    }
}

/// A pod's cause as `status NODE` words it (a budget's numbers as the
/// cluster shows them now).
fn pod_words(cause: &Cause) -> String {
    match cause {
        Cause::Pdb {
            name,
            current_healthy: Some(c),
            desired_healthy: Some(d),
            expected_pods: Some(e),
            ..
        } => {
            format!("PDB {name} allows no disruption now ({c} healthy, {d} needed of {e} expected)")
        }
        Cause::Refused { message, .. } => format!("a drain refuses it: {message}"),
        other => other.to_string(),
    }
}

/// Which cause holds a node first: what never ends by itself before what
/// does (a refusal, a dead kubelet, finalizers, then budgets, then grace
/// periods running out).
fn precedence(cause: &Cause) -> u8 {
    match cause {
        Cause::Refused { .. } => 0,
        Cause::NodeNotReady { .. } => 1,
        Cause::Finalizers { .. } => 2,
        Cause::Terminating {
            seconds,
            grace_period_seconds: Some(g),
        } if seconds > g => 3,
        Cause::Pdb { .. } => 4,
        _ => 5,
    }
}

/// What the node waits on (its leading cause, with how many pods share
/// it) and what to do next, from its state and its pods' causes.
fn next_step(
    node: &str,
    state: &str,
    stale: bool,
    down: Option<&NodeDown>,
    causes: &[(PodKey, Cause, Option<String>)],
    left: usize,
) -> (Option<String>, String) {
    if stale {
        return (
            None,
            format!(
                "uncordoned by hand, the record left over: kubectl maintain uncordon {node} removes it (the next drain replaces it)"
            ),
        );
    }
    let lead = causes
        .iter()
        .min_by_key(|(key, cause, _)| (precedence(cause), key.clone()));
    if let Some((key, cause, owner)) = lead {
        let same = causes
            .iter()
            .filter(|(_, c, _)| c.kind() == cause.kind())
            .count();
        let more = if same > 1 {
            format!(
                " (and {} like it)",
                kube_conventions::count(same - 1, "more pod")
            )
        } else {
            String::new()
        };
        let waiting = format!("pod/{key}: {}{more}", pod_words(cause));
        let remedy = crate::ui::words::remedy(cause, owner.as_deref())
            .replace("NAME -n NS", &format!("{} -n {}", key.name, key.namespace));
        let next = match state {
            "draining" => remedy,
            _ => format!("{remedy}; then kubectl maintain drain {node}"),
        };
        return (Some(waiting), next);
    }
    if down.is_some() {
        return (
            Some("its kubelet, which is not running".into()),
            crate::ui::words::dead_node::REMEDY.into(),
        );
    }
    let next = match state {
        "draining" if left > 0 => format!(
            "the drain is evicting {}: wait (kubectl maintain status {node} names each)",
            kube_conventions::count(left, "pod")
        ),
        "draining" => "the drain is finishing: wait".into(),
        "drained" => format!("do the maintenance, then kubectl maintain uncordon {node}"),
        "not drained" => format!("rerun kubectl maintain drain {node}"),
        _ => format!(
            "cordoned, its drain not begun or ended unrecorded: kubectl maintain drain {node}, or kubectl maintain uncordon {node} to return it"
        ),
    };
    (None, next)
}
