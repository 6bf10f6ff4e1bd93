//! The resource types the sandbox serves: what discovery advertises and how a
//! URL maps to a stored kind.

use serde_json::{Value, json};

/// A resource the sandbox serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// core/v1 Namespace.
    Namespaces,
    /// core/v1 Node.
    Nodes,
    /// core/v1 Pod.
    Pods,
    /// core/v1 Event.
    Events,
    /// policy/v1 PodDisruptionBudget.
    PodDisruptionBudgets,
    /// apps/v1 Deployment.
    Deployments,
    /// apps/v1 ReplicaSet.
    ReplicaSets,
    /// apps/v1 StatefulSet.
    StatefulSets,
    /// apps/v1 DaemonSet.
    DaemonSets,
    /// batch/v1 Job.
    Jobs,
    /// core/v1 ReplicationController.
    ReplicationControllers,
    /// coordination.k8s.io/v1 Lease.
    Leases,
    /// kubevirt.io/v1 VirtualMachineInstance.
    VirtualMachineInstances,
    /// core/v1 PersistentVolume.
    PersistentVolumes,
    /// core/v1 PersistentVolumeClaim.
    PersistentVolumeClaims,
    /// storage.k8s.io/v1 StorageClass.
    StorageClasses,
    /// storage.k8s.io/v1 VolumeAttachment.
    VolumeAttachments,
    /// core/v1 ServiceAccount.
    ServiceAccounts,
    /// core/v1 ConfigMap.
    ConfigMaps,
    /// core/v1 Secret.
    Secrets,
    /// rbac.authorization.k8s.io/v1 Role.
    Roles,
    /// rbac.authorization.k8s.io/v1 RoleBinding.
    RoleBindings,
    /// rbac.authorization.k8s.io/v1 ClusterRole.
    ClusterRoles,
    /// rbac.authorization.k8s.io/v1 ClusterRoleBinding.
    ClusterRoleBindings,
    /// lifecycle.k8s.io/v1alpha1 EvictionRequest (1.37).
    EvictionRequests,
    /// lifecycle.k8s.io/v1alpha1 Eviction (1.37).
    Evictions,
    /// scheduling.k8s.io/v1alpha3 PodGroup (1.37).
    PodGroups,
}

/// How a resource is served: its group, version, names, scope.
pub struct ResourceInfo {
    /// The API group (empty for the core group).
    pub group: &'static str,
    /// The version served (`v1`).
    pub version: &'static str,
    /// The plural, as in URLs and RBAC rules.
    pub plural: &'static str,
    /// The singular, as kubectl accepts it.
    pub singular: &'static str,
    /// The object's `kind`.
    pub kind: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Short names kubectl accepts (`po`, `no`, `pdb`).
    pub short_names: &'static [&'static str],
    /// Discovery categories (`all`).
    pub categories: &'static [&'static str],
    /// Subresources served besides the object itself (`status`, `eviction`).
    pub subresources: &'static [&'static str],
}

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

impl Resource {
    /// Has a `scale` subresource (served by apiserver::scale, read by the
    /// disruption controller through store::indexes::scales).
    pub(crate) fn scalable(self) -> bool {
        matches!(
            self,
            Resource::Deployments
                | Resource::ReplicaSets
                | Resource::StatefulSets
                | Resource::ReplicationControllers
        )
    }

    /// Every resource served.
    pub const ALL: [Resource; 27] = [
        Resource::Namespaces,
        Resource::Nodes,
        Resource::Pods,
        Resource::Events,
        Resource::PodDisruptionBudgets,
        Resource::Deployments,
        Resource::ReplicaSets,
        Resource::StatefulSets,
        Resource::DaemonSets,
        Resource::Jobs,
        Resource::ReplicationControllers,
        Resource::Leases,
        Resource::VirtualMachineInstances,
        Resource::PersistentVolumes,
        Resource::PersistentVolumeClaims,
        Resource::StorageClasses,
        Resource::VolumeAttachments,
        Resource::ServiceAccounts,
        Resource::ConfigMaps,
        Resource::Secrets,
        Resource::Roles,
        Resource::RoleBindings,
        Resource::ClusterRoles,
        Resource::ClusterRoleBindings,
        Resource::EvictionRequests,
        Resource::Evictions,
        Resource::PodGroups,
    ];

