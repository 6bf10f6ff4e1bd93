//! What the controllers owe after a batch of changes: one queue per
//! controller, each object once (client-go's work queues), filled by each
//! controller's own `triggers` beside its `reconcile`.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::resources::Resource;
use crate::store::Key;

/// One write to the store as the triggers look at it.
pub(crate) struct Changed<'a> {
    /// The kind of object written.
    pub(crate) resource: Resource,
    /// Its namespace and name.
    pub(crate) key: Key,
    /// The object before the write (`None`: created).
    pub(crate) old: Option<&'a Value>,
    /// The object after the write (`None`: deleted).
    pub(crate) new: Option<&'a Value>,
}

impl Changed<'_> {
    /// The object as written, or as it was when deleted.
    pub(crate) fn object(&self) -> &Value {
        self.new.or(self.old).expect("a change has an object")
    }
}

/// Reconciles owed, each object once.
#[derive(Default)]
pub(crate) struct Work {
    /// Workload controllers' objects (crate::controllers::reconcile).
    pub(crate) owners: BTreeSet<(Resource, Key)>,
    /// Budgets the disruption controller recounts.
    pub(crate) pdbs: BTreeSet<Key>,
    /// Pods that wait for the scheduler.
    pub(crate) unscheduled: BTreeSet<Key>,
    /// Every DaemonSet looks again (a node's labels or taints changed).
    pub(crate) all_daemonsets: bool,
    /// Nodes whose taints the node lifecycle controller owes a look.
    pub(crate) nodes: BTreeSet<Key>,
    /// The scheduler tries its pending pods again (room or volumes appeared).
    pub(crate) retry_pending: bool,
    /// Uids of deleted owners whose dependents the garbage collector removes.
    pub(crate) gc: Vec<String>,
    /// Pods bound to a node whose volumes are to be attached.
    pub(crate) attach: BTreeSet<Key>,
    /// Pods that left a node (deleted or finished), as they were: their
    /// volumes may detach.
    pub(crate) left: Vec<Arc<Value>>,
    /// Nodes where the pod garbage collector may have terminating pods to
    /// force-delete (out of service).
    pub(crate) collect: BTreeSet<String>,
    /// Nodes deleted: their pods are orphans after the quarantine.
    pub(crate) orphans: BTreeSet<String>,
    /// Nodes whose volumes may detach at once (out of service).
    pub(crate) out_of_service: BTreeSet<String>,
    /// Namespaces the namespace controller looks at: being deleted, or
    /// something left them.
    pub(crate) namespaces: BTreeSet<String>,
    /// Pods (namespace, name) whose eviction requests the evictionrequest
    /// controller looks at.
    pub(crate) evictions: BTreeSet<Key>,
}

impl Work {
    /// Every object of these kinds is owed a reconcile (the first pass).
    pub(crate) fn everything(store: &crate::store::Store) -> Work {
        let keys = |res| store.docs(res, None, None).map(|(k, _)| k.clone());
        let mut work = Work {
            all_daemonsets: true,
            ..Work::default()
        };
        for res in [
            Resource::Deployments,
            Resource::ReplicaSets,
            Resource::ReplicationControllers,
            Resource::StatefulSets,
            Resource::Jobs,
        ] {
            work.owners.extend(keys(res).map(|k| (res, k)));
        }
        work.pdbs.extend(keys(Resource::PodDisruptionBudgets));
        work.nodes.extend(keys(Resource::Nodes));
        work.namespaces
            .extend(keys(Resource::Namespaces).map(|k| k.1));
        work
    }
}
