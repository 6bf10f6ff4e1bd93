//! Strimzi's Drain Cleaner: a validating webhook on `pods/eviction` that,
//! for a Kafka broker or ZooKeeper pod, annotates the pod
//! `strimzi.io/manual-rolling-update: "true"` and refuses the eviction
//! (500, "The pod will be rolled by the Strimzi Cluster Operator"; or, in
//! its legacy mode, lets the pod's `maxUnavailable: 0` budget refuse it).
//! The Strimzi Cluster Operator then rolls the pod onto another node when
//! its topics stay in sync (strimzi/drain-cleaner,
//! src/main/java/io/strimzi/ValidatingWebhook.java). That refusal is
//! progress, not a block: the drain waits for the operator and says so,
//! and never advises relaxing the budget.

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use super::super::machine::Answer;
use crate::vocabulary::outcome::{Cause, Handler};
use crate::vocabulary::pod_key::PodKey;

use kube_conventions::strimzi::ROLL;
/// The Drain Cleaner's words when it refuses an eviction.
const DENIED: &str = "will be rolled by the Strimzi Cluster Operator";

/// Whether the Strimzi Cluster Operator has the refused pod's eviction:
/// the webhook said so, or (legacy mode, refused by the budget) the pod
/// carries the roll annotation.
pub(crate) async fn handed_over(
    client: &kube::Client,
    key: &PodKey,
    cluster: &str,
    answer: &Answer,
) -> Option<Cause> {
    let said = match answer {
        Answer::Retry { message, .. } => message.contains(DENIED),
        Answer::PdbBlocked { api_message, .. } => api_message.contains(DENIED),
        _ => false,
    };
    let annotated = || async {
        let pods: Api<Pod> = Api::namespaced(client.clone(), &key.namespace);
        pods.get(&key.name).await.ok().is_some_and(|p| {
            p.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ROLL))
                .is_some_and(|v| v == "true")
        })
    };
    (said || annotated().await).then(|| cause(&key.namespace, cluster))
}

/// The cause a pod handed to the Strimzi Cluster Operator waits on.
fn cause(namespace: &str, cluster: &str) -> Cause {
    Cause::HandedOver {
        handler: Handler::Strimzi,
        operator: "the Strimzi Cluster Operator".into(),
        subject: format!("Kafka cluster {namespace}/{cluster}"),
        progress: format!("rolling the pod onto another node ({ROLL})"),
    }
}
