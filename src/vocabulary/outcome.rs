//! What a drain ended with, node by node and pod by pod: the data the report
//! renders (docs/report.md documents it as JSON).

use std::fmt;

use serde::Serialize;

use super::pod_key::PodKey;
use crate::policy::classify::{Refusal, SkipReason, WaitReason};
use crate::policy::node_health::NodeDown;

/// `--dry-run`: nothing, what the plan says, or also what the API server says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum DryRun {
    #[default]
    None,
    Client,
    Server,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum NodeStatus {
    /// Every pod the plan evicts or waits for is gone.
    Drained,
    /// kubectl's filters refuse some pod; nothing on the node was evicted.
    Refused,
    /// A deadline passed with pods still there.
    TimedOut,
    /// Stopped by an error the drain cannot retry (permissions, API).
    Failed,
    Interrupted,
    /// Never started: too many other nodes could not be drained
    /// (`--max-blocked-nodes`). Cordoned, nothing evicted.
    NotStarted,
    /// Nothing was changed: the plan of a dry run.
    DryRun,
}

impl std::fmt::Display for NodeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl NodeStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            NodeStatus::Drained => "drained",
            NodeStatus::Refused => "refused",
            NodeStatus::TimedOut => "timed out",
            NodeStatus::Failed => "failed",
            NodeStatus::Interrupted => "interrupted",
            NodeStatus::NotStarted => "not started",
            NodeStatus::DryRun => "dry run",
        }
    }
}

/// What took a pod's eviction over ([`Cause::HandedOver`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Handler {
    /// KubeVirt, evacuating the VM of a virt-launcher pod whose eviction
    /// its budget refused (or an external controller stopping it).
    Kubevirt,
    /// The Strimzi Cluster Operator, rolling a Kafka or ZooKeeper pod its
    /// Drain Cleaner refused to evict.
    Strimzi,
    /// An eviction responder named in the pod's EvictionRequest.
    Responder,
}

/// Why a pod is still on its node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub(crate) enum Cause {
    /// The eviction API refused: the PDB allows no disruption now.
    #[serde(rename_all = "camelCase")]
    Pdb {
        name: String,
        disruptions_allowed: Option<i32>,
        current_healthy: Option<i32>,
        desired_healthy: Option<i32>,
        expected_pods: Option<i32>,
        message: String,
    },
    /// Something took the pod's eviction over and moves the pod itself:
    /// KubeVirt migrating its VM, the Strimzi Cluster Operator rolling a
    /// Kafka pod its Drain Cleaner was handed, an eviction responder
    /// (KEP-4563) at a live migration or a switchover. Which kind, who,
    /// for what (may be empty), and what it is doing (its own words, for a
    /// responder; may be empty).
    HandedOver {
        handler: Handler,
        operator: String,
        subject: String,
        progress: String,
    },
    /// More than one PDB selects the pod; the eviction API refuses it.
    MultiplePdbs { message: String },
    /// A kubectl filter refuses the pod.
    Refused { refusal: Refusal, message: String },
    /// A rule or marker says to wait for the pod to finish on its own.
    WaitingForCompletion { reason: WaitReason },
    /// Its wave never started: an earlier wave did not finish.
    WaitingForEarlierWave { wave: String },
    /// Evicted; still terminating.
    #[serde(rename_all = "camelCase")]
    Terminating {
        seconds: i64,
        grace_period_seconds: Option<i64>,
    },
    /// Terminating and held by finalizers.
    Finalizers { finalizers: Vec<String> },
    /// Its namespace is being deleted; the namespace controller and its
    /// finalizers decide when the pod goes.
    NamespaceTerminating { namespace: String },
    /// The API server failed the eviction and retries ran out or time did.
    ApiError { message: String },
    /// RBAC refused a request the drain needs.
    Forbidden { message: String },
    /// Never sent an eviction (interrupted or out of time first).
    NotStarted,
    /// Evicted, and its node's kubelet is not running: nothing will stop
    /// it (Ready `ready` since `since`).
    #[serde(rename_all = "camelCase")]
    NodeNotReady {
        node: String,
        ready: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        since: Option<String>,
    },
}

