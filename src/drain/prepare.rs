//! Before anything changes: the nodes found, each node's health and proof,
//! its pods listed (a few nodes at once) and classified, the EvictionRequest
//! path decided, and what the operator should know (`Prepared`).

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use tokio::sync::{Semaphore, watch};

use super::budgets::Broker;
use super::context::{DrainContext, GLOBAL_IN_FLIGHT};
use super::discover::{self, Classifier};
use super::driver::now;
use super::engine::Prepared;
use super::evict::Evictor;
use super::machine::WaveSpec;
use super::node_plan::NodePlan;
use super::out_of_service::NodeProof;
use super::packed_pods::PackedPods;
use super::pod_watch::{self, PodQuery, Snapshot};
use super::{DrainError, Options};
use crate::client::Clients;
use crate::policy::node_health::NodeDown;
use crate::policy::plan::Plan;
use crate::publish::Publisher;
use crate::vocabulary::events::{Announcer, Sink};
use crate::vocabulary::outcome::DryRun;
use crate::vocabulary::pod_key::PodKey;
use crate::vocabulary::warning::Warning;

/// Each listed node's health (crate::policy::node_health) and, with
/// `--node-shut-down`, the proof it is asked for, before any change.
async fn health_and_proofs(
    client: &kube::Client,
    options: &Options,
    listed: &[Node],
) -> Result<Vec<(Option<NodeDown>, Option<NodeProof>)>, DrainError> {
    let mut health = Vec::new();
    for node in listed {
        health.push(super::heartbeat::check(client, node).await);
    }
    let proofs = match &options.node_shut_down {
        Some(proof) if options.dry_run == DryRun::None => {
            let nodes: Vec<(&str, Option<&NodeDown>)> = listed
                .iter()
                .zip(&health)
                .map(|(node, d)| {
                    (
                        node.metadata.name.as_deref().unwrap_or_default(),
                        d.as_ref(),
                    )
                })
                .collect();
            let proofs = super::out_of_service::plan(proof, &nodes, can_type())
                .map_err(DrainError::NoProof)?;
            proofs.into_iter().map(Some).collect()
        }
        _ => vec![None; health.len()],
    };
    Ok(health.into_iter().zip(proofs).collect())
}

/// Can a person type at this terminal (a node's name, as proof)?
fn can_type() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Nodes whose pods are listed at once before a drain starts.
const LISTS_AT_ONCE: usize = 8;

/// What drains running at the same time (a roll's nodes) share: the
/// budget watches, so that they share each budget's disruptions too, the
/// watch of VolumeAttachments, and what is published for others.
pub(crate) struct Shared {
    pub(crate) budgets: Broker,
    pub(crate) attachments: Arc<super::detach::Attachments>,
    pub(crate) publisher: Arc<Publisher>,
}

/// Finds the nodes and lists and classifies their pods. Makes no change.
pub(crate) async fn prepare(
    clients: Clients,
    plan: Plan,
    options: Options,
    events: Sink,
    interrupt: watch::Receiver<bool>,
    publisher: Arc<Publisher>,
) -> Result<Prepared, DrainError> {
    let budgets = Broker::new(clients.main.clone(), events.clone());
    let shared = Shared {
        budgets,
        attachments: Arc::default(),
        publisher,
    };
    prepare_sharing(clients, plan, options, events, interrupt, shared).await
}

