//! What the operator should know that is not a pod's progress: said before
//! anything changes (a drain's plan), or as the drain or a roll meets it.
//! Plain data; `ui/words/warning.rs` words it.

use std::time::Duration;

use super::pod_key::PodKey;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Warning {
    // Before anything changes.
    /// Pods carry drain markers that kubectl drain ignores: this drain
    /// leaves them or waits for them. Each pod with what its marker does.
    HeldByMarkers(Vec<(PodKey, String)>),
    /// No schedulable node would be left once the selected nodes are
    /// cordoned: the pods evicted stay Pending.
    LeftPending(Vec<PodKey>),
    /// Pods to evict use claims: a node waits for their volumes to detach.
    WaitsForDetach { limit: Duration },
    /// The node's kubelet is not running: what the drain does about it
    /// (`lost_after`: `--lost-pod-timeout`, None when off).
    NodeDown {
        node: String,
        down: Box<crate::policy::node_health::NodeDown>,
        lost_after: Option<Duration>,
    },
    /// `--deadline`: what is left then is deleted, budgets bypassed.
    Deadline {
        after: Duration,
        overrides_markers: bool,
    },

    // A permission the drain does without, and what it does instead.
    /// Nodes cannot be listed: whether one stays schedulable is unknown.
    CannotListNodes { error: String },
    /// Claims cannot be read: volumes are not waited for.
    CannotReadClaims { error: String },
    /// VirtualMachineInstances cannot be read: a VM's launcher held by its
    /// budget is not known to be migrating.
    CannotReadVms { error: String },
    /// VolumeAttachments cannot be listed: volumes are not waited for.
    CannotListAttachments { error: String },
    /// PersistentVolumes cannot be read: the detach wait follows their
    /// VolumeAttachments only, not the Node's `status.volumesAttached`.
    CannotReadVolumes { error: String },
    /// Pods cannot be watched: each node's pods are listed every `every`.
    PodsPolled { error: String, every: Duration },
    /// Nodes cannot be watched (a roll): they are listed every `every`.
    NodesPolled { error: String, every: Duration },
    /// Budgets cannot be watched: refused evictions are retried every `every`.
    BudgetsUnwatched { error: String, every: Duration },
    /// The drain's node conditions could not be written (the drain goes on).
    ConditionsNotWritten {
        node: String,
        error: String,
        /// Refused by RBAC: patch on nodes/status is missing.
        forbidden: bool,
    },

    // As the drain goes.
    /// A request failed and is retried.
    Retrying {
        what: String,
        error: String,
        /// Try n of m, when the tries are counted.
        try_of: Option<(u32, u32)>,
    },
    /// A request has had no answer for this long (crate::client::silence).
    NoAnswerYet { what: String, seconds: u64 },
    /// A node's pods are gone; their volumes are still attached.
    AwaitingDetach {
        node: String,
        /// (PersistentVolume, what holds it there: its VolumeAttachment or
        /// its entry in the Node's `status.volumesAttached`) pairs.
        volumes: Vec<(String, String)>,
    },
    /// `--surge` could not scale a Deployment back.
    SurgeNotUndone { problem: String },

    // A roll's.
    /// A warning that concerns one node of a roll.
    OnNode { node: String, warning: Box<Warning> },
    /// A node's roll lock could not be released.
    LockNotReleased { node: String, error: String },
    /// A roll run by a Job cannot read its own Job: `kubectl maintain
    /// abort` is not heard (the roll goes on).
    AbortUnheard { error: String },
    /// kured's lock could not be given back.
    KuredLockNotReturned { error: String },
    /// A notification endpoint failed (said once per endpoint; the report
    /// counts every failure). `endpoint` without its secret path.
    NotificationFailed { endpoint: String, error: String },
    /// A hook with `onTimeout: continue` did not answer in time.
    HookTimedOut {
        node: String,
        point: &'static str,
        annotation: String,
        why: String,
    },
    /// The metrics could not be pushed to `--pushgateway` (said once).
    MetricsNotPushed { error: String },
    /// A node's lock was taken over from another holder: expired (not
    /// renewed for `since` of its `lasts` seconds), or a process of this
    /// machine that no longer runs.
    TookOverLock {
        node: String,
        holder: String,
        expired: Option<(i64, i64)>,
    },
    /// The budgets of a rolled node's pods are still not healthy: the roll
    /// goes on.
    BudgetsStillUnhealthy {
        node: String,
        after: Duration,
        budgets: Vec<String>,
    },
    /// The roll stopped taking nodes out.
    /// The run took no more nodes: `drain` or `roll`, and why.
    RunStopped { verb: &'static str, why: String },
    /// A paced drain (a gate, `--max-unavailable`) cordons each node at
    /// its turn, where kubectl drain cordons every node first.
    CordonsAtTurn { by: &'static str },

    // Kubernetes 1.37's EvictionRequest API (crate::drain::evict::request).
    /// Pods are evicted through EvictionRequests (`--eviction-api`).
    EvictsByRequest,
    /// No controller observed a request in `waited`: every pod goes
    /// through the eviction subresource.
    NoEvictionRequestController { waited: Duration },
    /// The API refused a request for this pod: evicted the old way.
    EvictionRequestRefused { pod: PodKey, message: String },
    /// The controller failed this pod's request (`reason`): evicted the
    /// old way.
    EvictionRequestFailed { pod: PodKey, reason: String },
    /// Requests this run made were withdrawn as it ended early.
    EvictionRequestsWithdrawn { count: usize },
}

impl Warning {
    /// The same warning about one node of a roll.
    pub(crate) fn on_node(self, node: &str) -> Warning {
        Warning::OnNode {
            node: node.to_string(),
            warning: Box::new(self),
        }
    }
}
