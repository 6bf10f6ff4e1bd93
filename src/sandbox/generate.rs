//! Synthetic clusters for tests, benchmarks and the scale check: nodes, a
//! DaemonSet on every node, and Deployments spread over the nodes, each with
//! a PodDisruptionBudget, all pods already Running and Ready.

use serde_json::{Value, json};

use super::clock::IdGen;
use super::resources::Resource;

#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub nodes: usize,
    /// Pods per node, the DaemonSet pod included.
    pub pods_per_node: usize,
    pub replicas_per_deployment: usize,
    pub namespaces: usize,
    /// Seconds each generated pod takes to stop and to become Ready.
    pub shutdown_seconds: f64,
    pub ready_seconds: f64,
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
        }
    }
}

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

fn knobs(spec: &ClusterSpec) -> Value {
    json!({
        super::config::SHUTDOWN_SECONDS: spec.shutdown_seconds.to_string(),
        super::config::READY_SECONDS: spec.ready_seconds.to_string(),
    })
}

fn owner(kind: &str, api: &str, name: &str, uid: &str) -> Value {
    json!([{"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}])
}

/// The objects of a synthetic cluster, in load order.
pub fn cluster(spec: &ClusterSpec) -> Vec<(Resource, Value)> {
    let ids = IdGen::new(42);
    let mut out = Vec::new();
    for i in 0..spec.nodes {
        let name = node_name(i);
        out.push((
            Resource::Nodes,
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
                "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}}, "spec": {}}),
        ));
    }
    let template_spec = json!({"containers": [{"name": "main", "image": "sandbox"}], "terminationGracePeriodSeconds": 30});
    // A DaemonSet on every node.
    let ds_uid = ids.uid();
    out.push((
        Resource::DaemonSets,
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "node-agent", "namespace": "kube-system", "uid": ds_uid, "generation": 1},
            "spec": {"selector": {"matchLabels": {"app": "node-agent"}},
                "template": {"metadata": {"labels": {"app": "node-agent"}, "annotations": knobs(spec)}, "spec": template_spec}}}),
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
        out.push((
            Resource::Pods,
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "kube-system", "labels": {"app": "node-agent"},
                    "annotations": knobs(spec), "ownerReferences": owner("DaemonSet", "apps/v1", "node-agent", &ds_uid)},
                "spec": {"nodeName": node, "containers": template_spec["containers"], "terminationGracePeriodSeconds": 30,
                    "tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]},
                "status": status}),
        ));
    }
    let app_pods = spec.nodes * spec.pods_per_node.saturating_sub(1);
    let deployments = app_pods.div_ceil(spec.replicas_per_deployment.max(1));
    let mut slot = 0usize;
    for d in 0..deployments {
        let ns = format!("team-{:03}", d % spec.namespaces.max(1));
        let name = format!("app-{d:05}");
        let labels = json!({"app": name});
        let replicas = spec
            .replicas_per_deployment
            .min(app_pods - d * spec.replicas_per_deployment);
        let (d_uid, rs_uid) = (ids.uid(), ids.uid());
        let rs_name = format!("{name}-5d8f7c9b4");
        let template = json!({"metadata": {"labels": labels, "annotations": knobs(spec)}, "spec": template_spec});
        out.push((
            Resource::Deployments,
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": ns, "uid": d_uid, "generation": 1},
                "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template}}),
        ));
        out.push((
            Resource::ReplicaSets,
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": rs_name, "namespace": ns, "uid": rs_uid, "generation": 1, "labels": labels,
                    "ownerReferences": owner("Deployment", "apps/v1", &name, &d_uid)},
                "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template}}),
        ));
        out.push((
            Resource::PodDisruptionBudgets,
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": name, "namespace": ns, "generation": 1},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}}}),
        ));
        for r in 0..replicas {
            // Spread replicas over nodes: consecutive slots land on different nodes.
            let node = node_name(slot % spec.nodes);
            slot += 1;
            let mut status = ready_status(&node, &ip());
            status.as_object_mut().expect("object").remove("_node");
            out.push((
                Resource::Pods,
                json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("{rs_name}-{r:05}"), "namespace": ns, "labels": labels,
                        "annotations": knobs(spec), "ownerReferences": owner("ReplicaSet", "apps/v1", &rs_name, &rs_uid)},
                    "spec": {"nodeName": node, "containers": template_spec["containers"], "terminationGracePeriodSeconds": 30},
                    "status": status}),
            ));
        }
    }
    out
}
