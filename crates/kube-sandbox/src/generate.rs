//! Synthetic clusters for tests, benchmarks and the scale check: nodes, a
//! DaemonSet on every node, and Deployments spread over the nodes, each with
//! a PodDisruptionBudget, all pods already Running and Ready.

use serde_json::{Value, json};

use crate::clock::IdGen;
use crate::resources::Resource;

/// The shape of a generated cluster.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    /// How many worker nodes.
    pub nodes: usize,
    /// Pods per node, the DaemonSet pod included.
    pub pods_per_node: usize,
    /// Replicas of each generated Deployment.
    pub replicas_per_deployment: usize,
    /// How many namespaces the workloads spread over.
    pub namespaces: usize,
    /// Seconds each generated pod takes to stop and to become Ready.
    pub shutdown_seconds: f64,
    /// Seconds a generated pod takes to become Ready.
    pub ready_seconds: f64,
    /// A realistic mix instead of uniform Deployments: PDBs with
    /// maxUnavailable 1 and minAvailable 80%, StatefulSets,
    /// system-cluster-critical workloads, and every 7th workload with a
    /// shutdown three times as long.
    pub mix: bool,
    /// The first this many nodes get the label `DRAIN_LABEL=yes`.
    pub labelled_nodes: usize,
}

/// The label benchmarks select the nodes to drain by.
pub const DRAIN_LABEL: &str = "bench.kubectl-maintain.io/drain";

/// What kind of workload the `d`th one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// A Deployment with a `maxUnavailable: 1` PDB.
    Web,
    /// A Deployment with a `minAvailable: 80%` PDB.
    Quorum,
    /// A StatefulSet with a `maxUnavailable: 1` PDB.
    Stateful,
    /// A system-cluster-critical Deployment with a `maxUnavailable: 1` PDB.
    Critical,
}

/// The `d`th workload of a generated cluster.
pub fn workload(spec: &ClusterSpec, d: usize) -> Workload {
    if !spec.mix {
        return Workload::Web;
    }
    match d % 10 {
        6 | 7 => Workload::Quorum,
        8 => Workload::Stateful,
        9 => Workload::Critical,
        _ => Workload::Web,
    }
}

/// Seconds a pod of the `d`th workload takes to stop.
pub fn shutdown_of(spec: &ClusterSpec, d: usize) -> f64 {
    if spec.mix && d % 7 == 3 {
        spec.shutdown_seconds * 3.0
    } else {
        spec.shutdown_seconds
    }
}

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec {
            nodes: 10,
            pods_per_node: 10,
            replicas_per_deployment: 5,
            namespaces: 5,
            shutdown_seconds: 0.2,
            ready_seconds: 0.2,
            mix: false,
            labelled_nodes: 0,
        }
    }
}

/// The name of the `i`th generated node.
pub fn node_name(i: usize) -> String {
    format!("node-{i:05}")
}

