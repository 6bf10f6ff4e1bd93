//! The scheduler: kube-scheduler's default filters, in its order, each in
//! its own file citing the upstream plugin: NodeUnschedulable,
//! TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
//! VolumeBinding with VolumeZone, PodTopologySpread, InterPodAffinity. A
//! node that fails one is counted
//! under that filter's reason (NodeResourcesFit under each shortage); a pod
//! that fits nowhere stays Pending with `PodScheduled=False` and a
//! FailedScheduling Event worded as kube-scheduler words it
//! (pkg/scheduler/framework/types.go, FitError: "0/5 nodes are available:
//! 2 Insufficient cpu, 3 node(s) didn't match pod anti-affinity rules.").
//!
//! Among the nodes that fit, the score is simpler than kube-scheduler's
//! weighted plugins but leans the same way: fewest replicas of the same
//! owner (the default topology spreading), fewest untolerated
//! PreferNoSchedule taints, most preferred node affinity, least requested
//! cpu and memory, fewest pods.
//!
//! Like kube-scheduler (pkg/scheduler/schedule_one.go,
//! `numFeasibleNodesToFind`), a large cluster is not searched whole: from
//! 100 nodes on, the search stops once an adaptive share of the nodes (50 %
//! less one point per 125 nodes, at least 5 % and 100 nodes) fit, and the
//! next search starts where this one stopped. A pod that fits nowhere is
//! still checked against every node.
//!
//! A NotReady node counts as carrying `node.kubernetes.io/not-ready:
//! NoSchedule`, the taint the node lifecycle controller gives it.

mod inter_pod_affinity;
mod node_affinity;
mod node_ports;
mod node_resources_fit;
mod node_unschedulable;
mod pod_topology_spread;
mod taint_toleration;
mod volume_binding;

use crate::objects::path::At;
use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::work::{Changed, Work};
use crate::clock::now_rfc3339;
use crate::objects::taints::NOT_READY;
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::store::{Key, NodeInfo, Store};

const SCHEDULER: &str = "default-scheduler";

/// A label of an object's metadata.
pub(super) fn label<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.at("/metadata/labels")?.get(key)?.as_str()
}

/// The node as the filters see it: a NotReady node with the not-ready taint.
fn as_scheduled<'a>(node: &'a Value, facts: &nodes::Facts) -> std::borrow::Cow<'a, Value> {
    let tainted = || {
        node.at("/spec/taints")
            .and_then(Value::as_array)
            .is_some_and(|ts| ts.iter().any(|t| t["key"] == NOT_READY))
    };
    if facts.ready || tainted() {
        return std::borrow::Cow::Borrowed(node);
    }
    let mut node = node.clone();
    let taint = json!({"key": NOT_READY, "effect": "NoSchedule"});
    match node
        .pointer_mut("/spec/taints")
        .and_then(Value::as_array_mut)
    {
        Some(list) => list.push(taint),
        None => node["spec"]["taints"] = json!([taint]),
    }
    std::borrow::Cow::Owned(node)
}

/// Would the DaemonSet controller run this pod on this node? Its node
/// affinity and taints decide (pkg/controller/daemon NodeShouldRunDaemonPod);
/// cordoning and readiness do not, as its pods tolerate both.
pub(crate) fn daemon_fits(pod: &Value, node: &Value) -> bool {
    node_affinity::matches(pod, node) && taint_toleration::filter(pod, node).is_ok()
}

/// One scheduling attempt's view of a pod: what every node is checked against.
struct Cycle<'a> {
    store: &'a Store,
    pod: &'a Value,
    nodes_wanted: node_affinity::Wanted<'a>,
    /// It tolerates a cordoned node's taint (DaemonSet pods do).
    cordon_tolerated: bool,
    requests: pods::Requests,
    host_ports: Vec<(String, String, i64)>,
    spread: pod_topology_spread::Spread,
    affinity: inter_pod_affinity::State,
    volumes: volume_binding::Volumes,
    /// Replicas of the pod's owner on each node.
    siblings: HashMap<&'a str, usize>,
}