impl Cause {
    /// Does it only follow from another cause (an earlier wave that did
    /// not finish, a run that stopped before the eviction)? The report
    /// names the cause first.
    pub(crate) fn is_consequence(&self) -> bool {
        matches!(
            self,
            Cause::NotStarted | Cause::WaitingForEarlierWave { .. }
        )
    }

    /// Does something else move the pod (KubeVirt, an operator, an
    /// eviction responder)? Progress, said as waiting, not a block.
    pub(crate) fn is_progress(&self) -> bool {
        matches!(self, Cause::HandedOver { .. })
    }

    /// Its `kind` as the report's JSON names it (a metric's label).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Cause::Pdb { .. } => "pdb",
            Cause::HandedOver { .. } => "handedOver",
            Cause::MultiplePdbs { .. } => "multiplePdbs",
            Cause::Refused { .. } => "refused",
            Cause::WaitingForCompletion { .. } => "waitingForCompletion",
            Cause::WaitingForEarlierWave { .. } => "waitingForEarlierWave",
            Cause::Terminating { .. } => "terminating",
            Cause::Finalizers { .. } => "finalizers",
            Cause::NamespaceTerminating { .. } => "namespaceTerminating",
            Cause::ApiError { .. } => "apiError",
            Cause::Forbidden { .. } => "forbidden",
            Cause::NotStarted => "notStarted",
            Cause::NodeNotReady { .. } => "nodeNotReady",
        }
    }
}

/// What still held a pod that `--deadline` deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Forced {
    /// Blocked by this cause.
    Held(Cause),
    /// Waited for (a rule or marker), not finished.
    Waiting(WaitReason),
    /// Not evicted yet.
    NotEvictedYet,
}

/// A field the report gives in words (its `Display`, worded by `ui/`).
fn in_words<S: serde::Serializer, T: std::fmt::Display>(t: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(t)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub(crate) enum PodResult {
    /// Evicted (or deleted) and gone.
    Evicted,
    /// Deleted at `--deadline`, budgets bypassed, and gone; `why` in words.
    Forced {
        #[serde(serialize_with = "in_words")]
        why: Forced,
    },
    /// Waited for and gone (finished or deleted by others).
    Completed,
    /// Gone before the drain evicted it.
    GoneByItself,
    /// Left alone by design.
    Skipped { reason: SkipReason },
    /// A dry run's verdict: would be evicted in this wave.
    WouldEvict,
    /// A server dry run refused it right now.
    WouldBlock { cause: Cause },
    /// Still on the node.
    Remaining { cause: Cause },
    /// On a node whose kubelet is down, its deletion asked `seconds` ago:
    /// counted as gone (`--lost-pod-timeout`), with what it still holds.
    Lost {
        seconds: i64,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        stuck: Vec<Stuck>,
    },
}

impl PodResult {
    /// Its `state` as the report's JSON names it (a metric's label).
    pub(crate) fn state(&self) -> &'static str {
        match self {
            PodResult::Evicted => "evicted",
            PodResult::Forced { .. } => "forced",
            PodResult::Completed => "completed",
            PodResult::GoneByItself => "goneByItself",
            PodResult::Skipped { .. } => "skipped",
            PodResult::WouldEvict => "wouldEvict",
            PodResult::WouldBlock { .. } => "wouldBlock",
            PodResult::Remaining { .. } => "remaining",
            PodResult::Lost { .. } => "lost",
        }
    }
}

