//! The drain engine: select nodes, decide every pod's fate, cordon, then
//! drain up to `--max-parallel` nodes at once, wave by wave.

pub mod events;
pub mod evict;
pub mod kubevirt;
mod node;
pub mod outcome;
pub mod pdb_watch;
pub mod pod_watch;
pub mod prepare;
pub mod retry;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::{Patch, PatchParams};
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;

use crate::client::Clients;
use crate::plan::Plan;
use events::{Event, Sink, emit};
use outcome::{DrainOutcome, NodeOutcome, NodeStatus};
use prepare::{Classifier, NodeSelection};

/// Evictions in flight across all nodes at once.
const GLOBAL_IN_FLIGHT: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DryRun {
    #[default]
    None,
    Client,
    Server,
}

impl DryRun {
    pub fn as_str(self) -> &'static str {
        match self {
            DryRun::None => "none",
            DryRun::Client => "client",
            DryRun::Server => "server",
        }
    }
}

pub struct Options {
    pub nodes: NodeSelection,
    pub flags: crate::classify::FilterFlags,
    /// `--grace-period`; `None` for the pod's own.
    pub grace_period: Option<i64>,
    /// `--timeout`; `None` for no limit.
    pub timeout: Option<Duration>,
    pub pod_selector: Option<String>,
    pub disable_eviction: bool,
    pub chunk_size: u32,
    pub dry_run: DryRun,
    pub max_parallel: usize,
    /// Maintenance taints added at cordon (`--taint` and the plan's).
    pub taints: Vec<crate::maintenance::TaintSpec>,
    /// `--reason`, recorded on the node.
    pub reason: Option<String>,
    pub guards: crate::guard::Guards,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DrainError {
    #[error("nodes not found: {}", .0.join(", "))]
    NodesNotFound(Vec<String>),
    #[error("no nodes match the selector {0:?}")]
    NoNodesMatch(String),
    #[error("{message}\n  the drain needs permission to {verb} {resource}{}", namespace.as_ref().map(|n| format!(" in namespace {n}")).unwrap_or_default())]
    Forbidden {
        verb: String,
        resource: String,
        namespace: Option<String>,
        message: String,
    },
    #[error("{0}")]
    Api(String),
    /// A guard rail refused the selection; nothing was changed.
    #[error("{0}")]
    Guard(String),
}

impl DrainError {
    /// Errors in what the user asked for (exit 2) versus failures (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            DrainError::NodesNotFound(_) | DrainError::NoNodesMatch(_) | DrainError::Guard(_)
        )
    }
}

/// What every node's drain shares.
pub struct Engine {
    pub clients: Clients,
    pub classifier: Classifier,
    pub options: Options,
    pub pdbs: pdb_watch::PdbWatches,
    pub slots: Arc<Semaphore>,
    pub events: Sink,
    /// When the drain began changing things; `--timeout` counts from here.
    pub started: OnceLock<Instant>,
    pub interrupt: watch::Receiver<bool>,
}

impl Engine {
    pub fn deadline(&self) -> Option<Instant> {
        let start = *self.started.get()?;
        self.options
            .timeout
            .filter(|t| !t.is_zero())
            .map(|t| start + t)
    }
}

fn unschedulable(n: &Node) -> bool {
    n.spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false)
}

