//! A warning in words, without its `warning:` prefix.

use std::fmt;
use std::time::Duration;

use kube_conventions::count;

use crate::duration::human;
use crate::policy::maintenance::{DRAIN_IN_PROGRESS, DRAINED};
use crate::vocabulary::pod_key::PodKey;
use crate::vocabulary::warning::Warning;

fn waits_for_detach(f: &mut fmt::Formatter<'_>, limit: Duration) -> fmt::Result {
    write!(
        f,
        "pods to evict use PersistentVolumeClaims: a node counts as drained once their volumes are detached from it (up to --detach-timeout {}); --skip-wait-for-detach does not wait, as kubectl drain",
        human(limit)
    )
}

/// A roll's own warnings: its locks, abort, kured, notifications, hooks,
/// metrics.
fn of_roll(f: &mut fmt::Formatter<'_>, w: &Warning) -> fmt::Result {
    match w {
        Warning::LockNotReleased { node, error } => {
            write!(f, "node/{node}: could not release its lock: {error}")
        }
        Warning::AbortUnheard { error } => write!(f, "{ABORT_UNHEARD}: {error}"),
        Warning::KuredLockNotReturned { error } => {
            write!(f, "could not give kured's lock back: {error}")
        }
        Warning::NotificationFailed { endpoint, error } => write!(
            f,
            "notifications to {endpoint} fail ({error}); the roll goes on, and the report counts what was not delivered"
        ),
        Warning::HookTimedOut {
            node,
            point,
            annotation,
            why,
        } => write!(
            f,
            "node/{node}: {point} hook {annotation} {why}; going on (onTimeout: continue)"
        ),
        Warning::MetricsNotPushed { error } => write!(
            f,
            "could not push the metrics to --pushgateway ({error}); the roll goes on and pushes again at the next node's end"
        ),
        other => write!(f, "{other}"),
    }
}

/// The most pods a warning names; the rest are counted.
const SHOWN: usize = 10;

impl fmt::Display for Warning {
    #[allow(clippy::too_many_lines)] // long on purpose: a table of words, one arm per warning
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::HeldByMarkers(held) => held_by_markers(f, held),
            Warning::LeftPending(evicted) => left_pending(f, evicted),
            Warning::WaitsForDetach { limit } => waits_for_detach(f, *limit),
            Warning::Deadline {
                after,
                overrides_markers,
            } => deadline(f, *after, *overrides_markers),
            Warning::NodeDown {
                node,
                down,
                lost_after: after,
            } => super::dead_node::warning(f, node, down, *after),
            Warning::CannotListNodes { error } => write!(
                f,
                "cannot list nodes, so cannot tell whether a schedulable node will be left (the drain goes on): {error}"
            ),
            Warning::CannotReadClaims { error } => write!(
                f,
                "cannot read PersistentVolumeClaims, so cannot wait for volumes to detach (nodes count as drained once their pods are gone): {error}"
            ),
            Warning::CannotReadVms { error } => write!(f, "{CANNOT_READ_VMS}: {error}"),
            w @ (Warning::EvictsByRequest
            | Warning::NoEvictionRequestController { .. }
            | Warning::EvictionRequestRefused { .. }
            | Warning::EvictionRequestFailed { .. }
            | Warning::EvictionRequestsWithdrawn { .. }) => eviction_requests(f, w),
            Warning::CannotListAttachments { error } => write!(
                f,
                "cannot list VolumeAttachments, so cannot wait for volumes to detach (nodes count as drained once their pods are gone): {error}"
            ),
            Warning::CannotReadVolumes { error } => write!(
                f,
                "cannot read PersistentVolumes, so the wait for volumes to detach follows their VolumeAttachments only, not the nodes' status.volumesAttached (where in-tree volumes show): {error}"
            ),
            Warning::PodsPolled { error, every } => write!(
                f,
                "cannot watch pods ({error}): each node's pods are listed every {} s instead, as kubectl drain polls",
                every.as_secs()
            ),
            Warning::NodesPolled { error, every } => write!(
                f,
                "cannot watch nodes ({error}): they are listed every {} s instead",
                every.as_secs()
            ),
            Warning::BudgetsUnwatched { error, every } => write!(
                f,
                "cannot watch PodDisruptionBudgets ({error}): evictions a budget refuses are retried every {} s, as kubectl drain does",
                every.as_secs()
            ),
            Warning::ConditionsNotWritten {
                node,
                error,
                forbidden,
            } => conditions_not_written(f, node, error, *forbidden),
            Warning::NoAnswerYet { what, seconds } => write!(
                f,
                "{what}: no answer from {} for {seconds} s; still waiting (--request-timeout bounds each request): check that the API server is up and that nothing between here and it (a proxy, a firewall, a load balancer) holds the connection",
                crate::client::target().map_or_else(
                    || "the API server".to_string(),
                    |t| t.url.trim_end_matches('/').to_string()
                )
            ),
            Warning::Retrying {
                what,
                error,
                try_of: Some((n, of)),
            } => write!(
                f,
                "{what} {error}, trying again: try {n} of {of}, then kubectl's error, as kubectl tries its first requests"
            ),
            Warning::Retrying { what, error, .. } => write!(
                f,
                "{what} {error}, retrying with backoff (each request for up to {})",
                crate::duration::go(crate::client::retry_window())
            ),
            Warning::AwaitingDetach { node, volumes } => {
                let names: Vec<String> = volumes
                    .iter()
                    .map(|(pv, held)| format!("{pv} ({held})"))
                    .collect();
                write!(
                    f,
                    "node/{node}: pods gone, waiting for {} to detach: {} (--skip-wait-for-detach to not wait)",
                    count(volumes.len(), "volume"),
                    names.join(", ")
                )
            }
            Warning::SurgeNotUndone { problem } => f.write_str(problem),
            Warning::OnNode { node, warning } => write!(f, "node/{node}: {warning}"),
            Warning::LockNotReleased { .. }
            | Warning::AbortUnheard { .. }
            | Warning::KuredLockNotReturned { .. }
            | Warning::NotificationFailed { .. }
            | Warning::HookTimedOut { .. }
            | Warning::MetricsNotPushed { .. } => of_roll(f, self),
            Warning::TookOverLock {
                node,
                holder,
                expired: Some((since, lasts)),
            } => write!(
                f,
                "node/{node}: took over the lock of {holder}, not renewed for {since} s (its lease lasts {lasts} s)"
            ),
            Warning::TookOverLock {
                node,
                holder,
                expired: None,
            } => write!(
                f,
                "node/{node}: took over the lock of {holder}, a process of this machine that no longer runs"
            ),
            Warning::BudgetsStillUnhealthy {
                node,
                after,
                budgets,
            } => budgets_still_unhealthy(f, node, *after, budgets),
            Warning::RunStopped { verb, why } => write!(f, "{verb} stopped: {why}"),
            Warning::CordonsAtTurn { by } => write!(
                f,
                "with {by}, each node is cordoned when its turn comes, not every node first as kubectl drain does"
            ),
        }
    }
}

