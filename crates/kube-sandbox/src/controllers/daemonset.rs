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
/// added, removed or with new labels or taints, which may change where every
/// DaemonSet places pods (they tolerate the cordon).
pub(crate) fn triggers(c: &Changed<'_>, work: &mut Work) {
    let field = |o: Option<&Value>, f: &str| o.and_then(|n| n.at(f)).cloned();
    if c.resource == Resource::Nodes
        && (c.old.is_none()
            || c.new.is_none()
            || field(c.old, "/metadata/labels") != field(c.new, "/metadata/labels")
            || field(c.old, "/spec/taints") != field(c.new, "/spec/taints"))
    {
        work.all_daemonsets = true;
    }
}

pub(crate) fn reconcile(store: &mut Store, key: &Key) {
    let Some(ds) = store.get(Resource::DaemonSets, key) else {
        return;
    };
    if pods::is_terminating(&ds) {
        return;
    }
    let mut template_pod = pod_from_template(&ds, None);
    let tolerations = template_pod["spec"]
        .as_object_mut()
        .expect("spec")
        .entry("tolerations")
        .or_insert_with(|| json!([]));
    if let Some(list) = tolerations.as_array_mut() {
        list.extend(daemon_tolerations());
    }
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
            if let Ok(pod) = store.create(Resource::Pods, pod) {
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
