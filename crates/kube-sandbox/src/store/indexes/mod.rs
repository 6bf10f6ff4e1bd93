//! The store's indexes, each a small type kept in step with every write:
//! `apply` sees each object stored (`add`) and each one replaced or removed
//! (`!add`), and the store answers its lookups from them instead of scanning
//! (client-go's indexers, and the scheduler's NodeInfo).

mod anti_affine;
mod budgets_by_label;
mod node_info;
mod owned_by;
mod pod_facts;
mod pods_by_label;
mod pods_by_node;

pub(crate) use anti_affine::AntiAffine;
pub(crate) use budgets_by_label::BudgetsByLabel;
pub(crate) use node_info::{NodeInfo, NodeInfos, Requested};
pub(crate) use owned_by::OwnedBy;
pub(crate) use pod_facts::PodFacts;
pub(crate) use pods_by_label::PodsByLabel;
pub(crate) use pods_by_node::PodsByNode;

use crate::objects::path::At;
use serde_json::Value;

use super::Key;
use crate::resources::Resource;

/// Every index of the store.
#[derive(Default)]
pub(crate) struct Indexes {
    pub(crate) pods_by_node: PodsByNode,
    pub(crate) pod_facts: PodFacts,
    pub(crate) owned_by: OwnedBy,
    pub(crate) node_infos: NodeInfos,
    pub(crate) anti_affine: AntiAffine,
    pub(crate) pods_by_label: PodsByLabel,
    pub(crate) budgets_by_label: BudgetsByLabel,
}

impl Indexes {
    /// Adds an object as stored, or takes it out (`add` false).
    pub(crate) fn apply(&mut self, res: Resource, key: &Key, obj: &Value, add: bool) {
        self.owned_by.apply(res, key, obj, add);
        match res {
            Resource::PodDisruptionBudgets => self.budgets_by_label.apply(key, obj, add),
            Resource::Nodes => self.node_infos.apply_node(key, obj, add),
            Resource::Pods => {
                self.pods_by_label.apply(key, obj, add);
                self.pod_facts.apply(key, obj, add);
                self.pods_by_node.apply(key, obj, add);
                self.node_infos.apply_pod(obj, add);
                self.anti_affine.apply(key, obj, add);
            }
            _ => {}
        }
    }
}

/// A bound pod's node.
fn node_of(pod: &Value) -> Option<&str> {
    pod.at("/spec/nodeName").and_then(Value::as_str)
}
