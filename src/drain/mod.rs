//! The drain engine: select nodes, snapshot and classify their pods,
//! cordon, then drain up to `--max-parallel` nodes at once, wave by wave.
//!
//! Each node's drain is a pure state machine (`machine`) driven by a thin
//! loop that performs its effects (`driver`); `engine` is the pipeline
//! around them, `preview` the drains that change nothing, `conclude` the
//! outcome they end with.

mod conclude;
mod cordon;
mod driver;
mod engine;
pub mod events;
pub mod evict;
pub mod kubevirt;
mod machine;
pub mod outcome;
pub mod pdb_watch;
pub mod pod_key;
pub mod pod_watch;
pub mod prepare;
mod preview;
pub mod retry;

use std::time::Duration;

use tokio::sync::watch;

use crate::client::Clients;
use crate::policy::plan::Plan;
pub use engine::{Prepared, prepare};
use events::Sink;
pub use outcome::{DrainOutcome, DryRun};
use prepare::NodeSelection;

pub struct Options {
    pub nodes: NodeSelection,
    pub flags: crate::policy::classify::FilterFlags,
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
    pub taints: Vec<crate::policy::maintenance::TaintSpec>,
    /// `--reason`, recorded on the node.
    pub reason: Option<String>,
    pub guards: crate::policy::guard::Guards,
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
