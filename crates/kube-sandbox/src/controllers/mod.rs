//! kube-controller-manager's controllers and kube-scheduler, as far as a
//! drain meets them. Each reconciles one object against the store; the
//! simulation loop (crate::simulation) decides which objects are owed one.

pub(crate) mod attach_detach;
pub(crate) mod cluster_autoscaler;
pub(crate) mod daemonset;
pub(crate) mod deployment;
pub(crate) mod disruption;
pub(crate) mod eviction_request;
pub(crate) mod garbage_collector;
pub(crate) mod job;
pub(crate) mod namespace;
pub(crate) mod node_lifecycle;
pub(crate) mod pod_gc;
pub(crate) mod replicaset;
pub(crate) mod scheduler;
pub(crate) mod statefulset;
mod template;
pub(crate) mod work;

use serde_json::Value;

use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};
use work::{Changed, Work};

/// Merges `fields` into an object's status and writes it if anything changed.
pub(crate) fn update_status(store: &mut Store, res: Resource, key: &Key, fields: &Value) {
    let Some(obj) = store.get(res, key) else {
        return;
    };
    let mut merged = obj
        .get("status")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    for (k, v) in fields.as_object().expect("status fields") {
        merged[k] = v.clone();
    }
    if obj.get("status") != Some(&merged) {
        let _ = store.modify(res, key, |o| o["status"] = merged);
    }
}

pub(crate) fn owner_resource(kind: &str) -> Option<Resource> {
    match kind {
        "ReplicaSet" => Some(Resource::ReplicaSets),
        "ReplicationController" => Some(Resource::ReplicationControllers),
        "Deployment" => Some(Resource::Deployments),
        "StatefulSet" => Some(Resource::StatefulSets),
        "DaemonSet" => Some(Resource::DaemonSets),
        "Job" => Some(Resource::Jobs),
        _ => None,
    }
}

/// Creates a pod a controller made for `owner`, through the admission a
/// controller's create goes through: a pod Pod Security refuses is not
/// made, and the owner gets the controller's FailedCreate Event
/// (pkg/controller/controller_utils.go `CreatePods`).
pub(crate) fn create_pod(
    store: &mut Store,
    owner: &Value,
    pod: Value,
    component: &str,
) -> Option<std::sync::Arc<Value>> {
    if let Err(e) = crate::apiserver::pod_security::admit(store, &pod) {
        let message = format!("Error creating: {}", e.message);
        crate::events::record(store, owner, "Warning", "FailedCreate", &message, component);
        return None;
    }
    store.create(Resource::Pods, pod).ok()
}

/// The pods whose ownerReferences name `owner`.
pub(crate) fn owned_pods(store: &Store, owner: &Value) -> Vec<std::sync::Arc<Value>> {
    let uid = owner["metadata"]["uid"].as_str().unwrap_or_default();
    store
        .pods_owned_by(uid)
        .iter()
        .filter_map(|k| store.get(Resource::Pods, k))
        .collect()
}

/// Reconciles one workload object with its controller.
pub(crate) fn reconcile(store: &mut Store, res: Resource, key: &Key) {
    match res {
        Resource::ReplicaSets | Resource::ReplicationControllers => {
            replicaset::reconcile(store, res, key);
        }
        Resource::Deployments => deployment::reconcile(store, key),
        Resource::StatefulSets => statefulset::reconcile(store, key),
        Resource::DaemonSets => daemonset::reconcile(store, key),
        Resource::Jobs => job::reconcile(store, key),
        _ => {}
    }
}

/// What the workload controllers (ReplicaSet, ReplicationController,
/// Deployment, StatefulSet, DaemonSet, Job) react to: their own object
/// written, and an object they own (a pod, a ReplicaSet) written or gone,
/// which their owner's reconcile counts again.
pub(crate) fn triggers(c: &Changed<'_>, work: &mut Work) {
    let workload = matches!(
        c.resource,
        Resource::ReplicaSets
            | Resource::ReplicationControllers
            | Resource::Deployments
            | Resource::StatefulSets
            | Resource::DaemonSets
            | Resource::Jobs
    );
    if workload && c.new.is_some() {
        work.owners.insert((c.resource, c.key.clone()));
    }
    let owned = match c.resource {
        // A pod's owner, before and after (an adoption or a release).
        Resource::Pods => vec![c.old, c.new],
        _ if workload => vec![c.old.or(c.new)],
        _ => vec![],
    };
    for p in owned.into_iter().flatten() {
        if let Some(owner) = pods::controller_of(p)
            && let Some(res) = owner_resource(&owner.kind)
        {
            work.owners.insert((res, (c.key.0.clone(), owner.name)));
        }
    }
}