/// `prepare`, sharing budget watches and a publisher with other drains
/// running at the same time (a roll's nodes).
pub(crate) async fn prepare_sharing(
    clients: Clients,
    plan: Plan,
    options: Options,
    events: Sink,
    interrupt: watch::Receiver<bool>,
    shared: Shared,
) -> Result<Prepared, DrainError> {
    let Shared {
        budgets,
        attachments,
        publisher,
    } = shared;
    let main = &clients.main;
    let nodes = discover::resolve_nodes(main, &options.nodes).await?;
    let view = discover::cluster_view(main, &events, nodes.len()).await?;
    let no_room = crate::policy::guard::leaves_no_schedulable_node(&view, &nodes);
    // Namespaces are read only for a plan's namespace selectors, as kubectl
    // drain never lists them; a namespace being deleted is otherwise learnt
    // from the eviction's answer.
    let (namespace_labels, terminating_namespaces) = if plan.uses_namespace_selectors() {
        discover::namespaces(main).await?
    } else {
        Default::default()
    };
    let health = health_and_proofs(main, &options, &nodes).await?;
    // Draining several nodes at once, evictions share each budget's
    // disruptions from the first attempt: one list of budgets says which
    // pods each holds (a single drain learns it from refusals, as kubectl).
    let shares_budgets = options.max_parallel > 1
        && options.dry_run == DryRun::None
        && budgets.sees_every_budget().await;
    let mut classifier = Classifier {
        plan,
        flags: options.flags.clone(),
        namespace_labels,
        terminating_namespaces,
        daemonsets: HashMap::new(),
    };
    // Everything the filters need, for every node, before anything changes:
    // node by node, each node's pods packed once classified, so that a pool
    // never holds every pod as an object (crate::drain::packed_pods); the
    // lists LISTS_AT_ONCE at a time (one by one, 500 nodes took 0.7 s
    // before the first cordon), taken in the nodes' order; each list read
    // and decoded in a task of its own, beside this one's classifying (the
    // lists of 500 nodes of 5,000 took 0.3 s decoded here, 0.18 s so).
    let now = now();
    let mut budget_of = HashMap::new();
    let mut listed = Vec::new();
    let mut lists = listed_in_order(main, &options, nodes.into_iter().zip(health));
    while let Some((list, node, (down, proof))) = lists.next().await {
        let (query, snapshot) = list?;
        let name = query.node.clone();
        discover::daemonsets(main, &snapshot.pods, &mut classifier.daemonsets).await?;
        let pods = classifier.classify(snapshot.pods, now.wall);
        if shares_budgets {
            let to_evict = pods.iter().filter(|(_, d)| d.evicts()).map(|(p, _)| p);
            budget_of.extend(budgets.budgets_of(to_evict).await.unwrap_or_default());
        }
        listed.push(NodePlan {
            pods: PackedPods::pack(pods, options.grace_period),
            resource_version: snapshot.resource_version,
            down,
            proof,
            node,
            name,
            query,
        });
    }
    drop(lists);
    let nodes = listed;
    short_deadline(&nodes, &options)?;
    let waves: Vec<WaveSpec> = classifier
        .plan
        .waves
        .iter()
        .map(|w| WaveSpec {
            name: w.name.clone(),
            timeout: w.timeout,
        })
        .collect();
    let requests = eviction_requests(&clients, &options).await?;
    let evictor = Evictor {
        client: clients.evict.clone(),
        grace_period: options.grace_period,
        delete: options.disable_eviction,
        requests,
    };
    let engine = Arc::new(DrainContext {
        evictor,
        budgets,
        publisher,
        surges: super::surge::Surges::default(),
        attachments,
        budget_of: Arc::new(budget_of),
        clients,
        options,
        slots: Semaphore::new(GLOBAL_IN_FLIGHT),
        events: Announcer::new(events),
        interrupt,
        waves,
        terminating_namespaces: classifier.terminating_namespaces,
    });
    let wave_names = engine.waves.iter().map(|w| w.name.clone()).collect();
    let mut warnings = warnings(&nodes, &engine.options, no_room);
    if engine.evictor.requests.is_some() {
        warnings.push(Warning::EvictsByRequest);
    }
    Ok(Prepared {
        engine,
        nodes,
        wave_names,
        warnings,
    })
}

/// `--eviction-api`: whether pods are evicted through EvictionRequests.
/// One discovery request when it may be; none for `eviction`, a delete
/// (`--disable-eviction`) or a dry run (which asks the subresource).
async fn eviction_requests(
    clients: &crate::client::Clients,
    options: &Options,
) -> Result<Option<Arc<super::evict::request::Requests>>, DrainError> {
    use super::evict::request::{EvictionApi, Requests};
    let api = options.eviction_api;
    if api == EvictionApi::Eviction || options.disable_eviction || options.dry_run != DryRun::None {
        return Ok(None);
    }
    let not_served = |why: String| {
        DrainError::NotServed(format!(
            "--eviction-api=request: {why}; EvictionRequest needs Kubernetes 1.37 with the EvictionRequestAPI feature gate (or use --eviction-api=auto or eviction)"
        ))
    };
    match clients.served().await.map(|s| s.eviction_requests) {
        Ok(true) => Ok(Some(Arc::new(Requests::new(clients.evict.clone())))),
        Ok(false) if api == EvictionApi::Request => Err(not_served(
            "the server does not serve lifecycle.k8s.io/v1alpha1 evictionrequests".into(),
        )),
        Err(e) if api == EvictionApi::Request => Err(not_served(format!(
            "cannot read lifecycle.k8s.io/v1alpha1 discovery: {e}"
        ))),
        _ => Ok(None),
    }
}