fn budgets_still_unhealthy(
    f: &mut fmt::Formatter<'_>,
    node: &str,
    after: Duration,
    budgets: &[String],
) -> fmt::Result {
    write!(
        f,
        "node/{node}: budgets still not healthy after {}, going on: {}",
        human(after),
        budgets.join(", ")
    )
}

fn held_by_markers(f: &mut fmt::Formatter<'_>, held: &[(PodKey, String)]) -> fmt::Result {
    let pods = match held.len() {
        1 => "1 pod carries".to_string(),
        n => format!("{n} pods carry"),
    };
    let names: Vec<String> = held.iter().map(|(p, m)| format!("{p} ({m})")).collect();
    write!(
        f,
        "{pods} drain markers that kubectl drain ignores; --ignore-markers drains them as kubectl does: {}",
        names.join(", ")
    )
}

fn left_pending(f: &mut fmt::Formatter<'_>, evicted: &[PodKey]) -> fmt::Result {
    let mut names = evicted
        .iter()
        .take(SHOWN)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if evicted.len() > SHOWN {
        names = format!("{names} and {} more", evicted.len() - SHOWN);
    }
    let pods = match evicted.len() {
        1 => "the 1 pod".to_string(),
        n => format!("the {n} pods"),
    };
    write!(
        f,
        "no schedulable node would be left once the selected nodes are cordoned: {pods} this drain evicts will stay Pending until a node takes them: {names}"
    )
}

fn deadline(f: &mut fmt::Formatter<'_>, after: Duration, overrides_markers: bool) -> fmt::Result {
    let markers = if overrides_markers {
        "pods held by drain markers too"
    } else {
        "pods held by drain markers are left"
    };
    write!(
        f,
        "--deadline {}: what is still on a node then is deleted, PodDisruptionBudgets bypassed, each pod its grace period before the deadline ({markers})",
        human(after)
    )
}

fn conditions_not_written(
    f: &mut fmt::Formatter<'_>,
    node: &str,
    error: &str,
    forbidden: bool,
) -> fmt::Result {
    let hint = if forbidden {
        "; grant patch on nodes/status to record them, or pass --node-conditions=false"
    } else {
        ""
    };
    write!(
        f,
        "cannot write the {DRAIN_IN_PROGRESS}/{DRAINED} conditions of node {node} (the drain goes on): {error}{hint}"
    )
}

const ABORT_UNHEARD: &str = "cannot read its own Job, so `kubectl maintain abort` is not heard (the roll goes on; abort then stops it with its Job)";

const CANNOT_READ_VMS: &str = "cannot read VirtualMachineInstances, so a VM's launcher held by its budget is reported as held, not as migrating";

/// The EvictionRequest path's warnings (crate::drain::evict::request).
fn eviction_requests(f: &mut fmt::Formatter<'_>, w: &Warning) -> fmt::Result {
    match w {
        Warning::EvictsByRequest => f.write_str(
            "pods are evicted through EvictionRequests (lifecycle.k8s.io/v1alpha1, Kubernetes 1.37): each pod's eviction responders act first; --eviction-api=eviction evicts as kubectl drain does",
        ),
        Warning::NoEvictionRequestController { waited } => write!(
            f,
            "no controller took an EvictionRequest within {}s (is the EvictionRequestAPI gate off in kube-controller-manager?): the request was withdrawn and every pod is evicted through the eviction subresource",
            waited.as_secs()
        ),
        Warning::EvictionRequestRefused { pod, message } => write!(
            f,
            "pod/{pod}: the API refused an EvictionRequest ({message}); evicting it through the eviction subresource"
        ),
        Warning::EvictionRequestFailed { pod, reason } => write!(
            f,
            "pod/{pod}: its EvictionRequest failed ({reason}); the request was withdrawn and the pod is evicted through the eviction subresource"
        ),
        Warning::EvictionRequestsWithdrawn { count } => write!(
            f,
            "withdrew {count} EvictionRequest(s) this run made (intent: Withdrawn): their pods' responders stop; a rerun asks again"
        ),
        _ => Ok(()),
    }
}
