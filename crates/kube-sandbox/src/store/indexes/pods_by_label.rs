//! Pods by namespace and label (`key=value`): a selector that requires a
//! label's value reads its candidates here instead of scanning the
//! namespace (the disruption controller, on every pod change).

use crate::objects::path::At;
use foldhash::HashMap;
use std::collections::BTreeSet;

use serde_json::Value;

use crate::store::Key;
use kube_conventions::selector::{Op, Requirement};

#[derive(Default)]
pub(crate) struct PodsByLabel(HashMap<(String, String), BTreeSet<Key>>);

impl PodsByLabel {
    pub(super) fn apply(&mut self, key: &Key, pod: &Value, add: bool) {
        let Some(labels) = pod.at("/metadata/labels").and_then(Value::as_object) else {
            return;
        };
        for (k, v) in labels {
            let Some(v) = v.as_str() else { continue };
            let label = (key.0.clone(), format!("{k}={v}"));
            if add {
                self.0.entry(label).or_default().insert(key.clone());
            } else if let Some(set) = self.0.get_mut(&label) {
                set.remove(key);
                if set.is_empty() {
                    self.0.remove(&label);
                }
            }
        }
    }

    /// The pods of a namespace that may match a requirement, sorted, when
    /// it requires a label's value (`=`, `in`); `None` for any other.
    pub(crate) fn candidates(&self, namespace: &str, r: &Requirement) -> Option<Vec<&Key>> {
        let values: Vec<&String> = match &r.op {
            Op::Equals(v) => vec![v],
            Op::In(vs) => vs.iter().collect(),
            _ => return None,
        };
        let mut keys: Vec<&Key> = values
            .into_iter()
            .filter_map(|v| {
                self.0
                    .get(&(namespace.to_string(), format!("{}={v}", r.key)))
            })
            .flatten()
            .collect();
        keys.sort();
        keys.dedup();
        Some(keys)
    }
}
