//! Every PodDisruptionBudget of the cluster as the one watch of them all
//! keeps it (crate::drain::budgets::watch): each budget's key, parsed
//! selector and numbers, nothing else. A pool drained on a large cluster
//! mirrors tens of thousands of budgets; as k8s-openapi objects in a
//! reflector's store they took 21 MB at 14,500 (an object's metadata alone
//! is ~400 bytes before its strings, a selector's label map a 500-byte
//! B-tree node), as this they take a few.
//!
//! Events are applied as kube-runtime's reflector applies them: a relist
//! (`Init` .. `InitDone`) replaces the whole set at its end, so a reader
//! never sees half of one.

use std::collections::HashMap;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::runtime::watcher;
use kube_conventions::selector::Selector;

use super::budget::{Budget, Key, key_of};
use super::lookup::budget_selector;

/// What is kept of one budget.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listed {
    /// The pods it selects; None when its selector does not parse.
    pub(crate) selector: Option<Selector>,
    pub(crate) budget: Budget,
}

impl Listed {
    pub(crate) fn of(pdb: &PodDisruptionBudget) -> (Key, Listed) {
        let key = key_of(pdb);
        let listed = Listed {
            selector: budget_selector(pdb),
            budget: Budget::from_pdb(pdb),
        };
        (key, listed)
    }
}

#[derive(Debug, Default)]
pub(crate) struct Every {
    current: HashMap<Key, Listed>,
    /// A relist under way: the set it will replace `current` with.
    relisting: Option<HashMap<Key, Listed>>,
}

impl Every {
    pub(crate) fn apply(&mut self, event: &watcher::Event<PodDisruptionBudget>) {
        match event {
            watcher::Event::Init => self.relisting = Some(HashMap::new()),
            watcher::Event::InitApply(pdb) => {
                let (key, listed) = Listed::of(pdb);
                self.relisting
                    .get_or_insert_with(HashMap::new)
                    .insert(key, listed);
            }
            watcher::Event::InitDone => {
                if let Some(set) = self.relisting.take() {
                    self.current = set;
                }
            }
            watcher::Event::Apply(pdb) => {
                let (key, listed) = Listed::of(pdb);
                self.current.insert(key, listed);
            }
            watcher::Event::Delete(pdb) => {
                self.current.remove(&key_of(pdb));
            }
        }
    }

    pub(crate) fn get(&self, key: &Key) -> Option<&Listed> {
        self.current.get(key)
    }

    /// The budgets whose key passes `wanted`, in key order (what a roll
    /// says it waits for reads the same from one check to the next).
    pub(crate) fn select(&self, wanted: impl Fn(&Key) -> bool) -> Vec<(Key, Listed)> {
        let mut out: Vec<(Key, Listed)> = self
            .current
            .iter()
            .filter(|(k, _)| wanted(k))
            .map(|(k, l)| (k.clone(), l.clone()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pdb(ns: &str, name: &str, allowed: i32) -> PodDisruptionBudget {
        serde_json::from_value(json!({
            "metadata": {"namespace": ns, "name": name, "generation": 1,
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": name}}},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 3, "desiredHealthy": 2,
                "expectedPods": 3, "observedGeneration": 1},
        }))
        .unwrap()
    }

    fn names(e: &Every) -> Vec<String> {
        e.select(|_| true).into_iter().map(|(k, _)| k.1).collect()
    }

    #[test]
    fn keeps_each_budgets_selector_and_numbers() {
        let mut e = Every::default();
        e.apply(&watcher::Event::Apply(pdb("a", "web", 1)));
        let web = e.get(&("a".into(), "web".into())).unwrap();
        assert_eq!(web.budget.disruptions_allowed, 1);
        assert!(web.budget.observed);
        let labels = [("app".to_string(), "web".to_string())].into();
        assert!(web.selector.as_ref().unwrap().matches(&labels));
        e.apply(&watcher::Event::Apply(pdb("a", "web", 0)));
        assert_eq!(
            e.get(&("a".into(), "web".into()))
                .unwrap()
                .budget
                .disruptions_allowed,
            0
        );
        e.apply(&watcher::Event::Delete(pdb("a", "web", 0)));
        assert!(e.get(&("a".into(), "web".into())).is_none());
    }

    #[test]
    fn a_relist_replaces_the_set_at_its_end() {
        let mut e = Every::default();
        e.apply(&watcher::Event::Apply(pdb("a", "old", 1)));
        e.apply(&watcher::Event::Init);
        e.apply(&watcher::Event::InitApply(pdb("a", "web", 1)));
        assert_eq!(names(&e), ["old"], "half a relist is never read");
        e.apply(&watcher::Event::InitApply(pdb("b", "db", 1)));
        e.apply(&watcher::Event::InitDone);
        assert_eq!(names(&e), ["web", "db"], "in key order: a/web, then b/db");
        let only_b = e.select(|k| k.0 == "b");
        assert_eq!(only_b.len(), 1);
    }
}
