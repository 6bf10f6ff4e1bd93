//! `kubectl maintain status`: the nodes under maintenance (those with our
//! record), since when, why, and what is still on them; with `-w` (or
//! `--run`), a run handed to the cluster (crate::in_cluster::watch).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::ListParams;
use serde::Serialize;

use crate::cli::StatusArgs;
use crate::cli::exit::{self, Exit};
use crate::client;
use crate::drain::budgets::lookup::TightBudgets;
use crate::drain::pod_watch::{self, PodQuery};
use crate::policy::classify::{MIRROR_ANNOTATION, controller_kind};
use crate::policy::maintenance;
use crate::vocabulary::DrainError;
use crate::vocabulary::api_error::api_error;
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
    let waiting_on = remaining
        .iter()
        .filter_map(|p| Some((PodKey::of(p).to_string(), why_left(p, &tight)?)))
        .collect();
    Ok(Some(NodeStatus {
        state: state(node),
        waiting_on,
        node: name,
        since: record.started_at.clone(),
        reason: record.reason.clone(),
        was_cordoned: record.was_unschedulable,
        stale: maintenance::is_stale(node),
        taints: record.taints.iter().map(ToString::to_string).collect(),
        pods_remaining: remaining
            .iter()
            .map(|p| PodKey::of(p).to_string())
            .collect(),
        pods_staying: staying.len(),
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
    // Named nodes: each pod left, and why, as the cluster shows it.
    if named {
        for n in by_node.values() {
            for pod in &n.pods_remaining {
                let why = n
                    .waiting_on
                    .get(pod)
                    .map_or("not evicted yet", String::as_str);
                let _ = writeln!(out, "node/{} pod/{pod}: {why}", n.node);
            }
        }
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

/// Why a pod is still on a node under maintenance, as the cluster shows
/// it: going, or held by a budget that allows no disruption now.
fn why_left(
    pod: &k8s_openapi::api::core::v1::Pod,
    tight: &BTreeMap<PodKey, (String, crate::drain::budgets::Budget)>,
) -> Option<String> {
    if let Some(at) = &pod.metadata.deletion_timestamp {
        return Some(format!("terminating (deletion asked at {})", at.0));
    }
    let (name, b) = tight.get(&PodKey::of(pod))?;
    Some(format!(
        "PDB {name} allows no disruption now ({} healthy, {} needed of {} expected)",
        b.current_healthy, b.desired_healthy, b.expected_pods
    ))
}