    /// How it is served.
    #[allow(clippy::too_many_lines)] // long on purpose: a table of data: one row per served resource
    pub fn info(self) -> &'static ResourceInfo {
        macro_rules! info {
            ($g:expr, $v:expr, $p:expr, $s:expr, $k:expr, $ns:expr, $short:expr, $cat:expr, $sub:expr) => {
                &ResourceInfo {
                    group: $g,
                    version: $v,
                    plural: $p,
                    singular: $s,
                    kind: $k,
                    namespaced: $ns,
                    short_names: $short,
                    categories: $cat,
                    subresources: $sub,
                }
            };
        }
        match self {
            Resource::Namespaces => info!(
                "",
                "v1",
                "namespaces",
                "namespace",
                "Namespace",
                false,
                &["ns"],
                &[],
                &["status"]
            ),
            Resource::Nodes => info!(
                "",
                "v1",
                "nodes",
                "node",
                "Node",
                false,
                &["no"],
                &[],
                &["status"]
            ),
            Resource::Pods => info!(
                "",
                "v1",
                "pods",
                "pod",
                "Pod",
                true,
                &["po"],
                &["all"],
                &["status", "eviction"]
            ),
            Resource::Events => info!(
                "",
                "v1",
                "events",
                "event",
                "Event",
                true,
                &["ev"],
                &[],
                &[]
            ),
            Resource::PodDisruptionBudgets => info!(
                "policy",
                "v1",
                "poddisruptionbudgets",
                "poddisruptionbudget",
                "PodDisruptionBudget",
                true,
                &["pdb"],
                &[],
                &["status"]
            ),
            Resource::Deployments => info!(
                "apps",
                "v1",
                "deployments",
                "deployment",
                "Deployment",
                true,
                &["deploy"],
                &["all"],
                &["status", "scale"]
            ),
            Resource::ReplicaSets => info!(
                "apps",
                "v1",
                "replicasets",
                "replicaset",
                "ReplicaSet",
                true,
                &["rs"],
                &["all"],
                &["status", "scale"]
            ),
            Resource::StatefulSets => info!(
                "apps",
                "v1",
                "statefulsets",
                "statefulset",
                "StatefulSet",
                true,
                &["sts"],
                &["all"],
                &["status", "scale"]
            ),
            Resource::DaemonSets => info!(
                "apps",
                "v1",
                "daemonsets",
                "daemonset",
                "DaemonSet",
                true,
                &["ds"],
                &["all"],
                &["status"]
            ),
            Resource::Jobs => info!(
                "batch",
                "v1",
                "jobs",
                "job",
                "Job",
                true,
                &[],
                &["all"],
                &["status"]
            ),
            // The core API's workload before ReplicaSets; still in clusters.
            Resource::ReplicationControllers => info!(
                "",
                "v1",
                "replicationcontrollers",
                "replicationcontroller",
                "ReplicationController",
                true,
                &["rc"],
                &["all"],
                &["status", "scale"]
            ),
            // Node heartbeats (kube-node-lease) and locks.
            // What a run in the cluster is made of (its identity, its
            // plan, its permissions).
            Resource::ServiceAccounts => info!(
                "",
                "v1",
                "serviceaccounts",
                "serviceaccount",
                "ServiceAccount",
                true,
                &["sa"],
                &[],
                &["token"]
            ),
            Resource::ConfigMaps => info!(
                "",
                "v1",
                "configmaps",
                "configmap",
                "ConfigMap",
                true,
                &["cm"],
                &[],
                &[]
            ),
            Resource::Secrets => {
                info!("", "v1", "secrets", "secret", "Secret", true, &[], &[], &[])
            }
            Resource::Roles => info!(
                "rbac.authorization.k8s.io",
                "v1",
                "roles",
                "role",
                "Role",
                true,
                &[],
                &[],
                &[]
            ),
            Resource::RoleBindings => info!(
                "rbac.authorization.k8s.io",
                "v1",
                "rolebindings",
                "rolebinding",
                "RoleBinding",
                true,
                &[],
                &[],
                &[]
            ),
            Resource::ClusterRoles => info!(
                "rbac.authorization.k8s.io",
                "v1",
                "clusterroles",
                "clusterrole",
                "ClusterRole",
                false,
                &[],
                &[],
                &[]
            ),
            Resource::ClusterRoleBindings => info!(
                "rbac.authorization.k8s.io",
                "v1",
                "clusterrolebindings",
                "clusterrolebinding",
                "ClusterRoleBinding",
                false,
                &[],
                &[],
                &[]
            ),
            Resource::Leases => info!(
                "coordination.k8s.io",
                "v1",
                "leases",
                "lease",
                "Lease",
                true,
                &[],
                &[],
                &[]
            ),
            // Volumes, for the scheduler's volume topology.
            Resource::PersistentVolumes => info!(
                "",
                "v1",
                "persistentvolumes",
                "persistentvolume",
                "PersistentVolume",
                false,
                &["pv"],
                &[],
                &["status"]
            ),
            Resource::PersistentVolumeClaims => info!(
                "",
                "v1",
                "persistentvolumeclaims",
                "persistentvolumeclaim",
                "PersistentVolumeClaim",
                true,
                &["pvc"],
                &[],
                &["status"]
            ),
            Resource::StorageClasses => info!(
                "storage.k8s.io",
                "v1",
                "storageclasses",
                "storageclass",
                "StorageClass",
                false,
                &["sc"],
                &[],
                &[]
            ),
            // The attach/detach controller's records: a node is safe to
            // power off once those of its volumes are gone.
            Resource::VolumeAttachments => info!(
                "storage.k8s.io",
                "v1",
                "volumeattachments",
                "volumeattachment",
                "VolumeAttachment",
                false,
                &[],
                &[],
                &["status"]
            ),
            // Kubernetes 1.37's eviction requests (KEP-4563, gate
            // EvictionRequestAPI): staging/src/k8s.io/api/lifecycle/v1alpha1.
            Resource::EvictionRequests => info!(
                "lifecycle.k8s.io",
                "v1alpha1",
                "evictionrequests",
                "evictionrequest",
                "EvictionRequest",
                true,
                &[],
                &[],
                &["status"]
            ),
            Resource::Evictions => info!(
                "lifecycle.k8s.io",
                "v1alpha1",
                "evictions",
                "eviction",
                "Eviction",
                true,
                &[],
                &[],
                &["status"]
            ),
            // 1.37's scheduling groups (gate GenericWorkload): a group with
            // `disruptionMode: {all: {}}` is disrupted whole or not at all.
            Resource::PodGroups => info!(
                "scheduling.k8s.io",
                "v1alpha3",
                "podgroups",
                "podgroup",
                "PodGroup",
                true,
                &[],
                &[],
                &["status"]
            ),
            // KubeVirt's VMIs, for drains of nodes that run virtual machines.
            Resource::VirtualMachineInstances => info!(
                "kubevirt.io",
                "v1",
                "virtualmachineinstances",
                "virtualmachineinstance",
                "VirtualMachineInstance",
                true,
                &["vmi", "vmis"],
                &["all"],
                &["status"]
            ),
        }
    }

    /// The first Kubernetes minor that serves it (with its alpha gates on,
    /// as the sandbox runs them): 0 for those every supported minor serves.
    pub fn since_minor(self) -> u32 {
        match self {
            Resource::EvictionRequests | Resource::Evictions | Resource::PodGroups => 37,
            _ => 0,
        }
    }

    /// Its apiVersion: `v1`, or `group/version`.
    pub fn api_version(self) -> String {
        let i = self.info();
        if i.group.is_empty() {
            i.version.to_string()
        } else {
            format!("{}/{}", i.group, i.version)
        }
    }

    pub(crate) fn from_path(group: &str, version: &str, plural: &str) -> Option<Resource> {
        Resource::ALL.into_iter().find(|r| {
            let i = r.info();
            i.group == group && i.version == version && i.plural == plural
        })
    }

    /// The resource an object of this apiVersion and kind is stored as.
    pub fn from_kind(api_version: &str, kind: &str) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|r| r.info().kind == kind && r.api_version() == api_version)
    }

    /// Accounts, configuration and RBAC: kinds without a spec, made by a
    /// run in the cluster for itself.
    fn run_own(self) -> bool {
        matches!(
            self,
            Resource::ServiceAccounts
                | Resource::ConfigMaps
                | Resource::Secrets
                | Resource::Roles
                | Resource::RoleBindings
                | Resource::ClusterRoles
                | Resource::ClusterRoleBindings
        )
    }

    /// Does a drain decide anything from objects of this kind (what a copy
    /// of a cluster for `plan --simulate` needs)? Events and leases are
    /// records; accounts, config and RBAC are a run's own.
    pub fn drain_reads(self) -> bool {
        // Evictions are the evictionrequest controller's, made again from
        // the requests.
        !matches!(
            self,
            Resource::Events | Resource::Leases | Resource::Evictions
        ) && !self.run_own()
    }

    /// Does this kind have a spec whose changes bump `metadata.generation`?
    pub(crate) fn has_generation(self) -> bool {
        !matches!(self, Resource::Events | Resource::Namespaces) && !self.run_own()
    }
}

