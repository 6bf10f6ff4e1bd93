//! Is the node's kubelet alive? Read from what the control plane keeps of
//! it: the Ready condition the node lifecycle controller sets to Unknown
//! once the kubelet has been silent for `--node-monitor-grace-period`
//! (kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go,
//! `tryUpdateNodeHealth`), the heartbeat Lease in `kube-node-lease` that a
//! live kubelet renews every 10 s (pkg/kubelet/nodelease), and the taints
//! that follow: `node.kubernetes.io/unreachable` / `not-ready`, the cloud
//! provider's `node.kubernetes.io/shutdown`, and the operator's
//! `node.kubernetes.io/out-of-service`.
//!
//! A node is down when its Ready condition is Unknown (the controller has
//! already waited its grace period), False for longer than that grace, or
//! when its lease has not been renewed for its duration plus that grace
//! (the controller has not noticed yet); and at once when its kubelet says
//! it is shutting down gracefully (`GracefulNodeShutdownInProgress` True,
//! KEP-5683, Kubernetes 1.37: pkg/kubelet/nodeshutdown): it is going away,
//! not coming back. Pure: the clock is passed in; crate::drain::heartbeat
//! reads the node and its lease.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

/// The node lifecycle controller's default `--node-monitor-grace-period`
/// before 1.32 (50 s since): a kubelet this long silent is not a blip.
pub(crate) const GRACE_SECONDS: i64 = 40;

pub(crate) const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
pub(crate) const NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Put by the cloud provider's node controller on an instance it knows is
/// shut down: proof of power-off.
pub(crate) const SHUTDOWN: &str = "node.kubernetes.io/shutdown";
/// KEP-2268 (GA in 1.28): the node is powered off, its pods may be
/// force-deleted and its volumes detached.
pub(crate) const OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";
/// The kubelet's condition while it shuts the node down (1.37).
pub(crate) const SHUTTING_DOWN: &str = "GracefulNodeShutdownInProgress";

/// A node whose kubelet is not running, and what says so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeDown {
    /// The Ready condition's status: `Unknown`, `False`, or `True` when only
    /// the lease says the kubelet is silent.
    pub(crate) ready: String,
    /// The condition's reason (`NodeStatusUnknown`, `KubeletNotReady`...).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) reason: String,
    /// Since when it has been so (the condition's lastTransitionTime, or the
    /// lease's last renewal), RFC 3339.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) since: Option<String>,
    /// The kubelet's last heartbeat (its lease's renewTime), RFC 3339.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kubelet_last_heard: Option<String>,
    /// The node's taints that tell of it: unreachable, not-ready,
    /// shutdown, out-of-service.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) taints: Vec<String>,
}

impl NodeDown {
    /// The cloud provider says the instance is shut down.
    pub(crate) fn shut_down(&self) -> bool {
        self.taints.iter().any(|t| t == SHUTDOWN)
    }

    /// The operator took it out of service (the out-of-service taint).
    pub(crate) fn out_of_service(&self) -> bool {
        self.taints.iter().any(|t| t == OUT_OF_SERVICE)
    }

    /// Its kubelet is shutting it down gracefully: it goes away.
    pub(crate) fn shutting_down(&self) -> bool {
        self.reason == SHUTTING_DOWN
    }

    /// Seconds since it went down, when known.
    pub(crate) fn seconds(&self, now: Timestamp) -> Option<i64> {
        let since = self.since.as_deref()?.parse::<Timestamp>().ok()?;
        Some((now.as_second() - since.as_second()).max(0))
    }
}

/// Is the node's Ready condition True (a node without one counts as Ready,
/// as kubectl and the scheduler take it)?
pub(crate) fn is_ready(node: &Node) -> bool {
    ready_condition(node).is_none_or(|c| c.status == "True")
}

/// The node's Ready condition, if it reports one.
pub(crate) fn ready_condition(node: &Node) -> Option<&k8s_openapi::api::core::v1::NodeCondition> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")
}

/// The node's condition of this type, when True.
fn true_condition<'a>(
    node: &'a Node,
    kind: &str,
) -> Option<&'a k8s_openapi::api::core::v1::NodeCondition> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind && c.status == "True")
}

