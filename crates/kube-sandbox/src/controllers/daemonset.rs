//! DaemonSet controller: one pod on every node whose taints it tolerates and
//! that its nodeSelector and node affinity select (see `scheduler::daemon_fits`). Its pods tolerate cordoning, so an
//! evicted DaemonSet pod comes back on the same node, which is why drains
//! leave them alone.

use crate::objects::path::At;
use serde_json::{Value, json};

use super::scheduler::daemon_fits;
use super::template::pod_from_template;
use super::update_status;
use super::work::{Changed, Work};
use crate::objects::pods;
use crate::objects::taints::UNSCHEDULABLE as UNSCHEDULABLE_TAINT;
use crate::resources::Resource;
use crate::store::{Key, Store};

/// The tolerations the DaemonSet controller adds to every pod it makes
/// (pkg/controller/daemon/util.AddOrUpdateDaemonPodTolerations).
fn daemon_tolerations() -> Vec<Value> {
    let mut out: Vec<Value> = [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    .iter()
    .map(|k| json!({"key": k, "operator": "Exists", "effect": "NoExecute"}))
    .collect();
    for k in [
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        UNSCHEDULABLE_TAINT,
    ] {
        out.push(json!({"key": k, "operator": "Exists", "effect": "NoSchedule"}));
    }
    out
}

/// Besides its own objects and pods (crate::controllers::triggers): a node
/// added or removed, which may change where every DaemonSet places pods; a
/// node's new labels or taints, for each DaemonSet whose pod it now admits
/// or refuses where it did not before. As the upstream controller's
/// `updateNode` (pkg/controller/daemon/daemon_controller.go), which enqueues
/// a DaemonSet only when `NodeShouldRunDaemonPod` differs for the old and
/// new node: a cordon's taint, which every daemon pod tolerates, enqueues
/// none (each of 500 cordons made every DaemonSet look at 5,000 nodes).
pub(crate) fn triggers(store: &Store, c: &Changed<'_>, work: &mut Work) {
    if c.resource != Resource::Nodes {
        return;
    }
    let (Some(old), Some(new)) = (c.old, c.new) else {
        work.all_daemonsets = true;
        return;
    };
    let same = |f: &str| old.at(f) == new.at(f);
    if same("/metadata/labels") && same("/spec/taints") {
        return;
    }
    for (key, ds) in store.iter(Resource::DaemonSets, None, None) {
        let pod = daemon_pod(&ds);
        if daemon_fits(&pod, old) != daemon_fits(&pod, new) {
            work.owners.insert((Resource::DaemonSets, key.clone()));
        }
    }
}

/// The pod a DaemonSet makes, before its node is set: its template with
/// the tolerations the controller adds.
fn daemon_pod(ds: &Value) -> Value {
    let mut pod = pod_from_template(ds, None);
    let tolerations = pod["spec"]
        .as_object_mut()
        .expect("spec")
        .entry("tolerations")
        .or_insert_with(|| json!([]));
    if let Some(list) = tolerations.as_array_mut() {
        list.extend(daemon_tolerations());
    }
    pod
}

pub(crate) fn reconcile(store: &mut Store, key: &Key) {
    let Some(ds) = store.get(Resource::DaemonSets, key) else {
        return;
    };
    if pods::is_terminating(&ds) {
        return;
    }
    let template_pod = daemon_pod(&ds);
    // Each node's first live pod of the DaemonSet and whether it is
    // ready, so each node is one lookup.
    let uid = ds["metadata"]["uid"].as_str().unwrap_or_default();
    let mut live: std::collections::HashMap<String, bool> = std::collections::HashMap::new();
    for (_, p) in store.owned_pod_facts(uid) {
        if let Some(n) = p.node.as_deref()
            && !p.terminating
            && !p.terminal
        {
            live.entry(n.to_string()).or_insert(p.ready);
        }
    }
    let nodes: Vec<(String, bool)> = store
        .iter(Resource::Nodes, None, None)
        .map(|(_, n)| {
            let fits = daemon_fits(&template_pod, &n);
            (
                n["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                fits,
            )
        })
        .collect();
    let (mut desired, mut current, mut ready) = (0, 0, 0);
    for (node, fits) in nodes {
        if !fits {
            continue;
        }
        desired += 1;
        current += 1;
        if let Some(&is_ready) = live.get(&node) {
            if is_ready {
                ready += 1;
            }
        } else {
            let mut pod = template_pod.clone();
            pod["spec"]["nodeName"] = json!(node);
            if let Some(pod) = super::create_pod(store, &ds, pod, "daemonset-controller") {
                crate::events::created_pod(store, &ds, &pod, "daemonset-controller");
            }
        }
    }
    let status = json!({
        "desiredNumberScheduled": desired,
        "currentNumberScheduled": current,
        "updatedNumberScheduled": current,
        "numberReady": ready,
        "numberAvailable": ready,
        "numberMisscheduled": 0,
        "observedGeneration": ds["metadata"]["generation"],
    });
    update_status(store, Resource::DaemonSets, key, &status);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(pool: &str, taints: &Value) -> Value {
        json!({"metadata": {"name": "n1", "labels": {"pool": pool}}, "spec": {"taints": taints}})
    }

    /// Which DaemonSets a node's change from `old` to `new` owes a look.
    fn owed(old: &Value, new: &Value) -> Vec<String> {
        let mut store = Store::new(100);
        let ds = |name: &str, pod_spec: Value| {
            let mut spec = json!({"containers": [{"name": "c", "image": "i"}]});
            for (k, v) in pod_spec.as_object().unwrap() {
                spec[k] = v.clone();
            }
            json!({"metadata": {"name": name, "namespace": "kube-system", "uid": name},
                   "spec": {"selector": {"matchLabels": {"app": name}},
                            "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}})
        };
        for (name, pod_spec) in [
            ("agent", json!({})),
            (
                "gpu-driver",
                json!({"tolerations": [{"key": "gpu", "operator": "Exists"}]}),
            ),
            ("pool-b-agent", json!({"nodeSelector": {"pool": "b"}})),
        ] {
            store
                .load(Resource::DaemonSets, ds(name, pod_spec))
                .unwrap();
        }
        let mut work = Work::default();
        let changed = Changed {
            resource: Resource::Nodes,
            key: (String::new(), "n1".into()),
            old: Some(old),
            new: Some(new),
        };
        triggers(&store, &changed, &mut work);
        assert!(!work.all_daemonsets);
        work.owners.into_iter().map(|(_, k)| k.1).collect()
    }

    #[test]
    fn a_node_change_owes_a_look_only_to_the_daemonsets_it_admits_or_refuses_anew() {
        let none = json!([]);
        let cordon = json!([{"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}]);
        let gpu = json!([{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]);
        // Every daemon pod tolerates the cordon's taint.
        assert!(owed(&node("a", &none), &node("a", &cordon)).is_empty());
        // Only the DaemonSets that do not tolerate the new taint, or no
        // longer meet it (the one selecting pool b never ran here).
        assert_eq!(owed(&node("a", &none), &node("a", &gpu)), ["agent"]);
        assert_eq!(owed(&node("a", &gpu), &node("a", &none)), ["agent"]);
        // A label that a DaemonSet's nodeSelector now selects.
        assert_eq!(owed(&node("a", &none), &node("b", &none)), ["pool-b-agent"]);
        // Nothing that matters to a DaemonSet changed.
        assert!(owed(&node("a", &gpu), &node("a", &gpu)).is_empty());
    }
}
