//! The ReplicaSet controller: keeps `spec.replicas` pods alive (a
//! terminating pod no longer counts, so its replacement is made at once) and
//! reports the counts in status (kubernetes pkg/controller/replicaset). The
//! same controller runs ReplicationControllers, as upstream's
//! pkg/controller/replication wraps it: only the selector's shape (a plain
//! label map) and the events' component differ, and pods are found by their
//! owner reference either way.

use crate::objects::path::At;
use serde_json::{Value, json};

use super::template::pod_from_template;
use super::update_status;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

fn component(res: Resource) -> &'static str {
    match res {
        Resource::ReplicationControllers => "replication-controller",
        _ => "replicaset-controller",
    }
}

pub(crate) fn replicas(obj: &Value) -> i64 {
    obj.at("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// Reconciles a ReplicaSet or a ReplicationController.
pub(crate) fn reconcile(store: &mut Store, res: Resource, key: &Key) {
    let Some(rs) = store.get(res, key) else {
        return;
    };
    if pods::is_terminating(&rs) {
        return;
    }
    let want = replicas(&rs);
    let uid = rs["metadata"]["uid"].as_str().unwrap_or_default();
    // What the scale and the status need, read before any write.
    let (have, ready, victims) = {
        let mut active: Vec<(&Key, &pods::Facts)> = store
            .owned_pod_facts(uid)
            .filter(|(_, p)| !p.terminating && !p.terminal)
            .collect();
        let have = active.len() as i64;
        let ready = active.iter().filter(|(_, p)| p.ready).count();
        // Scale down: unscheduled and unready pods go first, as the real
        // controller ranks them.
        active.sort_by_key(|(_, p)| (p.node.is_some(), p.ready));
        let excess = usize::try_from(have - want).unwrap_or(0);
        let victims: Vec<Key> = active
            .into_iter()
            .take(excess)
            .map(|(k, _)| k.clone())
            .collect();
        (have, ready, victims)
    };
    for _ in have..want {
        let pod = pod_from_template(&rs, None);
        if let Some(pod) = super::create_pod(store, &rs, pod, component(res)) {
            crate::events::created_pod(store, &rs, &pod, component(res));
        }
    }
    for k in &victims {
        let deleted = crate::apiserver::deletion::delete(
            store,
            Resource::Pods,
            k,
            &crate::apiserver::deletion::DeleteOptions::default(),
        );
        if deleted.is_ok() {
            let message = format!("Deleted pod: {}", k.1);
            crate::events::record(
                store,
                &rs,
                "Normal",
                "SuccessfulDelete",
                &message,
                component(res),
            );
        }
    }
    update_status(
        store,
        res,
        key,
        &json!({
            "replicas": have,
            "fullyLabeledReplicas": have,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": rs["metadata"]["generation"],
        }),
    );
    // The owning Deployment hears of the new counts through the status
    // change, as upstream's informers tell it (crate::simulation).
}
