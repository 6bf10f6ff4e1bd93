//! The drain as a pipeline of values: the selected nodes, one snapshot of
//! each node's pods, every pod classified once, then the run: cordon every
//! node, drain up to `--max-parallel` at once (zone by zone with
//! `--by-zone`, none started once `--max-blocked-nodes` is passed), one
//! outcome at the end.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;

use super::budgets::{self, Broker, NodeBudgets};
use super::context::{DrainContext, GLOBAL_IN_FLIGHT};
use super::cordon::cordon;
use super::discover::{self, Classifier};
use super::driver::now;
use super::evict::Evictor;
use super::machine::{NodeMachine, Settings, WaveSpec};
use super::out_of_service::NodeProof;
use super::packed_pods::PackedPods;
use super::pod_watch::{self, PodQuery, Snapshot};
use super::pool_budgets::PoolBudgets;
use super::{DrainError, Options, driver, preview};
use crate::client::Clients;
use crate::policy::classify::Disposition;
use crate::policy::node_health::NodeDown;
use crate::policy::plan::Plan;
use crate::pool::abort_watch::AbortWatch;
use crate::pool::gate::Gate;
use crate::pool::node_watch::Nodes;
use crate::pool::room::Room;
use crate::pool::{Admit, Driver, Ended, Runner, Stopped, Tell};
use crate::publish::Publisher;
use crate::publish::conditions::Stage;
use crate::vocabulary::events::{Announcer, Event, Sink, emit};
use crate::vocabulary::outcome::{DrainOutcome, DryRun, NodeOutcome, NodeStatus};
use crate::vocabulary::pod_key::{PodKey, uid};
use crate::vocabulary::warning::Warning;

/// One selected node as the drain found it.
pub(crate) struct NodePlan {
    pub(crate) node: Node,
    pub(crate) name: String,
    query: PodQuery,
    /// The resourceVersion the pods were listed at.
    resource_version: String,
    /// Every pod listed, with its fate, decided once; packed until the
    /// node's drain starts.
    pods: PackedPods,
    /// The node's kubelet is down, as found (crate::policy::node_health).
    down: Option<NodeDown>,
    /// `--node-shut-down` takes it out of service, with this proof.
    proof: Option<NodeProof>,
}

impl NodePlan {
    /// Does kubectl's filter refuse one of its pods (the node then ends
    /// at its start, nothing evicted)?
    fn refused(&self) -> bool {
        self.pods
            .facts()
            .iter()
            .any(|f| matches!(f.disposition, Disposition::Refuse { .. }))
    }

    /// The pods its drain is to move: all but those left alone by design.
    fn to_move(&self) -> usize {
        let facts = self.pods.facts();
        facts
            .iter()
            .filter(|f| !matches!(f.disposition, Disposition::Skip { .. }))
            .count()
    }

    fn unschedulable(&self) -> bool {
        crate::policy::maintenance::unschedulable(&self.node)
    }

    /// A machine for a preview, which leaves the plan as it is.
    fn machine(&self, settings: Arc<Settings>, was_cordoned: bool) -> NodeMachine {
        NodeMachine::new(
            &self.name,
            settings,
            self.pods.unpack(),
            was_cordoned,
            now(),
        )
        .with_health(self.health())
    }

    /// The node's health as the drain starts: down, and out of service once
    /// `--node-shut-down` has its proof.
    fn health(&self) -> Option<NodeDown> {
        let mut down = self.down.clone()?;
        if self.proof.is_some() && !down.out_of_service() {
            down.taints
                .push(crate::policy::node_health::OUT_OF_SERVICE.into());
        }
        Some(down)
    }

    /// Cordons the node (taken out of service too, with its proof of
    /// power-off), told; whether it was cordoned before.
    async fn cordon(&self, engine: &DrainContext) -> Result<bool, DrainError> {
        let (client, spec) = (&engine.clients.main, engine.options.cordon_spec());
        let mut taints = spec.taints.to_vec();
        if self.proof.is_some() {
            taints.push(super::out_of_service::taint());
        }
        let spec = super::cordon::CordonSpec {
            taints: &taints,
            ..spec
        };
        let (was, already) = cordon(client, &spec, &self.node, false).await?;
        engine.events.emit(Event::Cordoned {
            node: self.name.clone(),
            already,
        });
        Ok(was)
    }

