//! One pod of the node's drain, and where it stands.

use k8s_openapi::api::core::v1::Pod;
use tokio::time::Instant;

use crate::drain::budgets::Key as BudgetKey;
use crate::policy::classify::WaitReason;
use crate::vocabulary::outcome::{Cause, Forced, PodResult};

#[derive(Debug, Clone)]
pub(super) enum State {
    Queued,
    InFlight,
    /// Evicted, waiting for it to go.
    Terminating,
    Blocked {
        cause: Cause,
        retry_at: Option<Instant>,
        budget: Option<BudgetKey>,
    },
    /// Waited for, never evicted.
    Waiting(WaitReason),
    Done(PodResult),
}

pub(super) struct Member {
    /// Boxed: a pod is over 2 KiB inline, and the members' B-tree nodes
    /// hold eleven members each, most of them empty slots.
    pub(super) pod: Box<Pod>,
    pub(super) wave: usize,
    pub(super) state: State,
    pub(super) evicted: bool,
    /// Its EvictionRequest was made (a responder may be at work on it): if
    /// the pod goes, the request evicted it.
    pub(super) requested: bool,
    pub(super) attempts: u32,
    /// What the report notes about the pod (kubectl's warning, or what
    /// `--surge` could not do for its workload).
    pub(super) warning: Option<String>,
    /// The cause the listeners were last told of (one line per change of
    /// cause, not one per retry).
    pub(super) told: Option<Cause>,
    /// The budget refusing this pod's eviction, since when.
    pub(super) held: Option<(BudgetKey, Instant)>,
    /// Deleted at the deadline, and why it was still there.
    pub(super) forced: Option<Forced>,
    /// `--surge` was asked for this pod's workload.
    pub(super) surge_asked: bool,
    /// A plan rule asks to surge this pod's workload.
    pub(super) surge: bool,
}

impl Member {
    pub(super) fn done(&self) -> bool {
        matches!(self.state, State::Done(_))
    }
}
