//! Every PodDisruptionBudget's selector, parsed once (a nil selector is
//! `Nothing`; an invalid one is left out, as it selects nothing), and the
//! budgets by the first label value their selector requires (namespace,
//! `key=value`); those requiring none by namespace, under an empty label.

use crate::objects::path::At;
use foldhash::HashMap;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::store::Key;
use kube_conventions::selector::{Op, Selector};

#[derive(Default)]
pub(crate) struct BudgetsByLabel {
    selectors: BTreeMap<Key, Selector>,
    by_label: HashMap<(String, String), BTreeSet<Key>>,
}

impl BudgetsByLabel {
    pub(super) fn apply(&mut self, key: &Key, pdb: &Value, add: bool) {
        if let Some(old) = self.selectors.remove(key) {
            let label = (key.0.clone(), required_label(&old));
            if let Some(set) = self.by_label.get_mut(&label) {
                set.remove(key);
                if set.is_empty() {
                    self.by_label.remove(&label);
                }
            }
        }
        if add && let Ok(selector) = Selector::from_label_selector(pdb.at("/spec/selector")) {
            let label = (key.0.clone(), required_label(&selector));
            self.by_label.entry(label).or_default().insert(key.clone());
            self.selectors.insert(key.clone(), selector);
        }
    }

    /// The budgets of a namespace whose selector matches the object's
    /// labels: those indexed under one of its labels, or under none.
    pub(crate) fn selecting(&self, namespace: &str, object: &Value) -> Vec<Key> {
        let labels = object
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object);
        let wanted = labels
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some(format!("{k}={}", v.as_str()?)))
            .chain([String::new()]);
        let mut keys: Vec<Key> = wanted
            .filter_map(|l| self.by_label.get(&(namespace.to_string(), l)))
            .flatten()
            .filter(|k| {
                self.selectors
                    .get(*k)
                    .is_some_and(|s| s.matches_object(object))
            })
            .cloned()
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }
}

/// The first `key=value` a selector requires (empty when it requires none).
fn required_label(selector: &Selector) -> String {
    match selector {
        Selector::All(reqs) => reqs
            .iter()
            .find_map(|r| match &r.op {
                Op::Equals(v) => Some(format!("{}={v}", r.key)),
                _ => None,
            })
            .unwrap_or_default(),
        Selector::Nothing => String::new(),
    }
}