fn ready_status(node: &str, ip: &str) -> Value {
    json!({
        "phase": "Running",
        "podIP": ip,
        "hostIP": "10.0.0.1",
        "startTime": "2026-01-01T00:00:00Z",
        "qosClass": "BestEffort",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
        ],
        "containerStatuses": [{"name": "main", "ready": true, "started": true, "restartCount": 0,
            "image": "sandbox", "imageID": "", "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}],
        "nominatedNodeName": null,
        "_node": node,
    })
}

fn knobs(spec: &ClusterSpec, shutdown: f64) -> Value {
    json!({
        crate::config::SHUTDOWN_SECONDS: shutdown.to_string(),
        crate::config::READY_SECONDS: spec.ready_seconds.to_string(),
    })
}

fn owner(kind: &str, api: &str, name: &str, uid: &str) -> Value {
    json!([{"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}])
}

/// The objects of a synthetic cluster, in load order.
pub fn cluster(spec: &ClusterSpec) -> Vec<(Resource, Value)> {
    let mut out = Vec::new();
    each(spec, &mut |pair| out.push(pair));
    out
}

/// The same objects, made as they are taken: a sandbox loading them never
/// holds them all as parsed trees at once (150,000 pods would be gigabytes).
pub fn stream(spec: &ClusterSpec) -> impl Iterator<Item = (Resource, Value)> + use<> {
    // Handed over in batches: one object at a time, the two threads spent
    // a fifth of their time waking each other.
    const BATCH: usize = 256;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(Resource, Value)>>(8);
    let spec = spec.clone();
    std::thread::spawn(move || {
        let mut batch = Vec::with_capacity(BATCH);
        each(&spec, &mut |pair| {
            batch.push(pair);
            if batch.len() == BATCH {
                // The reader stopping early is not an error.
                let _ = tx.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
            }
        });
        let _ = tx.send(batch);
    });
    rx.into_iter().flatten()
}

/// Hands every object of the cluster to `emit`, in load order.
#[allow(clippy::too_many_lines)] // long on purpose: the synthetic cluster's objects in load order, one block per kind
fn each(spec: &ClusterSpec, emit: &mut dyn FnMut((Resource, Value))) {
    let ids = IdGen::new(42);
    for i in 0..spec.nodes {
        let name = node_name(i);
        let mut labels = json!({"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"});
        if i < spec.labelled_nodes {
            labels[DRAIN_LABEL] = json!("yes");
        }
        emit((
            Resource::Nodes,
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {}}),
        ));
    }
    let template_spec = json!({"containers": [{"name": "main", "image": "sandbox"}], "terminationGracePeriodSeconds": 30});
    // A DaemonSet on every node.
    let ds_uid = ids.uid();
    emit((
        Resource::DaemonSets,
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "node-agent", "namespace": "kube-system", "uid": ds_uid, "generation": 1},
            "spec": {"selector": {"matchLabels": {"app": "node-agent"}},
                "template": {"metadata": {"labels": {"app": "node-agent"}, "annotations": knobs(spec, spec.shutdown_seconds)}, "spec": template_spec}}}),
    ));
    let mut pod_counter = 0u64;
    let mut ip = || {
        pod_counter += 1;
        format!(
            "10.{}.{}.{}",
            (pod_counter >> 16) & 0xff,
            (pod_counter >> 8) & 0xff,
            pod_counter & 0xff
        )
    };
    for i in 0..spec.nodes {
        let node = node_name(i);
        let name = format!("node-agent-{i:05}");
        let mut status = ready_status(&node, &ip());
        status.as_object_mut().expect("object").remove("_node");
        emit((
            Resource::Pods,
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "kube-system", "labels": {"app": "node-agent"},
                    "annotations": knobs(spec, spec.shutdown_seconds), "ownerReferences": owner("DaemonSet", "apps/v1", "node-agent", &ds_uid)},
                "spec": {"nodeName": node, "containers": template_spec["containers"], "terminationGracePeriodSeconds": 30,
                    "tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]},
                "status": status}),
        ));
    }
    let app_pods = spec.nodes * spec.pods_per_node.saturating_sub(1);
    let deployments = app_pods.div_ceil(spec.replicas_per_deployment.max(1));
    let mut slot = 0usize;
    for d in 0..deployments {
        let kind = workload(spec, d);
        let ns = if kind == Workload::Critical {
            "kube-system".to_string()
        } else {
            format!("team-{:03}", d % spec.namespaces.max(1))
        };
        let name = format!("app-{d:05}");
        let labels = json!({"app": name});
        let replicas = spec
            .replicas_per_deployment
            .min(app_pods - d * spec.replicas_per_deployment);
        let knob = knobs(spec, shutdown_of(spec, d));
        let mut pod_spec = template_spec.clone();
        if kind == Workload::Critical {
            pod_spec["priorityClassName"] = json!("system-cluster-critical");
            pod_spec["priority"] = json!(2_000_000_000);
        }
        let template =
            json!({"metadata": {"labels": labels, "annotations": knob}, "spec": pod_spec});
        let owner_ref = if kind == Workload::Stateful {
            let uid = ids.uid();
            emit((
                Resource::StatefulSets,
                json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                    "metadata": {"name": name, "namespace": ns, "uid": uid, "generation": 1},
                    "spec": {"replicas": replicas, "serviceName": name, "podManagementPolicy": "Parallel",
                        "selector": {"matchLabels": labels}, "template": template}}),
            ));
            owner("StatefulSet", "apps/v1", &name, &uid)
        } else {
            let (d_uid, rs_uid) = (ids.uid(), ids.uid());
            let rs_name = format!("{name}-5d8f7c9b4");
            emit((
                Resource::Deployments,
                json!({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": name, "namespace": ns, "uid": d_uid, "generation": 1},
                    "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template}}),
            ));
            emit((
                Resource::ReplicaSets,
                json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": rs_name, "namespace": ns, "uid": rs_uid, "generation": 1, "labels": labels,
                        "ownerReferences": owner("Deployment", "apps/v1", &name, &d_uid)},
                    "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template}}),
            ));
            owner("ReplicaSet", "apps/v1", &rs_name, &rs_uid)
        };
        let budget = if kind == Workload::Quorum {
            json!({"minAvailable": "80%"})
        } else {
            json!({"maxUnavailable": 1})
        };
        let mut pdb_spec = budget;
        pdb_spec["selector"] = json!({"matchLabels": labels});
        emit((
            Resource::PodDisruptionBudgets,
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": name, "namespace": ns, "generation": 1}, "spec": pdb_spec}),
        ));
        for r in 0..replicas {
            // Spread replicas over nodes: consecutive slots land on different nodes.
            let node = node_name(slot % spec.nodes);
            slot += 1;
            let mut status = ready_status(&node, &ip());
            status.as_object_mut().expect("object").remove("_node");
            let pod_name = if kind == Workload::Stateful {
                format!("{name}-{r}")
            } else {
                format!("{name}-5d8f7c9b4-{r:05}")
            };
            let mut spec_json = pod_spec.clone();
            spec_json["nodeName"] = json!(node);
            emit((
                Resource::Pods,
                json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": pod_name, "namespace": ns, "labels": labels,
                        "annotations": knob, "ownerReferences": owner_ref},
                    "spec": spec_json,
                    "status": status}),
            ));
        }
    }
}
