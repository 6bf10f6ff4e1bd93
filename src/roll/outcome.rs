//! What a roll ended with, node by node: each phase and how long it took,
//! how long the node was out of service, and its drain's own outcome (the
//! report renders it; docs/report.md documents it as JSON).

use serde::Serialize;

use super::phase::Phase;
use crate::policy::node_health::NodeDown;
pub(crate) use crate::vocabulary::job_status::JobStatus as RollStatus;
use crate::vocabulary::outcome::NodeOutcome;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PhaseTime {
    pub(crate) phase: Phase,
    /// Milliseconds from the roll's start.
    pub(crate) started_ms: u64,
    pub(crate) took_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeRoll {
    pub(crate) node: String,
    pub(crate) status: RollStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
    /// The phase an earlier run of this roll had reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resumed_from: Option<Phase>,
    pub(crate) phases: Vec<PhaseTime>,
    /// From its cordon to its uncordon (or to the end, if never returned).
    pub(crate) out_of_service_ms: u64,
    /// Blocked because it did not come back: what says its kubelet is down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) not_ready: Option<NodeDown>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) drain: Option<NodeOutcome>,
}

impl NodeRoll {
    pub(crate) fn new(node: &str, status: RollStatus, message: Option<String>) -> Self {
        NodeRoll {
            node: node.to_string(),
            status,
            message,
            resumed_from: None,
            phases: Vec::new(),
            out_of_service_ms: 0,
            not_ready: None,
            drain: None,
        }
    }

    pub(crate) fn took(&self, phase: Phase) -> Option<u64> {
        self.phases
            .iter()
            .filter(|p| p.phase == phase)
            .map(|p| p.took_ms)
            .reduce(|a, b| a + b)
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RollOutcome {
    /// The roll's identity: the same command resumes the same roll.
    pub(crate) roll: String,
    pub(crate) elapsed_ms: u64,
    pub(crate) nodes: Vec<NodeRoll>,
    /// Nodes whose DrainInProgress/Drained conditions could not be written
    /// last time: they may show a stage that is over (exit 1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) conditions_not_written: Vec<String>,
    /// What the roll waited on besides pods: alerts, windows, hooks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) holds: Vec<crate::pool::hold_log::HoldRecord>,
    /// What `--notify` delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) notifications: Option<crate::notify::Delivered>,
}

impl RollOutcome {
    /// A node failed, or a condition it wrote may now say a stage that is
    /// over (crate::cli::exit decides the exit code from this).
    pub(crate) fn failed(&self) -> bool {
        self.nodes.iter().any(|n| n.status == RollStatus::Failed)
            || !self.conditions_not_written.is_empty()
    }
}
