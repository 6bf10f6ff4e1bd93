//! What a drain keeps of each pod it listed: everything kubectl's filters,
//! the guard rails and the node's drain read (metadata, volumes, priority,
//! grace period, owner, phase, reason), not what none of them does: its
//! containers' spec and status, its conditions, addresses, start time, QoS
//! class, scheduling (tolerations, affinity, node selector, spread,
//! scheduler), DNS, security context, service account, and `managedFields`,
//! which are most of a real pod's bytes (a `Container` alone is 2 KiB in
//! memory before its strings). A pool of hundreds of nodes keeps every pod
//! it will evict from the start (crate::drain::packed_pods); this keeps the
//! drain's memory to what it decides from.

use k8s_openapi::api::core::v1::Pod;

/// The pod without what the drain never reads.
pub(crate) fn slim(mut pod: Pod) -> Pod {
    pod.metadata.managed_fields = None;
    if let Some(spec) = pod.spec.as_mut() {
        spec.containers = Vec::new();
        spec.init_containers = None;
        spec.ephemeral_containers = None;
        spec.tolerations = None;
        spec.affinity = None;
        spec.node_selector = None;
        spec.topology_spread_constraints = None;
        spec.readiness_gates = None;
        spec.scheduler_name = None;
        spec.dns_policy = None;
        spec.enable_service_links = None;
        spec.security_context = None;
        spec.service_account_name = None;
        spec.service_account = None;
    }
    if let Some(status) = pod.status.as_mut() {
        status.container_statuses = None;
        status.init_container_statuses = None;
        status.ephemeral_container_statuses = None;
        status.conditions = None;
        status.pod_ips = None;
        status.host_ips = None;
        status.pod_ip = None;
        status.host_ip = None;
        status.start_time = None;
        status.qos_class = None;
        status.nominated_node_name = None;
    }
    pod
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_what_the_drain_reads_and_drops_the_rest() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "a", "uid": "u",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "r", "controller": true}],
                "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
            "spec": {"nodeName": "n1", "priority": 5, "terminationGracePeriodSeconds": 30,
                "volumes": [{"name": "scratch", "emptyDir": {}}],
                "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}],
                "nodeSelector": {"disk": "ssd"}, "schedulerName": "default-scheduler",
                "serviceAccountName": "default", "securityContext": {},
                "containers": [{"name": "main", "image": "web:1", "env": [{"name": "A", "value": "b"}]}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                "podIPs": [{"ip": "10.0.0.7"}], "podIP": "10.0.0.7", "qosClass": "BestEffort",
                "startTime": "2026-01-01T00:00:00Z", "reason": "Evicted",
                "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0, "image": "web:1", "imageID": ""}]},
        }))
        .unwrap();
        let slim = slim(pod.clone());
        assert_eq!(slim.metadata.managed_fields, None);
        assert_eq!(
            slim.metadata.owner_references,
            pod.metadata.owner_references
        );
        let (spec, was) = (slim.spec.unwrap(), pod.spec.unwrap());
        assert!(spec.containers.is_empty());
        assert_eq!((spec.tolerations, spec.node_selector), (None, None));
        assert_eq!(
            (spec.scheduler_name, spec.service_account_name),
            (None, None)
        );
        assert_eq!(spec.volumes, was.volumes);
        assert_eq!(spec.priority, Some(5));
        assert_eq!(spec.termination_grace_period_seconds, Some(30));
        let status = slim.status.unwrap();
        assert_eq!(status.container_statuses, None);
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert_eq!((status.conditions, status.pod_ips), (None, None));
        assert_eq!((status.pod_ip, status.qos_class), (None, None));
        assert_eq!(status.reason.as_deref(), Some("Evicted"));
    }
}
