//! StatefulSet controller: pods `NAME-0 .. NAME-(n-1)`, each recreated with
//! the same name (and a new uid) once the old one is gone; with the default
//! OrderedReady policy an ordinal waits until every lower one is Ready.

use serde_json::{Value, json};

use super::template::pod_from_template;
use super::update_status;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

pub(crate) fn reconcile(store: &mut Store, key: &Key) {
    let Some(sts) = store.get(Resource::StatefulSets, key) else {
        return;
    };
    if pods::is_terminating(&sts) {
        return;
    }
    let want = sts
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let parallel = sts
        .pointer("/spec/podManagementPolicy")
        .and_then(Value::as_str)
        == Some("Parallel");
    let (mut ready, mut current) = (0, 0);
    let mut blocked = false;
    for i in 0..want {
        let name = format!("{}-{i}", key.1);
        let pod_key = (key.0.clone(), name.clone());
        match store.get(Resource::Pods, &pod_key) {
            Some(p) => {
                current += 1;
                if pods::is_ready(&p) && !pods::is_terminating(&p) {
                    ready += 1;
                } else if !parallel {
                    blocked = true;
                }
            }
            None if blocked => {}
            None => {
                let mut pod = pod_from_template(&sts, Some(name.clone()));
                pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = json!(name);
                pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = json!(i.to_string());
                pod["spec"]["hostname"] = json!(name);
                if let Some(svc) = sts.pointer("/spec/serviceName") {
                    pod["spec"]["subdomain"] = svc.clone();
                }
                let _ = store.create(Resource::Pods, pod);
                current += 1;
                blocked |= !parallel;
            }
        }
    }
    let status = json!({
        "replicas": current,
        "readyReplicas": ready,
        "currentReplicas": current,
        "updatedReplicas": current,
        "availableReplicas": ready,
        "observedGeneration": sts["metadata"]["generation"],
    });
    update_status(store, Resource::StatefulSets, key, &status);
}