    /// The node joins the budget broker with the pods of its first wave
    /// to evict, which are due on their budgets from the start.
    fn join_budgets(&self, engine: &DrainContext) -> NodeBudgets {
        let wave_of = |d: &Disposition| match d {
            Disposition::Evict { wave, .. } => Some(*wave),
            _ => None,
        };
        let facts = self.pods.facts();
        let first = facts.iter().filter_map(|f| wave_of(&f.disposition)).min();
        let first_wave = facts
            .iter()
            .filter(|f| first.is_some() && wave_of(&f.disposition) == first)
            .map(|f| f.key.clone());
        let evicted = facts
            .iter()
            .filter(|f| wave_of(&f.disposition).is_some())
            .map(|f| f.key.clone());
        engine
            .budgets
            .join(engine.budget_of.clone(), first_wave, evicted)
    }

    /// Drains the node, `budgets` its place with the budget broker
    /// (`join_budgets`); its pods move into the machine.
    async fn drain(
        self,
        engine: &DrainContext,
        settings: Arc<Settings>,
        was_cordoned: bool,
        budgets: NodeBudgets,
    ) -> NodeOutcome {
        // A node kubectl's filters refuse ends at its machine's start, before
        // any eviction or watch request.
        let pods = self.pods.unpack();
        let known = pods
            .iter()
            .map(|(p, _)| (PodKey::of(p), uid(p).to_string()))
            .collect();
        let health = self.health();
        let machine =
            NodeMachine::new(&self.name, settings, pods, was_cordoned, now()).with_health(health);
        let (publisher, events) = (&engine.publisher, Some(&engine.events.sink));
        publisher.stage(&self.name, Stage::Started, events).await;
        let out = driver::drain_node(
            engine,
            machine,
            self.query,
            self.resource_version,
            known,
            budgets,
        )
        .await;
        let stage = match out.status {
            NodeStatus::Drained => Stage::Drained,
            _ => Stage::NotDrained,
        };
        publisher.stage(&self.name, stage, events).await;
        for problem in engine.surges.undo(&engine.clients.main, &self.name).await {
            engine.events.warn(Warning::SurgeNotUndone { problem });
        }
        out
    }
}

/// Nodes found, pods listed and classified: everything decided, nothing
/// changed yet.
pub(crate) struct Prepared {
    engine: Arc<DrainContext>,
    nodes: Vec<NodePlan>,
    /// The plan's wave names in order, for the report.
    wave_names: Vec<String>,
    /// What the operator should know before anything changes.
    warnings: Vec<Warning>,
}

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