/// Lower is better; compared in order.
#[derive(PartialEq, PartialOrd)]
struct Score(usize, usize, i64, f64, usize);

impl<'a> Cycle<'a> {
    fn new(store: &'a Store, pod: &'a Value, minor: u32) -> Self {
        let mut siblings = HashMap::new();
        if let Some(owner) = pods::controller_of(pod) {
            // From the pods' facts: parsing each sibling to read its node
            // was most of a scheduling cycle on a cluster of 150,000 pods.
            for (_, f) in store.owned_pod_facts(&owner.uid) {
                if let Some(n) = f.node.as_deref() {
                    *siblings.entry(n).or_default() += 1;
                }
            }
        }
        Cycle {
            store,
            pod,
            nodes_wanted: node_affinity::Wanted::of(pod),
            cordon_tolerated: node_unschedulable::filter(pod, true).is_ok(),
            requests: pods::requests(pod),
            host_ports: node_ports::host_ports(pod),
            spread: pod_topology_spread::prefilter(store, pod),
            affinity: inter_pod_affinity::prefilter(store, pod),
            volumes: volume_binding::prefilter(store, pod, minor),
            siblings,
        }
    }

    /// Every reason the node refuses the pod, from the first filter that
    /// refuses it; empty when it fits.
    fn refusals(
        &self,
        node: &Value,
        name: &str,
        facts: &nodes::Facts,
        info: &NodeInfo,
    ) -> Vec<String> {
        let one = |r: Result<(), String>| r.err().into_iter().collect::<Vec<_>>();
        // In kube-scheduler's order, each only if those before pass.
        if facts.unschedulable && !self.cordon_tolerated {
            return vec![node_unschedulable::REASON.to_string()];
        }
        let node = as_scheduled(node, facts);
        let node = node.as_ref();
        // A Ready node without taints has none to tolerate.
        if facts.tainted || !facts.ready {
            let taints = taint_toleration::filter(self.pod, node);
            if taints.is_err() {
                return one(taints);
            }
        }
        let affinity = self.nodes_wanted.filter(node);
        if affinity.is_err() {
            return one(affinity);
        }
        if !self.host_ports.is_empty() {
            let on_node: Vec<_> = self
                .store
                .pods_on_node(name)
                .into_iter()
                .filter_map(|k| self.store.get(Resource::Pods, &k))
                .filter(|p| !pods::is_terminal(p))
                .collect();
            let r = node_ports::filter(&self.host_ports, on_node.iter().map(AsRef::as_ref));
            if r.is_err() {
                return one(r);
            }
        }
        let short =
            node_resources_fit::shortages(&self.requests, &facts.allocatable, &info.requested);
        if !short.is_empty() {
            return short;
        }
        [
            volume_binding::filter(&self.volumes, node),
            pod_topology_spread::filter(&self.spread, node),
            inter_pod_affinity::filter(&self.affinity, node),
        ]
        .into_iter()
        .find(Result::is_err)
        .map(one)
        .unwrap_or_default()
    }

    fn score(&self, node: &Value, name: &str, facts: &nodes::Facts, info: &NodeInfo) -> Score {
        Score(
            self.siblings.get(name).copied().unwrap_or(0),
            if facts.tainted {
                taint_toleration::preferred_against(self.pod, node)
            } else {
                0
            },
            -self.nodes_wanted.preferred_weight(node),
            node_resources_fit::allocated_share(
                &self.requests,
                &facts.allocatable,
                &info.requested,
            ),
            info.bound,
        )
    }

