//! What the machine hears: the answers of the API, the pods' and budgets'
//! changes, the timer and an interruption, each with the time it came at.
//! The I/O side (crate::drain::evict, crate::drain::pod_watch) speaks this
//! vocabulary; the machine imports nothing of it.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use tokio::time::Instant;

use crate::drain::budgets::{Budget, Key as BudgetKey};
use crate::policy::node_health::NodeDown;
use crate::vocabulary::outcome::Cause;
use crate::vocabulary::pod_key::PodKey;
use crate::vocabulary::warning::Warning;

/// The time of an input: monotonic for deadlines, wall-clock for pod
/// timestamps. One reading serves every decision an input leads to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Now {
    pub(crate) at: Instant,
    pub(crate) wall: Timestamp,
}

#[derive(Debug)]
pub(crate) enum Input {
    /// The API server answered the eviction of this pod (this uid).
    Answer {
        key: PodKey,
        uid: String,
        answer: Answer,
        /// The VM evacuation a refused virt-launcher eviction started.
        evacuation: Option<Cause>,
    },
    Pod(Change),
    Budget {
        key: BudgetKey,
        budget: Budget,
        /// How many of the pods it holds here may be retried now: the
        /// disruptions it allows that no other node's drain took
        /// (`retry_wanted` asks for them).
        grant: usize,
    },
    /// This budget cannot be watched (forbidden): its pods are retried on
    /// kubectl's timer instead.
    BudgetUnwatched(BudgetKey),
    /// The evicted pods' volumes detached from the node (Ok), or are
    /// still attached when the wait ended (why).
    Detached(Result<(), String>),
    /// What `--surge` did for this pod's workload: the Deployment surged,
    /// or why it cannot surge.
    Surged {
        key: PodKey,
        /// The Deployment surged; None when no surge was made now (its
        /// budget allows disruptions once its pods are healthy, the budget
        /// could not be read, or the Deployment changed under the scale-up):
        /// then it is decided again at the pod's next refusal.
        result: Result<Option<String>, String>,
    },
    /// The node was read again: down (its kubelet is not running), or not.
    NodeHealth(Option<NodeDown>),
    /// `next_wakeup` came.
    Tick,
    Interrupted,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// The pod is being deleted.
    Accepted,
    /// The pod's namespace is being deleted (403 NamespaceTerminating): the
    /// namespace controller removes the pod, so it is waited for as if
    /// evicted, as kubectl drain does.
    NamespaceTerminating,
    /// The pod (with this uid) no longer exists.
    Gone,
    /// A PodDisruptionBudget refuses it now (429 with a DisruptionBudget cause).
    PdbBlocked {
        pdb: String,
        /// The budget's own words (the DisruptionBudget cause).
        message: String,
        /// The answer's message, as kubectl prints the refusal.
        api_message: String,
        retry_after: Option<Duration>,
    },
    /// An eviction responder is at work on the pod's EvictionRequest
    /// (crate::drain::evict::request): asked about again later.
    Responding {
        responder: String,
        message: String,
        retry_after: Option<Duration>,
    },
    /// More than one PDB selects the pod (500).
    MultiplePdbs(String),
    /// Throttling or a server error: retry later.
    Retry {
        retry_after: Option<Duration>,
        message: String,
        /// 429 without a budget behind it (API priority and fairness):
        /// retried as long as the drain may take, never given up.
        throttled: bool,
    },
    /// RBAC: retrying will not help.
    Forbidden(String),
    /// Any other refusal that retrying will not change.
    Failed(String),
}

impl Answer {
    /// The HTTP code of the answer, for metrics (`5xx` for a server error
    /// or no answer, whose code is not kept).
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Answer::Accepted => "201",
            Answer::Responding { .. } => "202",
            Answer::NamespaceTerminating | Answer::Forbidden(_) => "403",
            Answer::Gone => "404",
            Answer::PdbBlocked { .. }
            | Answer::Retry {
                throttled: true, ..
            } => "429",
            Answer::MultiplePdbs(_) => "500",
            Answer::Retry { .. } => "5xx",
            Answer::Failed(_) => "4xx",
        }
    }
}

/// A change to the set of pods on the node.
#[derive(Debug)]
pub(crate) enum Change {
    /// A pod appeared or changed.
    Upsert(Box<Pod>),
    /// A pod (this uid) is gone.
    Gone { key: PodKey, uid: String },
    /// A request failed; the watch goes on after a backoff.
    Error(String),
    /// Watching is forbidden: from now on the pods are listed every
    /// `POLL_INTERVAL` (the warning says so, once).
    Polling(Warning),
}
