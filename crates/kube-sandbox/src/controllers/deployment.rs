//! The Deployment controller: one ReplicaSet named by the template's hash,
//! carrying the Deployment's scale, and the counts reported back in status
//! (kubernetes pkg/controller/deployment/sync.go).

use serde_json::{Value, json};

use super::replicaset::replicas;
use super::update_status;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

/// A short stable hash of the pod template, for the ReplicaSet name.
fn template_hash(template: &Value) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let text = template.to_string();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    (0..10)
        .map(|i| ALPHABET[((h >> (i * 6)) % ALPHABET.len() as u64) as usize] as char)
        .collect()
}

pub(crate) fn reconcile(store: &mut Store, key: &Key) {
    let Some(d) = store.get(Resource::Deployments, key) else {
        return;
    };
    if pods::is_terminating(&d) {
        return;
    }
    let uid = d["metadata"]["uid"].as_str().unwrap_or_default();
    let owned: Vec<(Key, std::sync::Arc<Value>)> = store
        .iter(Resource::ReplicaSets, Some(&key.0), None)
        .filter(|(_, rs)| pods::controller_of(rs).is_some_and(|o| o.uid == uid))
        .map(|(k, rs)| (k.clone(), rs.clone()))
        .collect();
    let want = replicas(&d);
    if owned.is_empty() {
        let hash = template_hash(&d["spec"]["template"]);
        let mut template = d["spec"]["template"].clone();
        template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
        let mut selector = d["spec"]["selector"].clone();
        selector["matchLabels"]["pod-template-hash"] = json!(hash);
        let rs = json!({
            "metadata": {
                "name": format!("{}-{hash}", key.1),
                "namespace": key.0,
                "labels": template["metadata"]["labels"],
                "ownerReferences": [pods::owner_reference(&d, true)],
            },
            "spec": {"replicas": want, "selector": selector, "template": template},
        });
        let _ = store.create(Resource::ReplicaSets, rs);
        return; // the new ReplicaSet's reconcile reports back
    }
    // The newest ReplicaSet carries the Deployment's scale.
    let newest = owned
        .iter()
        .max_by_key(|(_, rs)| {
            rs["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .map(|(k, _)| k.clone())
        .expect("non-empty");
    if store
        .get(Resource::ReplicaSets, &newest)
        .is_some_and(|rs| replicas(&rs) != want)
    {
        let _ = store.modify(Resource::ReplicaSets, &newest, |rs| {
            rs["spec"]["replicas"] = json!(want);
        });
    }
    let (mut total, mut ready, mut updated) = (0, 0, 0);
    for (k, _) in &owned {
        let Some(rs) = store.get(Resource::ReplicaSets, k) else {
            continue;
        };
        let n = rs
            .pointer("/status/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        total += n;
        ready += rs
            .pointer("/status/readyReplicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if *k == newest {
            updated = n;
        }
    }
    update_status(
        store,
        Resource::Deployments,
        key,
        &json!({
            "replicas": total,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "updatedReplicas": updated,
            "unavailableReplicas": (want - ready).max(0),
            "observedGeneration": d["metadata"]["generation"],
        }),
    );
}