/// `--deadline` shorter than a grace period it would cut: refused before
/// any change (crate::policy::guard::short_deadline).
fn short_deadline(nodes: &[NodePlan], options: &Options) -> Result<(), DrainError> {
    if options.dry_run != DryRun::None {
        return Ok(());
    }
    let deletable = nodes
        .iter()
        .flat_map(|n| n.pods.facts())
        .filter(|f| f.disposition.evicts())
        .map(|f| (f.key.to_string(), f.grace));
    crate::policy::guard::short_deadline(options.deadline, options.allow_short_deadline, deletable)
        .map_err(DrainError::Guard)
}

/// What the operator should know before anything changes.
fn warnings(nodes: &[NodePlan], options: &Options, no_room: bool) -> Vec<Warning> {
    let pods = || nodes.iter().flat_map(|n| n.pods.facts());
    let mut warnings = Vec::new();
    let held: Vec<(PodKey, String)> = pods()
        .filter_map(|f| crate::policy::classify::marker(&f.disposition).map(|m| (f.key.clone(), m)))
        .collect();
    if !held.is_empty() {
        warnings.push(Warning::HeldByMarkers(held));
    }
    let evicted = || pods().filter(|f| f.disposition.evicts());
    if no_room {
        warnings.push(Warning::LeftPending(
            evicted().map(|f| f.key.clone()).collect(),
        ));
    }
    // kubectl drain does not wait for volumes: said before anything changes.
    let claims = evicted().any(|f| f.claims);
    if let (true, Some(limit)) = (claims, options.detach_wait) {
        warnings.push(Warning::WaitsForDetach { limit });
    }
    for n in nodes {
        if let Some(down) = n.health() {
            warnings.push(Warning::NodeDown {
                node: n.name.clone(),
                down: Box::new(down),
                lost_after: options.lost_pod_timeout,
            });
        }
    }
    if let Some(after) = options.deadline {
        warnings.push(Warning::Deadline {
            after,
            overrides_markers: options.deadline_overrides_markers,
        });
    }
    warnings
}

/// Each node's pods, LISTS_AT_ONCE lists at a time, in the nodes' order,
/// with what came with the node.
fn listed_in_order<T>(
    client: &kube::Client,
    options: &Options,
    nodes: impl Iterator<Item = (Node, T)>,
) -> impl futures::Stream<Item = (Result<(PodQuery, Snapshot), DrainError>, Node, T)> {
    futures::stream::iter(nodes)
        .map(|(node, with)| {
            let list = tokio::spawn(list_pods(client.clone(), pod_query(options, &node)));
            // A panic in the task is this one's.
            async move {
                let list = list
                    .await
                    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
                (list, node, with)
            }
        })
        .buffered(LISTS_AT_ONCE)
}

/// What lists a node's pods.
fn pod_query(options: &Options, node: &Node) -> PodQuery {
    PodQuery {
        node: node.metadata.name.clone().unwrap_or_default(),
        pod_selector: options.pod_selector.clone(),
        chunk_size: options.chunk_size,
    }
}

/// The node's pods, slim (crate::drain::slim_pod), with the query that
/// listed them.
async fn list_pods(
    client: kube::Client,
    query: PodQuery,
) -> Result<(PodQuery, Snapshot), DrainError> {
    let pods: Api<Pod> = Api::all(client);
    let mut snapshot = pod_watch::list(&pods, &query)
        .await
        .map_err(|e| crate::vocabulary::api_error::api_error("list", "pods", None, e))?;
    snapshot.pods = snapshot
        .pods
        .into_iter()
        .map(super::slim_pod::slim)
        .collect();
    Ok((query, snapshot))
}