/// What a pod counted as gone on a dead node still holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub(crate) enum Stuck {
    /// Its StatefulSet makes no replacement until the pod object is gone.
    StatefulSet { name: String },
    /// Its claim's volume is still attached to the node.
    #[serde(rename_all = "camelCase")]
    Volume {
        claim: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        volume: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        attachment: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodOutcome {
    /// `namespace/name`.
    pub(crate) pod: PodKey,
    pub(crate) priority: i32,
    /// Its controller's kind (`ReplicaSet`, `StatefulSet`, ...): what the
    /// hints are decided from; absent for a bare pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) wave: Option<String>,
    pub(crate) result: PodResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) warning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WaveOutcome {
    pub(crate) name: String,
    pub(crate) pods: usize,
    /// Milliseconds from the node's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) started_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) finished_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeOutcome {
    pub(crate) node: String,
    pub(crate) status: NodeStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
    /// Was the node unschedulable before this drain?
    pub(crate) was_cordoned: bool,
    /// Never cordoned by this drain: it stopped before the node's turn (a
    /// drain paced by `--max-unavailable` or a gate cordons at each turn).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) not_cordoned: bool,
    pub(crate) elapsed_ms: u64,
    pub(crate) waves: Vec<WaveOutcome>,
    pub(crate) pods: Vec<PodOutcome>,
    /// Every PodDisruptionBudget that refused an eviction on this node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) budget_holds: Vec<BudgetHold>,
    /// The node's kubelet is not running (as last read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) not_ready: Option<NodeDown>,
}

/// A PodDisruptionBudget that held up a node's drain: the pods whose
/// evictions it refused, and for how long.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BudgetHold {
    /// `namespace/name`.
    pub(crate) budget: String,
    pub(crate) pods: Vec<PodKey>,
    /// Milliseconds during which it refused at least one of them.
    pub(crate) held_ms: u64,
    /// It still refused one when the node's drain ended.
    pub(crate) holding: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DrainOutcome {
    pub(crate) dry_run: DryRun,
    pub(crate) elapsed_ms: u64,
    /// The plan's waves in the order they run.
    pub(crate) waves: Vec<String>,
    pub(crate) nodes: Vec<NodeOutcome>,
    /// Nodes whose DrainInProgress/Drained conditions could not be written
    /// last time: they may show a stage that is over (exit 1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) conditions_not_written: Vec<String>,
    /// What the drain waited on besides pods (`--window`, alerts,
    /// `--announce`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) holds: Vec<HoldRecord>,
    /// What `--notify` came to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) notifications: Option<Delivered>,
}

impl DrainOutcome {
    /// A node failed (an error the drain cannot retry), or a condition it
    /// wrote may now say a stage that is over: exit 1, and a run that
    /// failed for its notifications (a blocked node is not a failure).
    pub(crate) fn failed(&self) -> bool {
        self.nodes.iter().any(|n| n.status == NodeStatus::Failed)
            || !self.conditions_not_written.is_empty()
    }
}

/// What the notifications came to, for the report.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Delivered {
    pub(crate) sent: usize,
    pub(crate) failed: usize,
    /// Each endpoint that failed, and its last error.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) failures: Vec<String>,
}

/// What a run waited on besides pods (alerts, a window, `--announce`, a
/// hook), for which node or the whole run, why, from when and how long.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HoldRecord {
    /// `alerts`, `window`, `announce`, or a hook's annotation.
    pub(crate) what: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    /// Why, as last said.
    pub(crate) reason: String,
    /// Milliseconds from the run's start.
    pub(crate) started_ms: u64,
    pub(crate) lasted_ms: u64,
    /// Still holding when the run ended.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) standing: bool,
}

/// What `plan --simulate` adds to a drain's outcome: where the copy came
/// from, and what became of the pods the drain displaced.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Prediction {
    /// `cluster`, or the dump file's path.
    pub(crate) source: String,
    /// Wall time the prediction took.
    pub(crate) computed_ms: u64,
    /// Set when no `--timeout` was given: how much simulated time was followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) horizon_ms: Option<u64>,
    /// Every pod the drain's evictions made the controllers create.
    pub(crate) replacements: Vec<Replacement>,
    /// Pods a dead node keeps, and how long until each runs elsewhere with
    /// and without `--node-shut-down`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) recovery: Vec<Recovery>,
}

impl Prediction {
    /// What the drain ran on, for a sentence: "the cluster" or the file.
    pub(crate) fn copy_of(&self) -> &str {
        copy_of(&self.source)
    }
}

