//! StatefulSet controller: pods `NAME-0 .. NAME-(n-1)`, each recreated with
//! the same name (and a new uid) once the old one is gone; with the default
//! OrderedReady policy an ordinal waits until every lower one is Ready.

use crate::objects::path::At;
use serde_json::{Value, json};

use super::template::pod_from_template;
use super::update_status;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

/// Each `volumeClaimTemplate` becomes the pod's claim `TEMPLATE-POD` (made
/// if missing, kept when the pod goes: its data stays) and a volume of the
/// pod (pkg/controller/statefulset/stateful_set_utils.go).
fn claim_volumes(store: &mut Store, sts: &Value, pod: &mut Value, pod_name: &str) {
    let ns = sts["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for t in sts
        .at("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let template = t["metadata"]["name"].as_str().unwrap_or_default();
        let claim = format!("{template}-{pod_name}");
        if store
            .get(
                Resource::PersistentVolumeClaims,
                &(ns.clone(), claim.clone()),
            )
            .is_none()
        {
            let mut pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "namespace": ns,
                    "labels": sts.at("/spec/selector/matchLabels").cloned().unwrap_or(json!({}))},
                "spec": t["spec"].clone(),
                "status": {"phase": "Pending"}});
            if pvc["spec"].get("storageClassName").is_none()
                && let Some(default) = default_storage_class(store)
            {
                pvc["spec"]["storageClassName"] = json!(default);
            }
            let _ = store.create(Resource::PersistentVolumeClaims, pvc);
        }
        let volumes = pod["spec"]
            .as_object_mut()
            .expect("a spec")
            .entry("volumes")
            .or_insert_with(|| json!([]));
        if let Some(list) = volumes.as_array_mut()
            && !list.iter().any(|v| v["name"] == template)
        {
            list.push(json!({"name": template, "persistentVolumeClaim": {"claimName": claim}}));
        }
    }
}

/// The StorageClass marked default, which a claim without a class gets.
fn default_storage_class(store: &Store) -> Option<String> {
    store
        .iter(Resource::StorageClasses, None, None)
        .find(|(_, sc)| {
            pods::annotation(sc, "storageclass.kubernetes.io/is-default-class") == Some("true")
        })
        .map(|(k, _)| k.1.clone())
}

pub(crate) fn reconcile(store: &mut Store, key: &Key) {
    let Some(sts) = store.get(Resource::StatefulSets, key) else {
        return;
    };
    if pods::is_terminating(&sts) {
        return;
    }
    let want = sts
        .at("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let parallel = sts.at("/spec/podManagementPolicy").and_then(Value::as_str) == Some("Parallel");
    let (mut ready, mut current) = (0, 0);
    let mut blocked = false;
    for i in 0..want {
        let name = format!("{}-{i}", key.1);
        let pod_key = (key.0.clone(), name.clone());
        // The pod's facts: parsing each replica at every change of the
        // set was a twentieth of a 5,000-node sandbox's simulation.
        match store.pod_facts_of(&pod_key) {
            Some(p) => {
                current += 1;
                if p.ready && !p.terminating {
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
                claim_volumes(store, &sts, &mut pod, &name);
                if let Some(svc) = sts.at("/spec/serviceName") {
                    pod["spec"]["subdomain"] = svc.clone();
                }
                if super::create_pod(store, &sts, pod, "statefulset-controller").is_some() {
                    let message = format!("create Pod {name} in StatefulSet {} successful", key.1);
                    crate::events::record(
                        store,
                        &sts,
                        "Normal",
                        "SuccessfulCreate",
                        &message,
                        "statefulset-controller",
                    );
                }
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