/// The group/versions served, in discovery order.
pub(crate) fn group_versions(minor: u32) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for r in Resource::ALL
        .into_iter()
        .filter(|r| r.since_minor() <= minor)
    {
        let i = r.info();
        if !i.group.is_empty() && !out.contains(&(i.group, i.version)) {
            out.push((i.group, i.version));
        }
    }
    out
}

/// `APIResourceList` for one group/version. The `pods/eviction` entry has the
/// exact shape kubectl's `CheckEvictionSupport` looks for.
pub(crate) fn api_resource_list(group: &str, version: &str, minor: u32) -> Option<Value> {
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let mut resources = Vec::new();
    for r in Resource::ALL {
        let i = r.info();
        if i.group != group || i.version != version || r.since_minor() > minor {
            continue;
        }
        let mut entry = json!({
            "name": i.plural,
            "singularName": i.singular,
            "namespaced": i.namespaced,
            "kind": i.kind,
            "verbs": VERBS,
        });
        if !i.short_names.is_empty() {
            entry["shortNames"] = json!(i.short_names);
        }
        if !i.categories.is_empty() {
            entry["categories"] = json!(i.categories);
        }
        resources.push(entry);
        for sub in i.subresources {
            resources.push(match *sub {
                "eviction" => json!({
                    "name": format!("{}/eviction", i.plural),
                    "singularName": "",
                    "namespaced": true,
                    "group": "policy",
                    "version": "v1",
                    "kind": "Eviction",
                    "verbs": ["create"],
                }),
                "scale" => json!({
                    "name": format!("{}/scale", i.plural),
                    "singularName": "",
                    "namespaced": true,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"],
                }),
                _ => json!({
                    "name": format!("{}/{sub}", i.plural),
                    "singularName": "",
                    "namespaced": i.namespaced,
                    "kind": i.kind,
                    "verbs": ["get", "patch", "update"],
                }),
            });
        }
    }
    if resources.is_empty() {
        return None;
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}
