//! A node running a Kafka broker behind Strimzi's Drain Cleaner: the
//! webhook refuses the eviction and hands the pod to the Strimzi Cluster
//! Operator, which rolls it onto another node. The drain waits for the
//! operator and says so; the real kubectl drain gives up at the refusal.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::Cluster;
use crate::scenario::Scenario;

/// n1 running `my-cluster-kafka-0`, n2 cordoned; the Drain Cleaner in its
/// default mode (`deny`), or its legacy one behind a `maxUnavailable: 0`
/// budget; the operator rolls the pod `roll_seconds` after the webhook
/// annotates it.
fn scenario(deny: bool, roll_seconds: &str) -> String {
    behind_the_drain_cleaner(crate::drain::two_nodes(), deny, roll_seconds, |_| {}).yaml()
}

/// `scenario` with Strimzi's Drain Cleaner (`deny` its mode) and a Kafka
/// broker of one, `my-cluster-kafka-0`, behind its budget, which the
/// operator rolls `roll_seconds` after the webhook annotates it; `tweak`
/// changes the broker's pod template.
pub(crate) fn behind_the_drain_cleaner(
    scenario: Scenario,
    deny: bool,
    roll_seconds: &str,
    tweak: impl FnOnce(&mut Value),
) -> Scenario {
    let labels = json!({"strimzi.io/kind": "Kafka", "strimzi.io/name": "my-cluster-kafka",
        "strimzi.io/cluster": "my-cluster"});
    let mut template = json!({"metadata": {"labels": labels, "annotations": {
            "sandbox.kubectl-maintain.io/roll-seconds": roll_seconds,
            "sandbox.kubectl-maintain.io/ready-seconds": "0.2",
            "sandbox.kubectl-maintain.io/shutdown-seconds": "0.3"}},
        "spec": {"containers": [{"name": "kafka", "image": "quay.io/strimzi/kafka:0.45.0-kafka-3.9.0"}]}});
    tweak(&mut template);
    scenario
        .object(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "strimzi-drain-cleaner", "namespace": "strimzi-drain-cleaner"},
            "spec": {"replicas": 0,
                "selector": {"matchLabels": {"app": "strimzi-drain-cleaner"}},
                "template": {"metadata": {"labels": {"app": "strimzi-drain-cleaner"}},
                    "spec": {"containers": [{"name": "strimzi-drain-cleaner", "image": "quay.io/strimzi/drain-cleaner:1.4.0",
                        "env": [{"name": "STRIMZI_DENY_EVICTION", "value": deny.to_string()}]}]}}},
        }))
        .object(json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "my-cluster-kafka", "namespace": "kafka"},
            "spec": {"replicas": 1, "serviceName": "my-cluster-kafka-brokers",
                "selector": {"matchLabels": labels}, "template": template},
        }))
        .object(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "my-cluster-kafka", "namespace": "kafka"},
            "spec": {"maxUnavailable": i32::from(deny),
                "selector": {"matchLabels": {"strimzi.io/name": "my-cluster-kafka"}}},
        }))
}

/// The table report of a 2-second drain of n1.
fn text_of(c: &Cluster) -> String {
    let out = c.maintain(&["drain", "n1", "--timeout", "2s", "--lines=report"]);
    out.code(3);
    assert!(out.stdout.contains("handed over"), "the report: {out:?}");
    out.stdout
}

fn broker_on(c: &Cluster, node: &str) -> bool {
    c.pods_on(node)
        .iter()
        .any(|p| p == "kafka/my-cluster-kafka-0")
}

fn started(deny: bool, roll_seconds: &str) -> Cluster {
    let c = Cluster::start(&scenario(deny, roll_seconds), 33);
    c.wait_settled();
    c.wait_for("the broker on n1", Duration::from_secs(10), |c| {
        broker_on(c, "n1")
    });
    assert_eq!(c.kubectl(&["uncordon", "n2"]).code, 0);
    c
}

#[test]
fn the_drain_waits_for_the_strimzi_operator_where_kubectl_drain_gives_up() {
    let kubectl_side = started(true, "1.5");
    let k = kubectl_side.kubectl(&["drain", "n1", "--timeout", "20s"]);
    assert_ne!(k.code, 0, "{k:?}");
    assert!(
        k.stderr.contains(
            "admission webhook \"strimzi-drain-cleaner.strimzi.io\" denied the request: The pod will be rolled by the Strimzi Cluster Operator"
        ),
        "{k:?}"
    );

    let c = started(true, "1.5");
    let out = c.maintain(&["drain", "n1", "--timeout", "30s"]);
    out.success();
    assert!(
        out.stderr.contains(
            "pod/kafka/my-cluster-kafka-0 waiting: handed over to the Strimzi Cluster Operator (Kafka cluster kafka/my-cluster): rolling the pod onto another node (strimzi.io/manual-rolling-update)"
        ),
        "{out:?}"
    );
    c.wait_for("the broker rolled onto n2", Duration::from_secs(10), |c| {
        broker_on(c, "n2")
    });
}

#[test]
fn in_legacy_mode_the_budgets_refusal_is_the_operators_too_and_a_slow_roll_is_named_at_the_timeout()
{
    let c = started(false, "600");
    let out = c.maintain(&["drain", "n1", "--timeout", "3s", "-o", "json"]);
    out.code(3);
    let report = out.report();
    let cause = &report.nodes[0].pods[0].result["cause"];
    assert_eq!(cause["kind"], "handedOver", "{out:?}");
    assert_eq!(cause["operator"], "the Strimzi Cluster Operator");
    assert_eq!(cause["subject"], "Kafka cluster kafka/my-cluster");
    assert!(broker_on(&c, "n1"));
    assert!(
        report.nodes[0].budget_holds.is_empty(),
        "the budget's refusal is the hand-over, not a hold: {out:?}"
    );
    assert!(
        !text_of(&c).contains("Disruption budgets that held evictions back"),
        "the report's budget table names it"
    );
    // The report says who has the pod, and do not advise relaxing the
    // budget, which would take it from the operator.
    let text = c.maintain(&["drain", "n1", "--timeout", "2s", "--lines=report"]);
    text.code(3);
    assert!(
        text.stdout
            .contains("* handed over to the Strimzi Cluster Operator"),
        "{text:?}"
    );
    assert!(
        text.stdout
            .contains("what to do: the operator moves the pod when that is safe"),
        "{text:?}"
    );
    assert!(!text.stdout.contains("relax the PDB"), "{text:?}");
}
