//! Kubernetes Events as the simulated components record them, so that
//! `kubectl describe` and `kubectl get events` show what a real cluster
//! shows: the scheduler's Scheduled and FailedScheduling, the controllers'
//! SuccessfulCreate, the kubelet's Pulled, Created, Started and Killing
//! (k8s.io/client-go/tools/record, core/v1 Events).

use serde_json::{Value, json};

use crate::clock::now_rfc3339;
use crate::resources::Resource;
use crate::store::Store;

/// Records one Event about `object` from `component`.
pub(crate) fn record(
    store: &mut Store,
    object: &Value,
    kind: &str,
    reason: &str,
    message: &str,
    component: &str,
) {
    let now = now_rfc3339();
    let meta = &object["metadata"];
    let ns = meta["namespace"].as_str().unwrap_or("default");
    let name = meta["name"].as_str().unwrap_or_default();
    let event = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": format!("{name}."), "namespace": ns},
        "involvedObject": {"apiVersion": object["apiVersion"], "kind": object["kind"],
            "namespace": meta["namespace"], "name": name, "uid": meta["uid"]},
        "reason": reason,
        "message": message,
        "type": kind,
        "source": {"component": component},
        "reportingComponent": component,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    });
    let _ = store.create(Resource::Events, event);
}

/// A controller made a pod for `owner`: its SuccessfulCreate Event.
pub(crate) fn created_pod(store: &mut Store, owner: &Value, pod: &Value, component: &str) {
    let message = format!(
        "Created pod: {}",
        pod["metadata"]["name"].as_str().unwrap_or_default()
    );
    record(
        store,
        owner,
        "Normal",
        "SuccessfulCreate",
        &message,
        component,
    );
}
