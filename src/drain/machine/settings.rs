//! What every node's machine works with, and its limits.

use std::collections::BTreeSet;
use std::time::Duration;

/// Evictions a node keeps in flight at once.
pub(crate) const IN_FLIGHT: usize = 16;
/// Retry a PDB-blocked pod this often even when no budget change says so.
pub(crate) const FALLBACK_RETRY: Duration = Duration::from_secs(20);
/// Consecutive failed attempts (5xx, throttling) before a pod is given up.
pub(crate) const MAX_API_ATTEMPTS: u32 = 12;
/// How often `--skip-wait-for-delete-timeout` looks at terminating pods.
pub(super) const EXPIRY_CHECK: Duration = Duration::from_secs(1);

#[derive(Debug, Clone)]
pub(crate) struct WaveSpec {
    pub(crate) name: String,
    /// How long this wave may take on one node.
    pub(crate) timeout: Option<Duration>,
}

/// What every node's drain shares.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(crate) waves: Vec<WaveSpec>,
    /// `--timeout`: how long each node's drain may take, counted from its
    /// start, as kubectl drain counts it.
    pub(crate) timeout: Option<Duration>,
    /// `--skip-wait-for-delete-timeout` in seconds (0: off).
    pub(crate) skip_wait_for_delete: u64,
    /// `--lost-pod-timeout`: on a node whose kubelet is down, a pod whose
    /// deletion was asked longer ago than this counts as gone (None: off).
    pub(crate) lost_pod_timeout: Option<Duration>,
    /// Namespaces being deleted: their pods may hang in Terminating.
    pub(crate) terminating_namespaces: BTreeSet<String>,
    /// Evictions in flight at once on this node.
    pub(crate) in_flight: usize,
    /// `--disable-eviction`: pods are deleted, not evicted.
    pub(crate) delete: bool,
    /// `--grace-period`, when given.
    pub(crate) grace_period: Option<i64>,
    /// `--deadline`: counted from the node's start, after which what is
    /// left is deleted, budgets bypassed, each pod early enough to get its
    /// whole grace period by then.
    pub(crate) deadline: Option<Duration>,
    /// `--deadline-overrides-markers`: pods held by drain markers are
    /// deleted at the deadline too.
    pub(crate) deadline_overrides_markers: bool,
    /// `--surge`: a pod its budget holds gets one more replica of its
    /// Deployment first (crate::drain::surge).
    pub(crate) surge: bool,
    /// How long to wait, once the pods are gone, for the volumes they used
    /// to detach from the node (`--detach-timeout`); None with
    /// `--skip-wait-for-detach`.
    pub(crate) detach_wait: Option<Duration>,
    /// Pods are asked for through EvictionRequests
    /// (crate::drain::evict::request): once asked, a pod's request stays
    /// open and its responders may evict it at any time, so a pod that goes
    /// after it was asked for was evicted.
    pub(crate) by_request: bool,
}
