//! The typed model (k8s-openapi) of each resource the sandbox serves, for
//! what needs the kind's real shape: validation of every write and the
//! OpenAPI documents. KubeVirt's VMIs have no model here.

use k8s_openapi::api::{
    apps::v1 as apps, batch::v1 as batch, coordination::v1 as coordination, core::v1 as core,
    lifecycle::v1alpha1 as lifecycle, policy::v1 as policy, rbac::v1 as rbac,
    scheduling::v1alpha3 as scheduling, storage::v1 as storage,
};
use serde::de::DeserializeOwned;

use crate::resources::Resource;

/// What a typed model offers: decoding and its schema.
pub(crate) trait Model: DeserializeOwned + schemars::JsonSchema {}
impl<T: DeserializeOwned + schemars::JsonSchema> Model for T {}

/// Something done with a resource's model type.
pub(crate) trait WithModel {
    type Out;
    fn with<T: Model>(self) -> Self::Out;
}

/// Runs `f` with the model of `res`; `None` for a resource without one.
pub(crate) fn with_model<F: WithModel>(res: Resource, f: F) -> Option<F::Out> {
    Some(match res {
        Resource::Namespaces => f.with::<core::Namespace>(),
        Resource::Nodes => f.with::<core::Node>(),
        Resource::Pods => f.with::<core::Pod>(),
        Resource::Events => f.with::<core::Event>(),
        Resource::PodDisruptionBudgets => f.with::<policy::PodDisruptionBudget>(),
        Resource::Deployments => f.with::<apps::Deployment>(),
        Resource::ReplicaSets => f.with::<apps::ReplicaSet>(),
        Resource::StatefulSets => f.with::<apps::StatefulSet>(),
        Resource::DaemonSets => f.with::<apps::DaemonSet>(),
        Resource::Jobs => f.with::<batch::Job>(),
        Resource::ReplicationControllers => f.with::<core::ReplicationController>(),
        Resource::Leases => f.with::<coordination::Lease>(),
        Resource::PersistentVolumes => f.with::<core::PersistentVolume>(),
        Resource::PersistentVolumeClaims => f.with::<core::PersistentVolumeClaim>(),
        Resource::StorageClasses => f.with::<storage::StorageClass>(),
        Resource::VolumeAttachments => f.with::<storage::VolumeAttachment>(),
        Resource::ServiceAccounts => f.with::<core::ServiceAccount>(),
        Resource::ConfigMaps => f.with::<core::ConfigMap>(),
        Resource::Secrets => f.with::<core::Secret>(),
        Resource::Roles => f.with::<rbac::Role>(),
        Resource::RoleBindings => f.with::<rbac::RoleBinding>(),
        Resource::ClusterRoles => f.with::<rbac::ClusterRole>(),
        Resource::ClusterRoleBindings => f.with::<rbac::ClusterRoleBinding>(),
        Resource::EvictionRequests => f.with::<lifecycle::EvictionRequest>(),
        Resource::Evictions => f.with::<lifecycle::Eviction>(),
        Resource::PodGroups => f.with::<scheduling::PodGroup>(),
        Resource::VirtualMachineInstances => return None,
    })
}