/// A prediction's `source` for a sentence: "the cluster" or the file.
pub(crate) fn copy_of(source: &str) -> &str {
    if source == "cluster" {
        "the cluster"
    } else {
        source
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Replacement {
    /// namespace/name
    pub(crate) pod: String,
    /// `Kind/name` of its controller.
    pub(crate) owner: String,
    /// Where it would run; absent when it would stay Pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    /// The scheduler's reason when it would stay Pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pending: Option<String>,
}

/// How long a prediction follows each path of a dead node's pods: past the
/// attach/detach controller's 6-minute `maxWaitForUnmountDuration`.
pub(crate) const RECOVERY_HORIZON: std::time::Duration = std::time::Duration::from_secs(600);

/// One pod a dead node keeps, and when it ran again elsewhere in a
/// prediction (crate::simulate::recovery).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Recovery {
    /// `namespace/name`.
    pub(crate) pod: String,
    pub(crate) node: String,
    /// `StatefulSet/db`, or the claims whose volume stays attached.
    pub(crate) holds: String,
    /// From the drain's start to its successor's Ready, the node left down;
    /// none within the horizon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) soft_ms: Option<u64>,
    /// From the out-of-service taint to its successor's Ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hard_ms: Option<u64>,
    /// Where its successor runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) on: Option<String>,
}

/// Outcomes built by hand, for the tests of what renders them.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    pub(crate) fn pod(ns: &str, name: &str, result: PodResult) -> PodOutcome {
        PodOutcome {
            pod: PodKey::new(ns, name),
            priority: 0,
            owner: None,
            wave: None,
            result,
            warning: None,
        }
    }

    pub(crate) fn remaining(ns: &str, name: &str, cause: Cause) -> PodOutcome {
        pod(ns, name, PodResult::Remaining { cause })
    }

    pub(crate) fn node(name: &str, status: NodeStatus, pods: Vec<PodOutcome>) -> NodeOutcome {
        NodeOutcome {
            node: name.into(),
            status,
            message: None,
            was_cordoned: false,
            not_cordoned: false,
            elapsed_ms: 0,
            waves: Vec::new(),
            pods,
            budget_holds: Vec::new(),
            not_ready: None,
        }
    }

    pub(crate) fn drain(nodes: Vec<NodeOutcome>) -> DrainOutcome {
        DrainOutcome {
            dry_run: DryRun::None,
            elapsed_ms: 0,
            waves: Vec::new(),
            nodes,
            conditions_not_written: Vec::new(),
            holds: Vec::new(),
            notifications: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_and_a_result_name_themselves_as_the_report_does() {
        let text = String::new;
        let causes = [
            Cause::Pdb {
                name: text(),
                disruptions_allowed: None,
                current_healthy: None,
                desired_healthy: None,
                expected_pods: None,
                message: text(),
            },
            Cause::HandedOver {
                handler: Handler::Strimzi,
                operator: text(),
                subject: text(),
                progress: text(),
            },
            Cause::MultiplePdbs { message: text() },
            Cause::Refused {
                refusal: Refusal::Unmanaged,
                message: text(),
            },
            Cause::WaitingForCompletion {
                reason: WaitReason::DrainLabel,
            },
            Cause::WaitingForEarlierWave { wave: text() },
            Cause::Terminating {
                seconds: 0,
                grace_period_seconds: None,
            },
            Cause::Finalizers { finalizers: vec![] },
            Cause::NamespaceTerminating { namespace: text() },
            Cause::ApiError { message: text() },
            Cause::Forbidden { message: text() },
            Cause::NotStarted,
            Cause::NodeNotReady {
                node: text(),
                ready: text(),
                since: None,
            },
        ];
        for c in &causes {
            assert_eq!(serde_json::to_value(c).unwrap()["kind"], c.kind());
        }
        let results = [
            PodResult::Evicted,
            PodResult::Forced {
                why: Forced::NotEvictedYet,
            },
            PodResult::Completed,
            PodResult::GoneByItself,
            PodResult::Skipped {
                reason: SkipReason::DrainLabel,
            },
            PodResult::WouldEvict,
            PodResult::WouldBlock {
                cause: Cause::NotStarted,
            },
            PodResult::Remaining {
                cause: Cause::NotStarted,
            },
            PodResult::Lost {
                seconds: 0,
                stuck: vec![],
            },
        ];
        for r in &results {
            assert_eq!(serde_json::to_value(r).unwrap()["state"], r.state());
        }
    }
}

/// How a drain that raised no error ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// It ran (or previewed); the outcome says node by node how it went.
    Finished(DrainOutcome),
    /// It stopped before anything changed.
    Stopped(Stopped),
}

/// Why a drain stopped before anything changed, without an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// `-l` matched no node: kubectl drain exits 0 then, and loops over
    /// pools rely on it.
    NoNodesMatch(String),
    /// The person at the terminal said no.
    Declined,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stopped::NoNodesMatch(selector) => write!(
                f,
                "No nodes match the selector {selector:?}: nothing to drain."
            ),
            Stopped::Declined => f.write_str("nothing was changed"),
        }
    }
}
