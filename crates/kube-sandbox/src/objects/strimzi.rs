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
//! The sandbox runs the webhook when the cluster has a Deployment named
//! `strimzi-drain-cleaner` (any namespace), in the mode its containers'
//! `STRIMZI_DENY_EVICTION` says; the roll follows the annotation after
//! the pod's `sandbox.kubectl-maintain.io/roll-seconds` (default 2 s).

use std::time::Duration;

use serde_json::Value;

use crate::api_error::ApiError;
use crate::config::KNOB_PREFIX;
use crate::objects::path::At;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::Store;

/// The annotation the Drain Cleaner sets and the operator acts on.
pub(crate) const ROLL: &str = "strimzi.io/manual-rolling-update";
/// The Drain Cleaner's Deployment, as its install files name it.
const DRAIN_CLEANER: &str = "strimzi-drain-cleaner";
/// The webhook's name in its ValidatingWebhookConfiguration.
const WEBHOOK: &str = "strimzi-drain-cleaner.strimzi.io";

/// A Kafka broker or ZooKeeper pod, as the Drain Cleaner matches them.
pub(crate) fn managed(pod: &Value) -> bool {
    let label = |k: &str| {
        pod.at("/metadata/labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
    };
    let component = label("strimzi.io/name").is_some_and(|n| {
        [n.strip_suffix("-kafka"), n.strip_suffix("-zookeeper")]
            .into_iter()
            .flatten()
            .any(|cluster| !cluster.is_empty())
    });
    label("strimzi.io/kind") == Some("Kafka") && component
}

/// Whether the Drain Cleaner is installed, and then whether it denies
/// evictions (its default) rather than leave them to the budget.
fn drain_cleaner(store: &Store) -> Option<bool> {
    let (_, doc) = store
        .docs(Resource::Deployments, None, None)
        .find(|(k, _)| k.1 == DRAIN_CLEANER)?;
    let d = doc.value();
    let deny = d
        .at("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|c| c["env"].as_array().into_iter().flatten())
        .find(|e| e["name"] == "STRIMZI_DENY_EVICTION")
        .and_then(|e| e["value"].as_str())
        .is_none_or(|v| !v.eq_ignore_ascii_case("false"));
    Some(deny)
}

/// The webhook, for an eviction of `pod` (its dry run annotates nothing):
/// the refusal to answer with, if it refuses. As kube-apiserver words a
/// webhook's denial (staging/src/k8s.io/apiserver/pkg/admission/plugin/
/// webhook/errors/statuserror.go): `admission webhook "NAME" denied the
/// request: MESSAGE`, with the webhook's code.
pub(crate) fn on_eviction(store: &mut Store, pod: &Value, dry_run: bool) -> Result<(), ApiError> {
    if !managed(pod) {
        return Ok(());
    }
    let Some(deny) = drain_cleaner(store) else {
        return Ok(());
    };
    if !dry_run && pods::annotation(pod, ROLL) != Some("true") {
        let key = crate::store::key_of(pod);
        let _ = store.modify(Resource::Pods, &key, |p| {
            p["metadata"]["annotations"][ROLL] = Value::from("true");
        });
    }
    if !deny {
        return Ok(());
    }
    Err(ApiError::new(
        500,
        "",
        format!(
            "admission webhook \"{WEBHOOK}\" denied the request: The pod will be rolled by the Strimzi Cluster Operator"
        ),
    ))
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

    fn pod(kind: &str, name: &str) -> Value {
        json!({"metadata": {"name": "p", "namespace": "kafka",
            "labels": {"strimzi.io/kind": kind, "strimzi.io/name": name}}})
    }

    #[test]
    fn the_drain_cleaner_takes_kafka_and_zookeeper_pods_alone() {
        assert!(managed(&pod("Kafka", "my-cluster-kafka")));
        assert!(managed(&pod("Kafka", "my-cluster-zookeeper")));
        assert!(!managed(&pod("Kafka", "my-cluster-entity-operator")));
        assert!(!managed(&pod("Kafka", "-kafka")));
        assert!(!managed(&pod("KafkaConnect", "my-connect-kafka")));
        assert!(!managed(&json!({"metadata": {"name": "p"}})));
    }

    #[test]
    fn without_the_drain_cleaner_nothing_happens_and_with_it_the_pod_is_annotated() {
        let mut store = Store::new(10);
        let p = pod("Kafka", "my-cluster-kafka");
        store.load(Resource::Pods, p.clone()).unwrap();
        assert!(on_eviction(&mut store, &p, false).is_ok());
        let annotated = |s: &Store| {
            let p = s
                .get(Resource::Pods, &("kafka".into(), "p".into()))
                .unwrap();
            pods::annotation(&p, ROLL).map(str::to_string)
        };
        assert_eq!(annotated(&store), None);
        let cleaner = |deny: &str| {
            json!({"metadata": {"name": DRAIN_CLEANER, "namespace": "strimzi-drain-cleaner"},
                "spec": {"template": {"spec": {"containers": [{"name": "c",
                    "env": [{"name": "STRIMZI_DENY_EVICTION", "value": deny}]}]}}}})
        };
        store.load(Resource::Deployments, cleaner("true")).unwrap();
        assert!(on_eviction(&mut store, &p, true).is_err());
        assert_eq!(annotated(&store), None, "a dry run annotates nothing");
        let e = on_eviction(&mut store, &p, false).unwrap_err();
        assert_eq!(e.code, 500);
        assert!(e.message.starts_with(
            "admission webhook \"strimzi-drain-cleaner.strimzi.io\" denied the request: "
        ));
        assert_eq!(annotated(&store).as_deref(), Some("true"));

        let mut legacy = Store::new(10);
        legacy.load(Resource::Pods, p.clone()).unwrap();
        legacy
            .load(Resource::Deployments, cleaner("false"))
            .unwrap();
        assert!(
            on_eviction(&mut legacy, &p, false).is_ok(),
            "the budget decides"
        );
        assert_eq!(annotated(&legacy).as_deref(), Some("true"));
    }
}
