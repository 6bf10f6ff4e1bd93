//! What the machine asks the driver to do.

use std::time::Duration;

use crate::drain::budgets::Key as BudgetKey;
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::NodeOutcome;
use crate::vocabulary::pod_key::PodKey;

/// A pod's eviction, as the machine asks for it.
#[derive(Debug)]
pub(crate) struct Eviction {
    pub(crate) key: PodKey,
    pub(crate) uid: String,
    /// The operator that takes the pod's eviction over, if one does
    /// (a KubeVirt VM's launcher, a Strimzi Kafka pod): a refusal may
    /// mean it has started.
    pub(crate) handled_by: Option<crate::policy::classify::HandledBy>,
    /// The budget whose change granted this retry (`Input::Budget`):
    /// the disruption is this node's to use.
    pub(crate) granted: Option<BudgetKey>,
    /// The pod's scheduling group (1.37's PodGroup), whose
    /// `disruptionMode` may make it one of a gang (crate::drain::evict::gang).
    pub(crate) group: Option<String>,
    /// The API lets the pod go whatever its budget says (it ended, has
    /// not started, is being deleted, or its node is shutting down and
    /// failing it): sent without waiting for the budget's turn.
    pub(crate) budget_free: bool,
}

#[derive(Debug)]
pub(crate) enum Effect {
    /// Evict this pod (or hold it without asking, its budget's turn not
    /// come: crate::drain::driver).
    Evict(Eviction),
    /// Wait until these claims' (namespace, name) volumes are detached
    /// from the node, at most `limit`.
    AwaitDetach {
        claims: Vec<(String, String)>,
        limit: Duration,
    },
    /// `--surge`: one more replica of this pod's Deployment, if it can.
    Surge {
        key: PodKey,
        /// The pod's controller: kind and name.
        owner: Option<(String, String)>,
        /// The budget that refused it.
        budget: BudgetKey,
    },
    /// Delete the pod, budgets bypassed (`--deadline`), with this grace period.
    Force {
        key: PodKey,
        uid: String,
        grace: i64,
    },
    WatchBudget(BudgetKey),
    Emit(Event),
    Finish(Box<NodeOutcome>),
}
