//! The drain engine: select nodes, snapshot and classify their pods,
//! cordon, then drain up to `--max-parallel` nodes at once, wave by wave.
//!
//! Each node's drain is a pure state machine (`machine`) driven by a thin
//! loop that performs its effects (`driver`); `engine` is the pipeline
//! around them, `preview` the drains that change nothing, `conclude` the
//! outcome they end with.

mod budget_queue;
mod conclude;
pub(crate) mod conditions;
pub(crate) mod cordon;
pub(crate) mod detach;
mod driver;
mod engine;
pub(crate) mod events;
pub(crate) mod evict;
pub(crate) mod kubevirt;
mod machine;
mod mirror;
pub(crate) mod outcome;
pub(crate) mod pdb_watch;
pub(crate) mod pod_key;
pub(crate) mod pod_watch;
pub(crate) mod prepare;
mod preview;
pub(crate) mod retry;
pub(crate) mod surge;

use std::time::Duration;

pub(crate) use engine::{prepare, prepare_sharing};
pub(crate) use outcome::DryRun;
use prepare::NodeSelection;

#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) nodes: NodeSelection,
    pub(crate) flags: crate::policy::classify::FilterFlags,
    /// `--grace-period`; `None` for the pod's own.
    pub(crate) grace_period: Option<i64>,
    /// `--timeout`; `None` for no limit.
    pub(crate) timeout: Option<Duration>,
    /// `--deadline`: then what is left is deleted, budgets bypassed.
    pub(crate) deadline: Option<Duration>,
    /// `--deadline-overrides-markers`.
    pub(crate) deadline_overrides_markers: bool,
    /// `--surge`.
    pub(crate) surge: bool,
    /// `--detach-timeout`; None with `--skip-wait-for-detach`.
    pub(crate) detach_wait: Option<Duration>,
    pub(crate) pod_selector: Option<String>,
    pub(crate) disable_eviction: bool,
    pub(crate) chunk_size: u32,
    pub(crate) dry_run: DryRun,
    pub(crate) max_parallel: usize,
    /// `--by-zone`: finish one zone's nodes before starting the next zone's.
    pub(crate) by_zone: bool,
    /// `--max-blocked-nodes`: stop starting nodes once more than this many
    /// could not be drained; `None` goes on, as kubectl drain does.
    pub(crate) max_blocked_nodes: Option<usize>,
    /// `--all-or-nothing`: if kubectl's filters refuse a pod on any selected
    /// node, change nothing anywhere.
    pub(crate) all_or_nothing: bool,
    /// Maintenance taints added at cordon (`--taint` and the plan's).
    pub(crate) taints: Vec<crate::policy::maintenance::TaintSpec>,
    /// Write the DrainInProgress and Drained node conditions (KEP-5683).
    pub(crate) node_conditions: bool,
    /// Labels added at cordon (`--exclude-from-load-balancers`).
    pub(crate) labels: Vec<(String, String)>,
    /// `--reason`, recorded on the node.
    pub(crate) reason: Option<String>,
    pub(crate) guards: crate::policy::guard::Guards,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum DrainError {
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
    /// A request failed for good; the source says how.
    #[error("{request}")]
    Api {
        request: String,
        #[source]
        source: kube::Error,
    },
    /// The object changed under every attempt to update it.
    #[error("{0}")]
    Conflict(String),
    /// A guard rail refused the selection; nothing was changed.
    #[error("{0}")]
    Guard(String),
}

impl DrainError {
    /// Errors in what the user asked for (exit 2) versus failures (exit 1).
    pub(crate) fn is_usage(&self) -> bool {
        matches!(
            self,
            DrainError::NodesNotFound(_) | DrainError::NoNodesMatch(_) | DrainError::Guard(_)
        )
    }
}
