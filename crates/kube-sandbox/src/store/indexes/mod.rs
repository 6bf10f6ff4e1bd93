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
mod scales;

pub(crate) use anti_affine::AntiAffine;
pub(crate) use budgets_by_label::BudgetsByLabel;
pub(crate) use node_info::{NodeInfo, NodeInfos, Requested};
pub(crate) use owned_by::OwnedBy;
pub(crate) use pod_facts::PodFacts;
pub(crate) use pods_by_label::PodsByLabel;
pub(crate) use pods_by_node::PodsByNode;
pub(crate) use scales::{Scale, Scales};

use crate::objects::path::At;
use serde_json::Value;

use super::Key;
use crate::objects::pods;
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
    pub(crate) scales: Scales,
}

impl Indexes {
    /// Adds an object as stored, or takes it out (`add` false).
    pub(crate) fn apply(&mut self, res: Resource, key: &Key, obj: &Value, add: bool) {
        self.owned_by.apply(res, key, obj, add);
        if res.scalable() {
            self.scales.apply(res, key, obj, add);
        }
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

    /// `apply` of `old` taken out and `new` stored in its place, touching
    /// only the indexes whose inputs the write changed: most writes are a
    /// status or a condition, and taking every label, owner and node out of
    /// its index to put it back was 6 % of the simulation's samples and 8 %
    /// of the API workers' on a 5,000-node cluster under a pool drain.
    pub(crate) fn replace(&mut self, res: Resource, key: &Key, old: &Value, new: &Value) {
        let same = |path: &str| old.at(path) == new.at(path);
        if !same("/metadata/ownerReferences") {
            self.owned_by.apply(res, key, old, false);
            self.owned_by.apply(res, key, new, true);
        }
        if res.scalable() && !(same("/spec/replicas") && same("/metadata/ownerReferences")) {
            self.scales.apply(res, key, new, true);
        }
        match res {
            Resource::PodDisruptionBudgets if !same("/spec/selector") => {
                self.budgets_by_label.apply(key, new, true);
            }
            // A node's facts are parsed again; what its pods request stays.
            Resource::Nodes => self.node_infos.apply_node(key, new, true),
            Resource::Pods => {
                if !same("/metadata/labels") {
                    self.pods_by_label.apply(key, old, false);
                    self.pods_by_label.apply(key, new, true);
                }
                self.pod_facts.apply(key, new, true);
                let node_same = same("/spec/nodeName");
                if !node_same {
                    self.pods_by_node.apply(key, old, false);
                    self.pods_by_node.apply(key, new, true);
                }
                if !node_same
                    || pods::is_terminal(old) != pods::is_terminal(new)
                    || !pods::same_requests(old, new)
                {
                    self.node_infos.apply_pod(old, false);
                    self.node_infos.apply_pod(new, true);
                }
                if !node_same
                    || pods::has_required_anti_affinity(old)
                        != pods::has_required_anti_affinity(new)
                {
                    self.anti_affine.apply(key, old, false);
                    self.anti_affine.apply(key, new, true);
                }
            }
            _ => {}
        }
    }
}

/// A bound pod's node.
fn node_of(pod: &Value) -> Option<&str> {
    pod.at("/spec/nodeName").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_conventions::selector::{Op, Requirement};
    use serde_json::json;
    use std::ops::Bound;

    /// What the indexes answer about pods `p` and nodes `n1`, `n2`.
    fn answers(ix: &Indexes) -> String {
        let key = ("ns".to_string(), "p".to_string());
        let label = |v: &str| Requirement {
            key: "app".into(),
            op: Op::Equals(v.into()),
        };
        let infos: Vec<_> = ix
            .node_infos
            .nodes((Bound::Unbounded, Bound::Unbounded))
            .map(|(n, _, i)| (n.clone(), i.bound, i.requested.clone()))
            .collect();
        format!(
            "{:?} {:?} | {:?} {:?} | {:?} {:?} | {infos:?} | {:?} | {:?}",
            ix.pods_by_node.on("n1"),
            ix.pods_by_node.on("n2"),
            ix.owned_by.of(Resource::Pods, "u1"),
            ix.owned_by.of(Resource::Pods, "u2"),
            ix.pods_by_label.candidates("ns", &label("a")),
            ix.pods_by_label.candidates("ns", &label("b")),
            ix.anti_affine.iter().collect::<Vec<_>>(),
            ix.pod_facts.entry(&key).map(|(_, f)| format!("{f:?}")),
        )
    }

    #[test]
    fn a_write_leaves_the_indexes_as_taking_the_old_out_and_the_new_in_would() {
        let (mut by_replace, mut by_apply) = (Indexes::default(), Indexes::default());
        let key = ("ns".to_string(), "p".to_string());
        for ix in [&mut by_replace, &mut by_apply] {
            for n in ["n1", "n2"] {
                let node =
                    json!({"metadata": {"name": n}, "status": {"allocatable": {"cpu": "4"}}});
                ix.apply(Resource::Nodes, &(String::new(), n.into()), &node, true);
            }
        }
        let mut pod = json!({"metadata": {"name": "p", "namespace": "ns",
            "labels": {"app": "a"}, "ownerReferences": [{"uid": "u1"}]},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Pending"}});
        by_replace.apply(Resource::Pods, &key, &pod, true);
        by_apply.apply(Resource::Pods, &key, &pod, true);
        let writes: [&dyn Fn(&mut Value); 9] = [
            &|p| p["spec"]["nodeName"] = json!("n1"),
            &|p| p["status"] = json!({"phase": "Running", "conditions": [{"type": "Ready"}]}),
            &|p| p["metadata"]["labels"]["app"] = json!("b"),
            &|p| p["metadata"]["ownerReferences"][0]["uid"] = json!("u2"),
            &|p| p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("200m"),
            &|p| {
                p["spec"]["affinity"] = json!({"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "h"}]}});
            },
            &|p| p["spec"]["nodeName"] = json!("n2"),
            &|p| p["metadata"]["deletionTimestamp"] = json!("2026-11-27T00:00:00Z"),
            &|p| p["status"]["phase"] = json!("Succeeded"),
        ];
        for write in writes {
            let old = pod.clone();
            write(&mut pod);
            by_replace.replace(Resource::Pods, &key, &old, &pod);
            by_apply.apply(Resource::Pods, &key, &old, false);
            by_apply.apply(Resource::Pods, &key, &pod, true);
            assert_eq!(answers(&by_replace), answers(&by_apply), "after {pod}");
        }
        assert!(answers(&by_replace).contains("n2"));
    }
}