/// Cordons a node, adds the maintenance taints and writes the record of
/// what changed (crate::maintenance), before anything is evicted. Retries
/// when the node changed underneath (409). Returns whether it was
/// unschedulable before this maintenance began (from the record when a drain
/// is resumed), and whether it is unschedulable already now.
async fn cordon(engine: &Engine, node: &Node, dry_run: bool) -> Result<(bool, bool), DrainError> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let api: Api<Node> = Api::all(engine.clients.main.clone());
    let params = PatchParams {
        dry_run,
        ..PatchParams::default()
    };
    let now = crate::sandbox::clock::now_rfc3339();
    let mut current = node.clone();
    for _ in 0..5 {
        let was = crate::maintenance::record_of(&current)
            .map_or_else(|| unschedulable(&current), |r| r.was_unschedulable);
        let now_cordoned = unschedulable(&current);
        let Some(patch) = crate::maintenance::cordon_patch(
            &current,
            &engine.options.taints,
            engine.options.reason.as_deref(),
            &now,
        ) else {
            return Ok((was, now_cordoned));
        };
        let patch = Patch::Merge(patch);
        match retry::with_retries(
            || api.patch(&name, &params, &patch),
            prepare::warn("cordoning a node"),
        )
        .await
        {
            Ok(_) => return Ok((was, now_cordoned)),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                current = retry::with_retries(|| api.get(&name), prepare::warn("reading a node"))
                    .await
                    .map_err(|e| prepare::api_error("get", "nodes", None, &e))?;
            }
            Err(e) => return Err(prepare::api_error("patch", "nodes", None, &e)),
        }
    }
    Err(DrainError::Api(format!(
        "node {name} kept changing while it was being cordoned"
    )))
}

/// Nodes found, pods listed and classified: everything decided, nothing
/// changed yet.
pub struct Prepared {
    engine: Arc<Engine>,
    listed: Vec<(Node, String, Vec<k8s_openapi::api::core::v1::Pod>)>,
}

/// Finds the nodes and lists and classifies their pods. Makes no change.
pub async fn prepare(
    clients: Clients,
    plan: Plan,
    options: Options,
    events: Sink,
    interrupt: watch::Receiver<bool>,
) -> Result<Prepared, DrainError> {
    let nodes = prepare::resolve_nodes(&clients.main, &options.nodes).await?;
    if options.dry_run == DryRun::None {
        let view = prepare::cluster_view(&clients.main, &options.guards, nodes.len()).await?;
        crate::guard::check(&options.guards, &view, &nodes).map_err(DrainError::Guard)?;
    }
    // Everything the filters need, for every node, before anything changes.
    let mut listed = Vec::new();
    for n in &nodes {
        let name = n.metadata.name.clone().unwrap_or_default();
        let pods = prepare::list_pods(
            &clients.main,
            &name,
            options.pod_selector.as_deref(),
            options.chunk_size,
        )
        .await?;
        listed.push((n.clone(), name, pods));
    }
    let all_pods: Vec<&k8s_openapi::api::core::v1::Pod> =
        listed.iter().flat_map(|(_, _, p)| p.iter()).collect();
    let daemonsets = prepare::daemonsets(&clients.main, &all_pods).await?;
    let (namespace_labels, terminating_namespaces) = prepare::namespaces(&clients.main).await?;
    let engine = Arc::new(Engine {
        pdbs: pdb_watch::PdbWatches::new(clients.main.clone()),
        clients,
        classifier: Classifier {
            plan,
            flags: options.flags.clone(),
            namespace_labels,
            terminating_namespaces,
            daemonsets,
        },
        slots: Arc::new(Semaphore::new(GLOBAL_IN_FLIGHT)),
        events,
        started: OnceLock::new(),
        interrupt,
        options,
    });
    Ok(Prepared { engine, listed })
}

impl Prepared {
    /// Every pod listed on the selected nodes.
    pub fn pods(&self) -> Vec<k8s_openapi::api::core::v1::Pod> {
        self.listed
            .iter()
            .flat_map(|(_, _, p)| p.iter().cloned())
            .collect()
    }

    /// Does kubectl's filter refuse a pod on some selected node?
    pub fn refused(&self) -> bool {
        self.listed.iter().any(|(_, _, pods)| {
            pods.iter().any(|p| {
                matches!(
                    self.engine.classifier.classify(p),
                    crate::classify::Disposition::Refuse { .. }
                )
            })
        })
    }

