//! The Deployment controller: a ReplicaSet per template (named by its
//! hash, numbered by the revision annotation), rolled from the old to the
//! new within `maxSurge` and `maxUnavailable`, or recreated, and the counts
//! reported back in status (kubernetes pkg/controller/deployment/sync.go,
//! rolling.go, recreate.go).

use crate::objects::path::At;
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

/// `maxSurge`/`maxUnavailable` as a count of `replicas`: percentages round
/// up for the surge and down for unavailability (deployment util
/// ResolveFenceposts); both zero means one may be unavailable.
fn fenceposts(d: &Value, replicas: i64) -> (i64, i64) {
    let resolve = |field: &str, default: &str, up: bool| {
        let v = d
            .at(&format!("/spec/strategy/rollingUpdate/{field}"))
            .cloned()
            .unwrap_or_else(|| json!(default));
        match v {
            Value::Number(n) => n.as_i64().unwrap_or(0),
            Value::String(s) => {
                let pct: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
                let scaled = pct * replicas;
                if up {
                    (scaled + 99) / 100
                } else {
                    scaled / 100
                }
            }
            _ => 0,
        }
    };
    let surge = resolve("maxSurge", "25%", true);
    let unavailable = resolve("maxUnavailable", "25%", false);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

fn status_count(rs: &Value, field: &str) -> i64 {
    rs.at(&format!("/status/{field}"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn set_replicas(store: &mut Store, key: &Key, n: i64) {
    if store
        .get(Resource::ReplicaSets, key)
        .is_some_and(|rs| replicas(&rs) != n)
    {
        let _ = store.modify(Resource::ReplicaSets, key, |rs| {
            rs["spec"]["replicas"] = json!(n);
        });
    }
}

/// A new ReplicaSet for the Deployment's current template.
fn new_replica_set(d: &Value, key: &Key, hash: &str, replicas: i64, revision: i64) -> Value {
    let mut template = d["spec"]["template"].clone();
    template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
    let mut selector = d["spec"]["selector"].clone();
    selector["matchLabels"]["pod-template-hash"] = json!(hash);
    json!({
        "metadata": {
            "name": format!("{}-{hash}", key.1),
            "namespace": key.0,
            "labels": template["metadata"]["labels"],
            "annotations": {REVISION: revision.to_string()},
            "ownerReferences": [pods::owner_reference(d, true)],
        },
        "spec": {"replicas": replicas, "selector": selector, "template": template},
    })
}

/// Is this ReplicaSet's template the Deployment's, but for the
/// `pod-template-hash` label (deployment util EqualIgnoreHash)?
fn same_template(rs: &Value, d: &Value) -> bool {
    // Compared part by part: cloning every ReplicaSet's template to drop
    // one label was most of this controller's time on a large cluster.
    type Map = serde_json::Map<String, Value>;
    fn sub<'a>(m: Option<&'a Map>, field: &str) -> Option<&'a Map> {
        m?.get(field)?.as_object()
    }
    fn eq_except(a: Option<&Map>, b: Option<&Map>, skip: &str) -> bool {
        let within = |x: &Map, y: &Map| x.iter().all(|(k, v)| k == skip || y.get(k) == Some(v));
        match (a, b) {
            (Some(a), Some(b)) => within(a, b) && within(b, a),
            (a, b) => a.is_none_or(Map::is_empty) && b.is_none_or(Map::is_empty),
        }
    }
    let (t, u) = (
        rs["spec"]["template"].as_object(),
        d["spec"]["template"].as_object(),
    );
    let (tm, um) = (sub(t, "metadata"), sub(u, "metadata"));
    eq_except(t, u, "metadata")
        && eq_except(tm, um, "labels")
        && eq_except(sub(tm, "labels"), sub(um, "labels"), "pod-template-hash")
}

const REVISION: &str = "deployment.kubernetes.io/revision";

fn revision(rs: &Value) -> i64 {
    pods::annotation(rs, REVISION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// One step of the rollout (kubernetes pkg/controller/deployment/
/// rolling.go and recreate.go): the ReplicaSet of the current template
/// grows by what `maxSurge` allows, the old ones shrink by what
/// `maxUnavailable` allows once new pods are available; with `Recreate`,
/// the old ones go to zero first. Readiness changes call this again.
pub(crate) fn reconcile(store: &mut Store, key: &Key) {
    let Some(d) = store.get(Resource::Deployments, key) else {
        return;
    };
    if pods::is_terminating(&d) {
        return;
    }
    let uid = d["metadata"]["uid"].as_str().unwrap_or_default();
    let owned: Vec<(Key, std::sync::Arc<Value>)> = store
        .owned_of(Resource::ReplicaSets, uid)
        .into_iter()
        .filter_map(|k| Some((store.get(Resource::ReplicaSets, &k)?, k)))
        .filter(|(rs, _)| pods::controller_of(rs).is_some_and(|o| o.uid == uid))
        .map(|(rs, k)| (k, rs))
        .collect();
    let want = replicas(&d);
    let current = owned
        .iter()
        .find(|(_, rs)| same_template(rs, &d))
        .map(|(k, _)| k.clone());
    let Some(new_key) = current else {
        // A new template (the first, or a change such as `rollout
        // restart`): its ReplicaSet starts empty unless nothing runs yet.
        let next = owned.iter().map(|(_, rs)| revision(rs)).max().unwrap_or(0) + 1;
        let start = if owned.is_empty() { want } else { 0 };
        let hash = template_hash(&d["spec"]["template"]);
        let _ = store.create(
            Resource::ReplicaSets,
            new_replica_set(&d, key, &hash, start, next),
        );
        return; // the new ReplicaSet's reconcile reports back
    };
    let mut old: Vec<(Key, std::sync::Arc<Value>)> = owned
        .iter()
        .filter(|(k, _)| *k != new_key)
        .cloned()
        .collect();
    old.sort_by_key(|(_, rs)| revision(rs));
    let new_rs = store.get(Resource::ReplicaSets, &new_key).expect("owned");
    let recreate = d.at("/spec/strategy/type").and_then(Value::as_str) == Some("Recreate");
    if old.is_empty() {
        set_replicas(store, &new_key, want);
    } else if recreate {
        let old_pods: i64 = old.iter().map(|(_, rs)| status_count(rs, "replicas")).sum();
        for (k, _) in &old {
            set_replicas(store, k, 0);
        }
        if old_pods == 0 {
            set_replicas(store, &new_key, want);
        }
    } else {
        let (surge, unavailable) = fenceposts(&d, want);
        let all_spec: i64 = owned.iter().map(|(_, rs)| replicas(rs)).sum();
        let new_spec = replicas(&new_rs);
        if all_spec < want + surge && new_spec < want {
            let grow = (want + surge - all_spec).min(want - new_spec);
            set_replicas(store, &new_key, new_spec + grow);
        }
        let all_pods: i64 = owned
            .iter()
            .map(|(_, rs)| status_count(rs, "replicas"))
            .sum();
        let new_unavailable =
            (replicas(&new_rs) - status_count(&new_rs, "availableReplicas")).max(0);
        let mut room = all_pods - (want - unavailable) - new_unavailable;
        for (k, rs) in &old {
            if room <= 0 {
                break;
            }
            let n = replicas(rs);
            let cut = n.min(room);
            set_replicas(store, k, n - cut);
            room -= cut;
        }
    }
    let (mut total, mut ready, mut updated) = (0, 0, 0);
    for (k, _) in &owned {
        let Some(rs) = store.get(Resource::ReplicaSets, k) else {
            continue;
        };
        let n = status_count(&rs, "replicas");
        total += n;
        ready += status_count(&rs, "readyReplicas");
        if *k == new_key {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_is_the_same_but_for_its_hash_label() {
        let d = json!({"spec": {"template": {"metadata": {"labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "i:1"}]}}}});
        let mut rs = json!({"spec": {"template": d["spec"]["template"].clone()}});
        rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] = json!("abc");
        assert!(same_template(&rs, &d));
        let mut restarted = d.clone();
        restarted["spec"]["template"]["metadata"]["annotations"] =
            json!({"kubectl.kubernetes.io/restartedAt": "now"});
        assert!(!same_template(&rs, &restarted));
        let mut relabelled = d.clone();
        relabelled["spec"]["template"]["metadata"]["labels"]["tier"] = json!("x");
        assert!(!same_template(&rs, &relabelled));
        let mut new_image = d.clone();
        new_image["spec"]["template"]["spec"]["containers"][0]["image"] = json!("i:2");
        assert!(!same_template(&rs, &new_image));
    }
}