    /// The best node, or kube-scheduler's message for why none fits. The
    /// search starts after the `start` node and moves it to the last node it
    /// looked at.
    fn place(&self, start: &mut Option<String>) -> Result<String, String> {
        let all = self.store.len(Resource::Nodes);
        if let Some(why) = volume_binding::nowhere(&self.volumes) {
            return Err(format!("0/{all} nodes are available: {why}."));
        }
        let wanted = feasible_nodes_to_find(all);
        let mut best: Option<(Score, &String)> = None;
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let (mut total, mut feasible) = (0, 0);
        let mut last = None;
        for (name, node, facts, info) in self.store.nodes_to_schedule_on(start.as_deref()) {
            if feasible >= wanted {
                break;
            }
            total += 1;
            last = Some(name);
            let refused = self.refusals(node, name, facts, info);
            if !refused.is_empty() {
                for r in refused {
                    *reasons.entry(r).or_default() += 1;
                }
                continue;
            }
            feasible += 1;
            let score = self.score(node, name, facts, info);
            if best.as_ref().is_none_or(|(b, _)| score < *b) {
                best = Some((score, name));
            }
        }
        if let Some(last) = last {
            *start = Some(last.clone());
        }
        match best {
            Some((_, node)) => Ok(node.clone()),
            None => Err(fit_error(total, &reasons)),
        }
    }
}

/// How many fitting nodes end the search (kube-scheduler's
/// `numFeasibleNodesToFind` with the default `percentageOfNodesToScore`).
fn feasible_nodes_to_find(all: usize) -> usize {
    const MIN: usize = 100;
    if all < MIN {
        return all;
    }
    let percentage = 50usize.saturating_sub(all / 125).max(5);
    (all * percentage / 100).max(MIN)
}

/// "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were
/// unschedulable." Reasons sorted as kube-scheduler sorts them: by the
/// whole "count reason" string.
fn fit_error(total: usize, reasons: &BTreeMap<String, usize>) -> String {
    let mut parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.sort();
    if parts.is_empty() {
        return format!("0/{total} nodes are available.");
    }
    format!("0/{total} nodes are available: {}.", parts.join(", "))
}

/// A pod with no node that is not being deleted waits for the scheduler.
/// Pending pods are tried again when room or volumes may have appeared: a
/// pod finished or gone, any node written, a claim, volume or storage class
/// written.
pub(crate) fn triggers(c: &Changed<'_>, work: &mut Work) {
    match c.resource {
        Resource::Pods => match c.new {
            Some(new) => {
                if pods::node_name(new).is_none() && !pods::is_terminating(new) {
                    work.unscheduled.insert(c.key.clone());
                }
                if pods::is_terminal(new) && c.old.is_some_and(|o| !pods::is_terminal(o)) {
                    work.retry_pending = true;
                }
            }
            None => work.retry_pending = true,
        },
        Resource::Nodes
        | Resource::PersistentVolumes
        | Resource::PersistentVolumeClaims
        | Resource::StorageClasses => work.retry_pending = true,
        _ => {}
    }
}

/// Tries to bind one pod (`minor`: the Kubernetes minor the sandbox
/// serves, for reasons kube-scheduler reworded). Returns false when it
/// stays pending.
#[cfg(test)]
pub(crate) fn schedule(store: &mut Store, key: &Key, minor: u32) -> bool {
    schedule_from(store, key, minor, &mut None)
}

