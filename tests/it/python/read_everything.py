"""The Python `kubernetes` client against the sandbox: every served resource
is listed and each object read back into the client's typed models (which
refuse an object missing a required field), and a watch from an expired
resourceVersion gets 410, relists and sees the next change, and a
deletecollection by label selector deletes those pods and no other.

Usage: read_everything.py KUBECONFIG NAMESPACE POD PLURAL...
Prints one line per plural ("pods 7"), "watch ok", then "deletecollection N"
(the pods it deleted).
"""
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

kubeconfig, namespace, pod, plurals = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
config.load_kube_config(config_file=kubeconfig)
core, apps, batch = client.CoreV1Api(), client.AppsV1Api(), client.BatchV1Api()
policy, storage = client.PolicyV1Api(), client.StorageV1Api()
coordination, custom = client.CoordinationV1Api(), client.CustomObjectsApi()
rbac = client.RbacAuthorizationV1Api()

# plural -> (list everything, read one by (namespace, name))
typed = {
    "namespaces": (core.list_namespace, lambda ns, n: core.read_namespace(n)),
    "nodes": (core.list_node, lambda ns, n: core.read_node(n)),
    "pods": (core.list_pod_for_all_namespaces, lambda ns, n: core.read_namespaced_pod(n, ns)),
    "events": (core.list_event_for_all_namespaces, lambda ns, n: core.read_namespaced_event(n, ns)),
    "poddisruptionbudgets": (policy.list_pod_disruption_budget_for_all_namespaces,
                             lambda ns, n: policy.read_namespaced_pod_disruption_budget(n, ns)),
    "deployments": (apps.list_deployment_for_all_namespaces, lambda ns, n: apps.read_namespaced_deployment(n, ns)),
    "replicasets": (apps.list_replica_set_for_all_namespaces, lambda ns, n: apps.read_namespaced_replica_set(n, ns)),
    "statefulsets": (apps.list_stateful_set_for_all_namespaces,
                     lambda ns, n: apps.read_namespaced_stateful_set(n, ns)),
    "daemonsets": (apps.list_daemon_set_for_all_namespaces, lambda ns, n: apps.read_namespaced_daemon_set(n, ns)),
    "jobs": (batch.list_job_for_all_namespaces, lambda ns, n: batch.read_namespaced_job(n, ns)),
    "replicationcontrollers": (core.list_replication_controller_for_all_namespaces,
                               lambda ns, n: core.read_namespaced_replication_controller(n, ns)),
    "leases": (coordination.list_lease_for_all_namespaces, lambda ns, n: coordination.read_namespaced_lease(n, ns)),
    "persistentvolumes": (core.list_persistent_volume, lambda ns, n: core.read_persistent_volume(n)),
    "persistentvolumeclaims": (core.list_persistent_volume_claim_for_all_namespaces,
                               lambda ns, n: core.read_namespaced_persistent_volume_claim(n, ns)),
    "storageclasses": (storage.list_storage_class, lambda ns, n: storage.read_storage_class(n)),
    "volumeattachments": (storage.list_volume_attachment, lambda ns, n: storage.read_volume_attachment(n)),
    "serviceaccounts": (core.list_service_account_for_all_namespaces,
                        lambda ns, n: core.read_namespaced_service_account(n, ns)),
    "configmaps": (core.list_config_map_for_all_namespaces, lambda ns, n: core.read_namespaced_config_map(n, ns)),
    "secrets": (core.list_secret_for_all_namespaces, lambda ns, n: core.read_namespaced_secret(n, ns)),
    "roles": (rbac.list_role_for_all_namespaces, lambda ns, n: rbac.read_namespaced_role(n, ns)),
    "rolebindings": (rbac.list_role_binding_for_all_namespaces,
                     lambda ns, n: rbac.read_namespaced_role_binding(n, ns)),
    "clusterroles": (rbac.list_cluster_role, lambda ns, n: rbac.read_cluster_role(n)),
    "clusterrolebindings": (rbac.list_cluster_role_binding, lambda ns, n: rbac.read_cluster_role_binding(n)),
}

for plural in plurals:
    if plural == "virtualmachineinstances":
        items = custom.list_cluster_custom_object("kubevirt.io", "v1", plural)["items"]
        print(plural, len(items))
        continue
    list_all, read_one = typed[plural]  # a KeyError: a resource this script does not know yet
    items = list_all().items
    for obj in items:
        read_one(obj.metadata.namespace, obj.metadata.name)
    print(plural, len(items))

# A watch from a resourceVersion the server no longer has: 410, then relist.
w = watch.Watch()
try:
    for _ in w.stream(core.list_namespaced_pod, namespace, resource_version="1", timeout_seconds=5):
        pass
    sys.exit("a watch from resourceVersion 1 was not refused")
except ApiException as e:
    if e.status != 410:
        raise
rv = core.list_namespaced_pod(namespace).metadata.resource_version
core.delete_namespaced_pod(pod, namespace)
for event in w.stream(core.list_namespaced_pod, namespace, resource_version=rv, timeout_seconds=10):
    if event["object"].metadata.name == pod:
        w.stop()
        print("watch ok")

# deletecollection by label selector: those pods go (or start terminating), no other does.
def live(selector=None):
    pods = core.list_namespaced_pod(namespace, label_selector=selector).items
    return {p.metadata.name for p in pods if p.metadata.deletion_timestamp is None}

everyone, chosen = live(), live("app=legacy")
if not chosen:
    sys.exit("no pod has app=legacy")
core.delete_collection_namespaced_pod(namespace, label_selector="app=legacy")
left = live()
if left & chosen or (everyone - chosen) - left:
    sys.exit(f"deletecollection: chose {chosen}, of {everyone}, left {left}")
print("deletecollection", len(chosen))