/// Cordons sent at once when a drain starts.
const CORDONS_AT_ONCE: usize = 32;

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
) -> Result<Option<Arc<super::eviction_request::Requests>>, DrainError> {
    use super::eviction_request::{EvictionApi, Requests};
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

impl Prepared {
    /// Every pod listed on the selected nodes, as objects again.
    pub(crate) fn pods(&self) -> Vec<Pod> {
        self.nodes.iter().flat_map(|n| n.pods.pods()).collect()
    }

    /// What the operator should know before anything changes (shown in the
    /// confirmation, or printed when there is none).
    pub(crate) fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// One more thing to know before anything changes.
    pub(crate) fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    /// The selected nodes' names, in the order given.
    pub(crate) fn names(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.name.clone()).collect()
    }

    /// Pods whose PodDisruptionBudget allows no disruption now, with the
    /// budget's name (for the confirmation).
    pub(crate) async fn tight_budgets(&self) -> BTreeMap<PodKey, String> {
        let pods = self.pods();
        budgets::lookup::TightBudgets::list(&self.engine.clients.main)
            .await
            .of(&pods)
            .into_iter()
            .map(|(pod, (name, _))| (pod, name))
            .collect()
    }

    /// Will carrying it out change anything: not a dry run, and not a
    /// drain that `--all-or-nothing` stops because a pod is refused?
    pub(crate) fn changes_anything(&self) -> bool {
        let options = &self.engine.options;
        options.dry_run == DryRun::None && !(options.all_or_nothing && self.refused())
    }

    /// Nodes whose name must be typed, as proof that they are powered off,
    /// before `--node-shut-down` takes them out of service.
    pub(crate) fn names_to_type(&self) -> Vec<&str> {
        self.nodes
            .iter()
            .filter(|n| n.proof == Some(NodeProof::Typed))
            .map(|n| n.name.as_str())
            .collect()
    }

    /// Does `--deadline` delete what is still held at some point?
    pub(crate) fn has_deadline(&self) -> bool {
        self.engine.options.deadline.is_some()
    }

    /// Does kubectl's filter refuse a pod on some selected node?
    pub(crate) fn refused(&self) -> bool {
        self.nodes.iter().any(NodePlan::refused)
    }

    /// What the drain would do, from what was listed: no request is made.
    pub(crate) fn preview(&self) -> DrainOutcome {
        let settings = self.engine.settings();
        let nodes = self
            .nodes
            .iter()
            .map(|n| {
                preview::client(
                    n.machine(settings.clone(), n.unschedulable()),
                    &BTreeMap::new(),
                )
            })
            .collect();
        outcome(
            self.wave_names.clone(),
            DryRun::Client,
            Instant::now(),
            nodes,
        )
    }

    /// Cordons every selected node first, as kubectl does; a node proven
    /// powered off is taken out of service with it, recorded alike (its
    /// `--fence-command` run before any change: every node powered off, or
    /// none taken out of service). Whether each was cordoned before.
    async fn cordon_all(&self) -> Result<Vec<bool>, DrainError> {
        self.fence_all().await?;
        // As kubectl drain -l: every node cordoned before the first eviction,
        // told in the given order; CORDONS_AT_ONCE at a time, so that a
        // pool of hundreds is cordoned in a moment, and none is started
        // after one fails.
        let mut was_cordoned = Vec::new();
        for batch in self.nodes.chunks(CORDONS_AT_ONCE) {
            let cordons = batch.iter().map(|n| n.cordon(&self.engine));
            let mut failed = None;
            for result in futures::future::join_all(cordons).await {
                match result {
                    Ok(was) => was_cordoned.push(was),
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(was_cordoned)
    }

    /// Runs every `--fence-command` before any change: every node powered
    /// off, or none taken out of service.
    async fn fence_all(&self) -> Result<(), DrainError> {
        for n in &self.nodes {
            if let Some(NodeProof::Fence(cmd)) = &n.proof {
                super::out_of_service::fence(cmd, &n.node)
                    .await
                    .map_err(DrainError::NotShutDown)?;
            }
        }
        Ok(())
    }

    /// Dry runs and `--all-or-nothing` refusals: what would happen, each
    /// node previewed (a server dry run asks the server).
    async fn previewed(&self, started: Instant) -> Option<Result<DrainOutcome, DrainError>> {
        let engine = &self.engine;
        let dry_run = engine.options.dry_run;
        // With --all-or-nothing a refused pod anywhere changes nothing at all.
        let all_or_nothing = engine.options.all_or_nothing && self.refused();
        if !all_or_nothing && dry_run == DryRun::None {
            return None;
        }
        let (client, spec) = (&engine.clients.main, engine.options.cordon_spec());
        let settings = engine.settings();
        // `plan` reads the budgets' status: a pod one of them holds now is
        // shown blocked, in the drain's words (no eviction is asked).
        let tight = if engine.options.plan_reads_budgets {
            let pods = self.pods();
            budgets::lookup::TightBudgets::list(client).await.of(&pods)
        } else {
            BTreeMap::new()
        };
        let mut out = Vec::new();
        for n in &self.nodes {
            let machine = n.machine(settings.clone(), n.unschedulable());
            out.push(match dry_run {
                DryRun::None => preview::refused(machine),
                DryRun::Client => preview::client(machine, &tight),
                DryRun::Server => {
                    if let Err(e) = cordon(client, &spec, &n.node, true).await {
                        return Some(Err(e));
                    }
                    preview::server(&engine.evictor, &engine.budgets, machine).await
                }
            });
        }
        Some(Ok(outcome(self.wave_names.clone(), dry_run, started, out)))
    }

    /// Drains the one node prepared, on its own (a roll's node): cordoned,
    /// then drained; dry runs and refusals reported.
    pub(crate) async fn drain_alone(self) -> Result<DrainOutcome, DrainError> {
        let started = Instant::now();
        if let Some(previewed) = self.previewed(started).await {
            return previewed;
        }
        let was_cordoned = self.cordon_all().await?;
        let engine = self.engine.clone();
        let settings = engine.settings();
        let mut nodes = Vec::new();
        for (n, was) in self.nodes.into_iter().zip(was_cordoned) {
            let joined = n.join_budgets(&engine);
            nodes.push(n.drain(&engine, settings.clone(), was, joined).await);
        }
        engine.end_requests().await;
        Ok(outcome(self.wave_names, DryRun::None, started, nodes))
    }

    /// Carries the drain out through the pool runner (or, for dry runs and
    /// refusals, reports). As kubectl drain: every node is cordoned first
    /// (unless `pace` cordons each at its turn), each node kubectl's filters
    /// refuse stays cordoned and is reported, the others are drained.
    pub(crate) async fn execute(self, pace: Pace<'_>) -> Result<DrainOutcome, DrainError> {
        let started = Instant::now();
        if let Some(previewed) = self.previewed(started).await {
            return previewed;
        }
        let was_cordoned: Vec<Option<bool>> = if pace.cordon_at_turn {
            self.fence_all().await?;
            vec![None; self.nodes.len()]
        } else {
            self.cordon_all().await?.into_iter().map(Some).collect()
        };
        let engine = self.engine.clone();
        let settings = engine.settings();
        let Prepared {
            nodes, wave_names, ..
        } = self;
        for n in &nodes {
            engine.events.emit(Event::Planned {
                node: n.name.clone(),
                pods: n.to_move(),
            });
        }
        let groups =
            crate::policy::pool::groups(nodes.iter().map(|n| &n.node), engine.options.by_zone);
        let room = Room {
            max_parallel: engine.options.max_parallel.max(1),
            max_unavailable: engine.options.max_unavailable,
            max_blocked: engine.options.max_blocked_nodes,
            keep_quorum: false,
            keep_a_schedulable_node: false,
            done_stays_out: true,
        };
        // Each node's pods to evict, per budget (known with --max-parallel > 1).
        let budget_of = engine.budget_of.clone();
        let mut draining = Draining {
            pool: PoolBudgets::new(nodes.iter().map(|n| {
                n.pods
                    .facts()
                    .iter()
                    .filter(|f| f.disposition.evicts())
                    .filter_map(|f| budget_of.get(&f.key))
            })),
            chains: room.max_parallel > 1,
            names: nodes.iter().map(|n| n.name.clone()).collect(),
            nodes: nodes.into_iter().zip(was_cordoned).map(Some).collect(),
            refused_at_once: !pace.cordon_at_turn,
            engine: &engine,
            settings: &settings,
        };
        let runner = Runner {
            room,
            nodes: pace.nodes,
            gate: pace.gate,
            abort: pace.abort,
            tell: pace.tell,
        };
        let interrupt = engine.interrupt.clone();
        let ran = runner
            .run(&mut draining, groups, &interrupt, |_, (n, was, budgets)| {
                drain_one(&engine, settings.clone(), n, was, budgets)
            })
            .await?;
        let mut results = ran;
        results.sort_by_key(|(i, _)| *i);
        let nodes = results.into_iter().map(|(_, o)| o).collect();
        engine.end_requests().await;
        Ok(outcome(wave_names, DryRun::None, started, nodes))
    }
}

/// How a drain's nodes are paced: the pool runner's gate, a Job's abort,
/// where holds and lines are told, every node watched for
/// `--max-unavailable`, and whether each node is cordoned at its turn
/// (paced by a gate or `--max-unavailable`) instead of all first.
pub(crate) struct Pace<'a> {
    pub(crate) gate: &'a Gate,
    pub(crate) abort: &'a AbortWatch,
    pub(crate) tell: &'a Tell,
    pub(crate) nodes: Option<&'a Nodes>,
    pub(crate) cordon_at_turn: bool,
}

/// The drain's driver of the pool runner: the next node weighed by the
/// budgets it shares with those running, its place with the budget broker
/// taken as it starts.
struct Draining<'a> {
    engine: &'a Arc<DrainContext>,
    settings: &'a Arc<Settings>,
    names: Vec<String>,
    /// Each node's plan and whether it was cordoned before (unknown until
    /// cordoned at its turn), until it starts.
    nodes: Vec<Option<(NodePlan, Option<bool>)>>,
    pool: PoolBudgets<'a>,
    chains: bool,
    /// A node kubectl's filters refuse ends at once, without a slot (every
    /// node was cordoned first, so nothing is left to do at its turn).
    refused_at_once: bool,
}

impl Driver for Draining<'_> {
    const VERB: &'static str = "drain";
    type Start = (NodePlan, Option<bool>, NodeBudgets);
    type Out = NodeOutcome;

    fn name(&self, node: usize) -> &str {
        &self.names[node]
    }

    fn choose(&mut self, waiting: &[usize]) -> usize {
        self.pool.choose(waiting, &self.engine.budgets, self.chains)
    }

    async fn admit(&mut self, i: usize) -> Result<Admit<Self::Start, NodeOutcome>, DrainError> {
        self.pool.started(i);
        let (n, was) = self.nodes[i].take().expect("each node once");
        // Joined before the next choice, which counts its pods, and in the
        // order started, which serves budgets in it.
        let joined = n.join_budgets(self.engine);
        Ok(Admit::Start((n, was, joined)))
    }

    async fn at_once(&mut self, i: usize) -> Option<NodeOutcome> {
        let refused = self.nodes[i].as_ref().is_some_and(|(n, _)| n.refused());
        if !(self.refused_at_once && refused) {
            return None;
        }
        self.pool.started(i);
        let (n, was) = self.nodes[i].take().expect("each node once");
        let joined = n.join_budgets(self.engine);
        Some(drain_one(self.engine, self.settings.clone(), n, was, joined).await)
    }

    fn ended(&self, out: &NodeOutcome) -> Ended {
        let (status, blocked) = match out.status {
            NodeStatus::Drained => ("done", false),
            NodeStatus::Refused | NodeStatus::TimedOut => ("blocked", true),
            NodeStatus::Failed => ("failed", true),
            NodeStatus::Interrupted => ("interrupted", false),
            NodeStatus::NotStarted | NodeStatus::DryRun => ("not started", false),
        };
        Ended {
            status,
            message: out.message.clone(),
            done: status == "done",
            blocked,
            out_of_service_ms: None,
            line: false,
        }
    }

    fn not_started(
        &mut self,
        i: usize,
        interrupted: bool,
        stopped: Option<&Stopped>,
    ) -> NodeOutcome {
        let (n, was) = self.nodes[i].take().expect("each node once");
        let why = match (interrupted, stopped) {
            (true, _) => "interrupted before it started".to_string(),
            (false, Some(stopped)) => format!("not started: {stopped}"),
            (false, None) => "not started".to_string(),
        };
        let left = match was {
            Some(_) => "the node stays cordoned",
            None => "the node was not cordoned",
        };
        let machine = n.machine(self.settings.clone(), was.unwrap_or(n.unschedulable()));
        let mut out = machine.not_started(format!("{why}; {left}"));
        out.not_cordoned = was.is_none();
        out
    }
}

/// One node's drain in a pool: cordoned first when the run cordons each at
/// its turn (`was` unknown).
async fn drain_one(
    engine: &Arc<DrainContext>,
    settings: Arc<Settings>,
    n: NodePlan,
    was: Option<bool>,
    budgets: NodeBudgets,
) -> NodeOutcome {
    emit(
        &engine.events.sink,
        Event::RunPhase {
            node: n.name.clone(),
            phase: "drain",
        },
    );
    let was = match was {
        Some(was) => was,
        None => match n.cordon(engine).await {
            Ok(was) => was,
            Err(e) => {
                let machine = n.machine(settings, n.unschedulable());
                return machine.failed_to_start(format!("cordon: {}", e.chain()));
            }
        },
    };
    n.drain(engine, settings, was, budgets).await
}

fn outcome(
    waves: Vec<String>,
    dry_run: DryRun,
    started: Instant,
    nodes: Vec<NodeOutcome>,
) -> DrainOutcome {
    DrainOutcome {
        dry_run,
        elapsed_ms: started.elapsed().as_millis() as u64,
        waves,
        nodes,
        conditions_not_written: Vec::new(),
        holds: Vec::new(),
        notifications: None,
    }
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