/// `schedule`, the search starting after the `start` node (the scheduler's
/// `nextStartNodeIndex`, which it moves on; a name, not an index, so no
/// search walks the nodes before it).
pub(crate) fn schedule_from(
    store: &mut Store,
    key: &Key,
    minor: u32,
    start: &mut Option<String>,
) -> bool {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return true;
    };
    if pods::node_name(&pod).is_some() || pods::is_terminating(&pod) || pods::is_terminal(&pod) {
        return true;
    }
    let verdict = Cycle::new(store, &pod, minor).place(start);
    let now = now_rfc3339();
    match verdict {
        Ok(node) => {
            let _ = store.modify(Resource::Pods, key, |p| {
                p["spec"]["nodeName"] = json!(node);
                pods::set_condition(p, "PodScheduled", "True", "", "", &now);
            });
            volume_binding::provision(store, &pod, &node);
            let message = format!("Successfully assigned {}/{} to {node}", key.0, key.1);
            crate::events::record(store, &pod, "Normal", "Scheduled", &message, SCHEDULER);
            true
        }
        Err(message) => {
            let told = pods::condition(&pod, "PodScheduled")
                .is_some_and(|c| c["message"] == message.as_str());
            let _ = store.modify(Resource::Pods, key, |p| {
                pods::set_condition(p, "PodScheduled", "False", "Unschedulable", &message, &now);
            });
            // One Event per new reason, not one per retry.
            if !told {
                crate::events::record(
                    store,
                    &pod,
                    "Warning",
                    "FailedScheduling",
                    &message,
                    SCHEDULER,
                );
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn large_clusters_are_searched_in_part_as_kube_scheduler_does() {
        assert_eq!(feasible_nodes_to_find(50), 50);
        assert_eq!(feasible_nodes_to_find(150), 100);
        assert_eq!(feasible_nodes_to_find(1000), 420);
        assert_eq!(feasible_nodes_to_find(5000), 500);
        assert_eq!(feasible_nodes_to_find(20000), 1000);
    }

    use super::*;

    fn node(name: &str, extra: &Value) -> Value {
        let mut n = json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}]}});
        json_merge(&mut n, extra);
        n
    }

    fn json_merge(into: &mut Value, from: &Value) {
        match (into, from) {
            (Value::Object(a), Value::Object(b)) => {
                for (k, v) in b {
                    json_merge(a.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
            (a, b) => *a = b.clone(),
        }
    }

    #[test]
    fn a_pod_that_fits_nowhere_gets_the_schedulers_message_and_one_event() {
        let mut store = Store::new(1000);
        store
            .load(
                Resource::Nodes,
                node("n1", &json!({"spec": {"unschedulable": true}})),
            )
            .unwrap();
        store
            .load(
                Resource::Nodes,
                node("n2", &json!({"status": {"allocatable": {"cpu": "1"}}})),
            )
            .unwrap();
        store
            .load(Resource::Nodes, node("n3", &json!({"spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}})))
            .unwrap();
        store
            .load(
                Resource::Nodes,
                node("n4", &json!({"status": {"allocatable": {"cpu": "1"}}})),
            )
            .unwrap();
        let pod = json!({"metadata": {"name": "big", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m"}}}]}});
        store.load(Resource::Pods, pod).unwrap();
        let key = ("default".to_string(), "big".to_string());
        assert!(!schedule(&mut store, &key, 33));
        let p = store.get(Resource::Pods, &key).unwrap();
        let cond = pods::condition(&p, "PodScheduled").unwrap();
        assert_eq!(cond["status"], "False");
        assert_eq!(
            cond["message"],
            "0/4 nodes are available: 1 node(s) had untolerated taint {gpu: yes}, 1 node(s) were unschedulable, 2 Insufficient cpu."
        );
        assert!(!schedule(&mut store, &key, 33), "again");
        let events: Vec<_> = store
            .iter(Resource::Events, None, None)
            .filter(|(_, e)| e["reason"] == "FailedScheduling")
            .collect();
        assert_eq!(events.len(), 1, "told once");
        // Room on n2: scheduled there, with a Scheduled event.
        store
            .modify(Resource::Nodes, &(String::new(), "n2".into()), |n| {
                n["status"]["allocatable"]["cpu"] = json!("4");
            })
            .unwrap();
        assert!(schedule(&mut store, &key, 33));
        assert_eq!(
            store.get(Resource::Pods, &key).unwrap()["spec"]["nodeName"],
            "n2"
        );
    }

    #[test]
    fn a_not_ready_node_takes_only_pods_that_tolerate_it() {
        let n = node(
            "n1",
            &json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
        );
        let store = Store::new(10);
        let pod = json!({"metadata": {"namespace": "d"}, "spec": {}});
        let cycle = Cycle::new(&store, &pod, 33);
        assert_eq!(
            cycle.refusals(&n, "n1", &nodes::Facts::of(&n), &NodeInfo::default()),
            ["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"]
        );
    }
}