    /// What the drain would do, from what was listed: no request is made.
    pub fn preview(&self) -> DrainOutcome {
        let nodes = self
            .listed
            .iter()
            .map(|(node, name, pods)| {
                node::NodeRun::new(&self.engine, name).plan(pods.clone(), unschedulable(node))
            })
            .collect();
        DrainOutcome {
            dry_run: "client".into(),
            elapsed_ms: 0,
            nodes,
        }
    }

    /// Carries the drain out (or, for dry runs and refusals, reports).
    pub async fn execute(self) -> Result<DrainOutcome, DrainError> {
        let refused = self.refused();
        let Prepared { engine, listed } = self;
        let started = Instant::now();
        let _ = engine.started.set(started);
        // kubectl's filters, for every node, before anything changes: a refused
        // pod anywhere stops the whole drain with nothing cordoned or evicted.
        if refused || engine.options.dry_run != DryRun::None {
            let mut out = Vec::new();
            for (node, name, pods) in listed {
                let run = node::NodeRun::new(&engine, &name);
                out.push(match engine.options.dry_run {
                    DryRun::None => run.refuse(pods, unschedulable(&node)),
                    DryRun::Client => run.plan(pods, unschedulable(&node)),
                    DryRun::Server => {
                        cordon(&engine, &node, true).await?;
                        run.dry_run_server(pods, unschedulable(&node)).await
                    }
                });
            }
            return Ok(DrainOutcome {
                dry_run: engine.options.dry_run.as_str().into(),
                elapsed_ms: started.elapsed().as_millis() as u64,
                nodes: out,
            });
        }

        // Cordon every selected node first, as kubectl does.
        let mut was_cordoned = Vec::new();
        for (node, name, _) in &listed {
            let (was, already) = cordon(&engine, node, false).await?;
            was_cordoned.push(was);
            emit(
                &engine.events,
                Event::Cordoned {
                    node: name.clone(),
                    already,
                },
            );
        }

        let jobs = listed
            .into_iter()
            .zip(was_cordoned)
            .map(|((_, name, _), was)| {
                let engine = engine.clone();
                async move { drain_one(&engine, &name, was).await }
            });
        // `buffered` keeps the order the nodes were given in.
        let results: Vec<NodeOutcome> = futures::stream::iter(jobs)
            .buffered(engine.options.max_parallel.max(1))
            .collect()
            .await;
        Ok(DrainOutcome {
            dry_run: "none".into(),
            elapsed_ms: started.elapsed().as_millis() as u64,
            nodes: results,
        })
    }
}

/// Runs a whole drain. Validation of flags and plan happened before.
pub async fn run(
    clients: Clients,
    plan: Plan,
    options: Options,
    events: Sink,
    interrupt: watch::Receiver<bool>,
) -> Result<DrainOutcome, DrainError> {
    prepare(clients, plan, options, events, interrupt)
        .await?
        .execute()
        .await
}

async fn drain_one(engine: &Arc<Engine>, name: &str, was_cordoned: bool) -> NodeOutcome {
    let run = node::NodeRun::new(engine, name);
    let mut watch = pod_watch::PodWatch::start(
        engine.clients.main.clone(),
        name,
        engine.options.pod_selector.as_deref(),
        engine.options.chunk_size,
    );
    let mut interrupt = engine.interrupt.clone();
    let deadline = engine
        .deadline()
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400 * 365));
    let initial = tokio::select! {
        r = watch.initial() => r,
        () = tokio::time::sleep_until(deadline) => Err("timed out listing the node's pods".into()),
        _ = interrupt.changed() => Err("interrupted".into()),
    };
    match initial {
        Ok(pods) => run.run(watch, pods, was_cordoned).await,
        Err(message) => NodeOutcome {
            node: name.to_string(),
            status: NodeStatus::Failed,
            message: Some(message),
            was_cordoned,
            elapsed_ms: 0,
            waves: Vec::new(),
            pods: Vec::new(),
        },
    }
}
