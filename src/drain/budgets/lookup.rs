//! Which PodDisruptionBudgets select which pods, as policy/v1 reads a
//! budget's selector: for the confirmation, for the eviction API's refusal
//! of a pod under several budgets, and for the watch of every budget
//! (`every`), which says each pod's budget to drains of several nodes at
//! once before their first eviction.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::api::ListParams;
use kube_conventions::selector::Selector;

use crate::vocabulary::pod_key::PodKey;

/// The budgets that allow no disruption now, listed once (one LIST of
/// every budget), to be matched against any number of pods.
pub(crate) struct TightBudgets(Vec<(String, String, Selector, super::Budget)>);

impl TightBudgets {
    /// None when the budgets cannot be listed: nothing is said blocked.
    pub(crate) async fn list(client: &kube::Client) -> Self {
        let api: Api<PodDisruptionBudget> = Api::all(client.clone());
        let Ok(list) = api.list(&ListParams::default()).await else {
            return TightBudgets(Vec::new());
        };
        let tight = list
            .items
            .iter()
            .filter(|p| {
                p.status
                    .as_ref()
                    .is_some_and(|s| s.disruptions_allowed.unwrap_or(0) == 0)
            })
            .filter_map(|pdb| {
                Some((
                    pdb.metadata.namespace.clone().unwrap_or_default(),
                    pdb.metadata.name.clone().unwrap_or_default(),
                    budget_selector(pdb)?,
                    super::Budget::from_pdb(pdb),
                ))
            })
            .collect();
        TightBudgets(tight)
    }

    /// Pods (`namespace/name`) one of these budgets holds, with its name
    /// and numbers.
    pub(crate) fn of<'a>(
        &self,
        pods: impl IntoIterator<Item = &'a Pod>,
    ) -> BTreeMap<PodKey, (String, super::Budget)> {
        let mut out = BTreeMap::new();
        for pod in pods {
            let labels = pod.metadata.labels.clone().unwrap_or_default();
            let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
            if let Some((_, name, _, budget)) = self
                .0
                .iter()
                .filter(|(at, ..)| at == ns)
                .find(|(_, _, sel, _)| sel.matches(&labels))
            {
                out.insert(PodKey::of(pod), (name.clone(), *budget));
            }
        }
        out
    }
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
