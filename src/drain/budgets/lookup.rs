//! Which PodDisruptionBudgets select which pods, as policy/v1 reads a
//! budget's selector: for the confirmation, for the eviction API's refusal
//! of a pod under several budgets, and for drains of several nodes at once,
//! which learn each pod's budget before its first eviction.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::api::ListParams;
use kube_conventions::selector::Selector;

use super::budget::{Budget, Key};
use crate::drain::pod_key::PodKey;

/// Pods (`namespace/name`) whose PDB allows no disruption now, with the PDB.
pub(crate) async fn tight_budgets<'a>(
    client: &kube::Client,
    pods: impl Iterator<Item = &'a Pod> + Clone,
) -> BTreeMap<PodKey, String> {
    let api: Api<PodDisruptionBudget> = Api::all(client.clone());
    let Ok(list) = api.list(&ListParams::default()).await else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for pdb in list.items.iter().filter(|p| {
        p.status
            .as_ref()
            .is_some_and(|s| s.disruptions_allowed == 0)
    }) {
        let Some(sel) = budget_selector(pdb) else {
            continue;
        };
        for pod in pods
            .clone()
            .filter(|p| p.metadata.namespace == pdb.metadata.namespace)
        {
            if sel.matches(&pod.metadata.labels.clone().unwrap_or_default()) {
                out.insert(
                    PodKey::of(pod),
                    pdb.metadata.name.clone().unwrap_or_default(),
                );
            }
        }
    }
    out
}

/// The pods a budget selects, as policy/v1 reads its selector (a missing
/// selector selects nothing); `None` for a selector that does not parse.
pub(crate) fn budget_selector(pdb: &PodDisruptionBudget) -> Option<Selector> {
    let selector = pdb
        .spec
        .as_ref()
        .and_then(|s| s.selector.as_ref())
        .and_then(|s| serde_json::to_value(s).ok());
    Selector::from_label_selector(selector.as_ref()).ok()
}

/// The names of the PodDisruptionBudgets that select a pod, read when the
/// eviction API refuses it for having several (its message names none).
pub(crate) async fn budgets_selecting(client: &kube::Client, key: &PodKey) -> Option<Vec<String>> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &key.namespace);
    let labels = pods
        .get_metadata(&key.name)
        .await
        .ok()?
        .metadata
        .labels
        .unwrap_or_default();
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), &key.namespace);
    let list = budgets.list(&ListParams::default()).await.ok()?;
    Some(
        list.items
            .iter()
            .filter(|pdb| budget_selector(pdb).is_some_and(|s| s.matches(&labels)))
            .filter_map(|pdb| pdb.metadata.name.clone())
            .collect(),
    )
}

/// Every budget of the cluster by namespace, with its selector, from the
/// watch of every budget (`Broker::every_budget`): built once per drain,
/// asked node by node which budget is over each pod (`budgets_of`).
pub(crate) struct Index {
    by_namespace: HashMap<String, Vec<(String, Budget, Selector)>>,
}

impl Index {
    /// None when budgets cannot be listed: evictions then learn their
    /// budget from the API's answer, as kubectl's do.
    pub(crate) async fn of_every_budget(broker: &super::Broker) -> Option<Index> {
        let every = broker.every_budget(|_| true).await?;
        let mut by_namespace: HashMap<String, Vec<_>> = HashMap::new();
        for ((ns, name), listed) in every {
            if let Some(sel) = listed.selector {
                by_namespace
                    .entry(ns)
                    .or_default()
                    .push((name, listed.budget, sel));
            }
        }
        Some(Index { by_namespace })
    }

    /// The one PodDisruptionBudget over each pod, each noted in the broker
    /// with what it allowed when listed (a pod under several budgets is
    /// left out: the eviction API refuses it anyway).
    pub(crate) fn budgets_of<'a>(
        &self,
        pods: impl IntoIterator<Item = &'a Pod>,
        broker: &super::Broker,
    ) -> HashMap<PodKey, Key> {
        let mut out = HashMap::new();
        for pod in pods {
            let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
            let labels = pod.metadata.labels.clone().unwrap_or_default();
            let over: Vec<&(String, Budget, Selector)> = self
                .by_namespace
                .get(ns)
                .into_iter()
                .flatten()
                .filter(|(_, _, sel)| sel.matches(&labels))
                .collect();
            if let [(name, budget, _)] = over[..] {
                let key = (ns.to_string(), name.clone());
                broker.seed(key.clone(), *budget);
                out.insert(PodKey::of(pod), key);
            }
        }
        out
    }
}
