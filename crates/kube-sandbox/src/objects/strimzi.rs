//! Strimzi, as much as a drain meets it. Its Drain Cleaner is a validating
//! webhook on `pods/eviction` (strimzi/drain-cleaner,
//! src/main/java/io/strimzi/ValidatingWebhook.java): for a pod labelled
//! `strimzi.io/kind: Kafka` whose `strimzi.io/name` ends in `-kafka` or
//! `-zookeeper`, it annotates the pod `strimzi.io/manual-rolling-update:
//! "true"`, then refuses the eviction with a 500 (or, with
//! `STRIMZI_DENY_EVICTION=false`, its legacy mode, lets the pod's
//! `maxUnavailable: 0` budget refuse it). The Strimzi Cluster Operator
//! then rolls the annotated pod: deletes it, and its controller makes it
//! again, on another node when this one is cordoned.
//!
//! The sandbox runs the webhook (crate::apiserver::admission) when the
//! cluster has a Deployment named `strimzi-drain-cleaner` (any namespace),
//! in the mode its containers' `STRIMZI_DENY_EVICTION` says; the roll
//! follows the annotation after the pod's
//! `sandbox.kubectl-maintain.io/roll-seconds` (default 2 s).

use std::time::Duration;

use serde_json::Value;

use crate::config::KNOB_PREFIX;
use crate::objects::path::At;
use crate::objects::pods;

/// The annotation the Drain Cleaner sets and the operator acts on.
pub(crate) use kube_conventions::strimzi::ROLL;
/// The Drain Cleaner's Deployment, as its install files name it.
pub(crate) const DRAIN_CLEANER: &str = "strimzi-drain-cleaner";
/// The webhook's name in its ValidatingWebhookConfiguration.
pub(crate) const WEBHOOK: &str = "strimzi-drain-cleaner.strimzi.io";

/// A Kafka broker or ZooKeeper pod, as the Drain Cleaner matches them.
pub(crate) fn managed(pod: &Value) -> bool {
    let label = |k: &str| {
        pod.at("/metadata/labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
    };
    kube_conventions::strimzi::drain_cleaner_cluster(
        label("strimzi.io/kind"),
        label("strimzi.io/name"),
    )
    .is_some()
}

/// Whether the pod was just asked to roll.
pub(crate) fn roll_asked(old: Option<&Value>, new: &Value) -> bool {
    let asked = |p: &Value| pods::annotation(p, ROLL) == Some("true");
    asked(new) && !old.is_some_and(asked) && !pods::is_terminating(new)
}

/// How long the operator takes before it rolls the pod (its topics
/// syncing): the pod's `roll-seconds` knob, else 2 s.
pub(crate) fn roll_delay(pod: &Value) -> Duration {
    let secs = pods::annotation(pod, &format!("{KNOB_PREFIX}roll-seconds"))
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(2.0);
    Duration::from_secs_f64(secs.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pod_is_matched_by_its_labels() {
        let pod = |kind: &str, name: &str| {
            json!({"metadata": {"name": "p", "namespace": "kafka",
                "labels": {"strimzi.io/kind": kind, "strimzi.io/name": name}}})
        };
        assert!(managed(&pod("Kafka", "my-cluster-kafka")));
        assert!(!managed(&pod("KafkaConnect", "my-connect-kafka")));
        assert!(!managed(&json!({"metadata": {"name": "p"}})));
    }
}
