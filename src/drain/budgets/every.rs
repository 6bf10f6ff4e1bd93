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

use std::collections::{BTreeMap, HashMap};

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

/// Budgets by namespace, then name: a pod's are looked for in its
/// namespace alone (a budget selects pods of its own namespace only).
type ByNamespace = HashMap<String, HashMap<String, Listed>>;

#[derive(Debug, Default)]
pub(crate) struct Every {
    current: ByNamespace,
    /// A relist under way: the set it will replace `current` with.
    relisting: Option<ByNamespace>,
}

fn insert(set: &mut ByNamespace, pdb: &PodDisruptionBudget) {
    let ((ns, name), listed) = Listed::of(pdb);
    set.entry(ns).or_default().insert(name, listed);
}

impl Every {
    pub(crate) fn apply(&mut self, event: &watcher::Event<PodDisruptionBudget>) {
        match event {
            watcher::Event::Init => self.relisting = Some(HashMap::new()),
            watcher::Event::InitApply(pdb) => {
                insert(self.relisting.get_or_insert_with(HashMap::new), pdb);
            }
            watcher::Event::InitDone => {
                if let Some(set) = self.relisting.take() {
                    self.current = set;
                }
            }
            watcher::Event::Apply(pdb) => insert(&mut self.current, pdb),
            watcher::Event::Delete(pdb) => {
                let (ns, name) = key_of(pdb);
                if let Some(budgets) = self.current.get_mut(&ns) {
                    budgets.remove(&name);
                    if budgets.is_empty() {
                        self.current.remove(&ns);
                    }
                }
            }
        }
    }

    pub(crate) fn get(&self, key: &Key) -> Option<&Listed> {
        self.current.get(&key.0)?.get(&key.1)
    }

    /// The namespace's budgets, by name (what a roll says it waits for
    /// reads the same from one check to the next).
    pub(crate) fn in_namespace(&self, ns: &str) -> Vec<(Key, Listed)> {
        let mut out: Vec<(Key, Listed)> = self
            .current
            .get(ns)
            .into_iter()
            .flatten()
            .map(|(name, l)| ((ns.to_string(), name.clone()), l.clone()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The one budget over a pod of `ns` with `labels`, and its numbers;
    /// None under none or several (the eviction API refuses a pod under
    /// several, whatever they allow). Looked up in the watch's own set:
    /// each of a roll's nodes used to copy every budget of the cluster
    /// into an index of its own (1 MB at 14,500 budgets, 50 MB for 50
    /// nodes at once).
    pub(crate) fn one_over(
        &self,
        ns: &str,
        labels: &BTreeMap<String, String>,
    ) -> Option<(Key, Budget)> {
        let mut over = self
            .current
            .get(ns)?
            .iter()
            .filter(|(_, l)| l.selector.as_ref().is_some_and(|s| s.matches(labels)));
        match (over.next(), over.next()) {
            (Some((name, l)), None) => Some(((ns.to_string(), name.clone()), l.budget)),
            _ => None,
        }
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
        ["a", "b"]
            .iter()
            .flat_map(|ns| e.in_namespace(ns))
            .map(|(k, _)| k.1)
            .collect()
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
        assert_eq!(e.in_namespace("b").len(), 1);
    }

    #[test]
    fn a_pod_has_the_one_budget_of_its_namespace_that_selects_it() {
        let mut e = Every::default();
        for (ns, name) in [("a", "web"), ("b", "web"), ("a", "db")] {
            e.apply(&watcher::Event::Apply(pdb(ns, name, 1)));
        }
        let labels = |app: &str| [("app".to_string(), app.to_string())].into();
        let (key, budget) = e.one_over("a", &labels("web")).unwrap();
        assert_eq!(key, ("a".to_string(), "web".to_string()));
        assert_eq!(budget.disruptions_allowed, 1);
        assert!(
            e.one_over("c", &labels("web")).is_none(),
            "no budget in its namespace"
        );
        assert!(
            e.one_over("a", &labels("cache")).is_none(),
            "none selects it"
        );
        // A second budget over the same pods: the eviction API refuses it.
        let mut both = pdb("a", "web-too", 1);
        both.spec.as_mut().unwrap().selector = pdb("a", "web", 1).spec.unwrap().selector;
        e.apply(&watcher::Event::Apply(both));
        assert!(
            e.one_over("a", &labels("web")).is_none(),
            "under two budgets"
        );
        assert!(e.one_over("b", &labels("web")).is_some());
    }
}