/// Is the node down now? `lease` is its kube-node-lease Lease, when read.
pub(crate) fn assess(node: &Node, lease: Option<&Lease>, now: Timestamp) -> Option<NodeDown> {
    if let Some(shutdown) = true_condition(node, SHUTTING_DOWN) {
        let ready = ready_condition(node).map_or("True", |c| c.status.as_str());
        return Some(NodeDown {
            ready: ready.to_string(),
            reason: SHUTTING_DOWN.to_string(),
            since: shutdown
                .last_transition_time
                .as_ref()
                .map(|t| kube_conventions::time::format_time(t.0)),
            kubelet_last_heard: None,
            taints: Vec::new(),
        });
    }
    let condition = ready_condition(node);
    let status = condition.map_or("True", |c| c.status.as_str());
    let transition = condition.and_then(|c| c.last_transition_time.as_ref().map(|t| t.0));
    let spec = lease.and_then(|l| l.spec.as_ref());
    let renewed = spec.and_then(|s| s.renew_time.as_ref().map(|t| t.0));
    let lease_seconds = spec
        .and_then(|s| s.lease_duration_seconds)
        .map_or(40, i64::from);
    let silent =
        renewed.is_some_and(|r| now.as_second() - r.as_second() > lease_seconds + GRACE_SECONDS);
    let down = match status {
        "Unknown" => true,
        "False" => transition.is_none_or(|t| now.as_second() - t.as_second() >= GRACE_SECONDS),
        _ => silent,
    };
    if !down {
        return None;
    }
    let since = if status == "True" {
        renewed
    } else {
        transition
    };
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .map(|t| t.key.as_str())
        .filter(|k| [UNREACHABLE, NOT_READY, SHUTDOWN, OUT_OF_SERVICE].contains(k))
        .map(str::to_string)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    Some(NodeDown {
        ready: status.to_string(),
        reason: condition.and_then(|c| c.reason.clone()).unwrap_or_default(),
        since: since.map(kube_conventions::time::format_time),
        kubelet_last_heard: renewed.map(kube_conventions::time::format_time),
        taints,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(status: &str, since: &str, taints: &[&str]) -> Node {
        let taints: Vec<_> = taints
            .iter()
            .map(|k| json!({"key": k, "effect": "NoExecute"}))
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "n"},
            "spec": {"taints": taints},
            "status": {"conditions": [{"type": "Ready", "status": status,
                "reason": "NodeStatusUnknown", "lastTransitionTime": since}]},
        }))
        .unwrap()
    }

    fn lease(renewed: &str) -> Lease {
        serde_json::from_value(json!({
            "metadata": {"name": "n", "namespace": "kube-node-lease"},
            "spec": {"renewTime": renewed, "leaseDurationSeconds": 40},
        }))
        .unwrap()
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn unknown_is_down_at_once_with_its_taints_and_last_heartbeat() {
        // The controller's NoSchedule and NoExecute taints share one key.
        let n = node(
            "Unknown",
            "2026-01-01T00:00:00Z",
            &[UNREACHABLE, "other", UNREACHABLE],
        );
        let down = assess(
            &n,
            Some(&lease("2025-12-31T23:59:10.000000Z")),
            at("2026-01-01T00:00:05Z"),
        )
        .unwrap();
        assert_eq!(down.ready, "Unknown");
        assert_eq!(down.since.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(
            down.kubelet_last_heard.as_deref(),
            Some("2025-12-31T23:59:10Z")
        );
        assert_eq!(down.taints, [UNREACHABLE]);
        assert_eq!(down.seconds(at("2026-01-01T00:01:00Z")), Some(60));
        assert!(!down.shut_down() && !down.out_of_service());
    }

    #[test]
    fn a_node_shutting_down_gracefully_is_going_away_at_once() {
        let mut n = node("False", "2026-01-01T00:00:00Z", &[]);
        let shutting: k8s_openapi::api::core::v1::NodeCondition = serde_json::from_value(json!({
            "type": SHUTTING_DOWN, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
        }))
        .unwrap();
        n.status
            .as_mut()
            .unwrap()
            .conditions
            .as_mut()
            .unwrap()
            .push(shutting);
        let down = assess(&n, None, at("2026-01-01T00:00:01Z")).expect("down at once");
        assert!(down.shutting_down());
        assert_eq!(down.ready, "False");
    }

    #[test]
    fn false_counts_only_past_the_grace_and_a_ready_node_only_by_a_stale_lease() {
        let n = node("False", "2026-01-01T00:00:00Z", &[]);
        assert!(assess(&n, None, at("2026-01-01T00:00:30Z")).is_none());
        assert!(assess(&n, None, at("2026-01-01T00:00:41Z")).is_some());
        let ready = node("True", "2026-01-01T00:00:00Z", &[]);
        assert!(assess(&ready, None, at("2026-01-01T01:00:00Z")).is_none());
        let fresh = lease("2026-01-01T00:59:30.000000Z");
        assert!(assess(&ready, Some(&fresh), at("2026-01-01T01:00:00Z")).is_none());
        let stale = lease("2026-01-01T00:58:00.000000Z");
        let down = assess(&ready, Some(&stale), at("2026-01-01T01:00:00Z")).unwrap();
        assert_eq!(down.ready, "True");
        assert_eq!(down.since.as_deref(), Some("2026-01-01T00:58:00Z"));
    }
}
