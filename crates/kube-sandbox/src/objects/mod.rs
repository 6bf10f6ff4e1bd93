//! Reading Kubernetes objects held as JSON: what the apiserver, the
//! controllers and the kubelets all need to know of a pod, a node, a budget,
//! a Job, a VM, a lease, a Strimzi Kafka pod.

pub(crate) mod budgets;
pub(crate) mod jobs;
pub(crate) mod kubevirt;
pub(crate) mod leases;
pub(crate) mod nodes;
pub(crate) mod path;
pub mod pods;
pub(crate) mod strimzi;
pub(crate) mod taints;

/// The finalizer kube-apiserver puts on every namespace it creates, which
/// the namespace controller removes once the namespace is empty.
pub(crate) const KUBERNETES_FINALIZER: &str = "kubernetes";
