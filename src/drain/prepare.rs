//! Before anything changes: find the nodes, list their pods, read what the
//! filters need, and decide every pod's fate.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::ListParams;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube_conventions::selector::Selector;

use super::events::{Event, Sink, emit};
use super::pod_key::PodKey;
use super::{DrainError, NodeSelection};
use crate::policy::classify::{Context, DaemonSets, Disposition, FilterFlags, controller_kind};
use crate::policy::plan::Plan;

/// Tells the listeners that a request is being retried.
pub(crate) fn warn(events: &Sink, what: &'static str) -> impl FnMut(&kube::Error) {
    move |e| {
        emit(
            events,
            Event::Warning {
                message: format!("{what} failed, retrying: {e}"),
            },
        );
    }
}

pub(crate) fn api_error(
    verb: &str,
    resource: &str,
    namespace: Option<&str>,
    e: kube::Error,
) -> DrainError {
    match e {
        kube::Error::Api(ref s) if s.code == 403 => DrainError::Forbidden {
            verb: verb.to_string(),
            resource: resource.to_string(),
            namespace: namespace.map(str::to_string),
            message: s.message.clone(),
        },
        source => DrainError::Api {
            request: format!("{verb} {resource}"),
            source,
        },
    }
}

pub(crate) async fn resolve_nodes(
    client: &kube::Client,
    selection: &NodeSelection,
    events: &Sink,
) -> Result<Vec<Node>, DrainError> {
    let api: Api<Node> = Api::all(client.clone());
    match selection {
        NodeSelection::Names(names) => {
            let mut out = Vec::new();
            let mut missing = Vec::new();
            for n in names {
                match super::retry::with_retries(|| api.get(n), warn(events, "reading a node"))
                    .await
                {
                    Ok(node) => out.push(node),
                    Err(kube::Error::Api(s)) if s.code == 404 => missing.push(n.clone()),
                    Err(e) => return Err(api_error("get", "nodes", None, e)),
                }
            }
            if missing.is_empty() {
                Ok(out)
            } else {
                Err(DrainError::NodesNotFound(missing))
            }
        }
        NodeSelection::Selector(sel) => {
            let params = ListParams::default().labels(sel);
            let list =
                super::retry::with_retries(|| api.list(&params), warn(events, "listing nodes"))
                    .await
                    .map_err(|e| api_error("list", "nodes", None, e))?;
            if list.items.is_empty() {
                return Err(DrainError::NoNodesMatch(sel.clone()));
            }
            Ok(list.items)
        }
    }
}

/// What the guard rails look at, at a cost that grows with the selection,
/// not the cluster (crate::policy::guard::ClusterView).
pub(crate) async fn cluster_view(
    client: &kube::Client,
    events: &Sink,
    guards: &crate::policy::guard::Guards,
    selected: usize,
) -> Result<crate::policy::guard::ClusterView, DrainError> {
    let api: Api<Node> = Api::all(client.clone());
    let list = |params: ListParams| {
        let api = api.clone();
        async move {
            super::retry::with_retries(|| api.list(&params), warn(events, "listing nodes"))
                .await
                .map_err(|e| api_error("list", "nodes", None, e))
        }
    };
    // Enough schedulable nodes to find one the selection leaves, if any:
    // one more than the selection (a node is ~1.5 KiB on the wire).
    let params = ListParams::default()
        .fields("spec.unschedulable=false")
        .limit(u32::try_from(selected + 1).unwrap_or(u32::MAX));
    let (schedulable_sample, sample_complete) = match list(params).await {
        Ok(sample) => {
            let complete = sample
                .metadata
                .continue_
                .as_deref()
                .is_none_or(str::is_empty);
            (sample.items, complete)
        }
        // Only a warning depends on it: without the permission, say so and go on.
        Err(DrainError::Forbidden { message, .. }) => {
            let message = format!(
                "cannot list nodes, so cannot tell whether a schedulable node will be left (the drain goes on): {message}"
            );
            emit(events, Event::Warning { message });
            (Vec::new(), false)
        }
        Err(e) => return Err(e),
    };
    let all = match guards.max_unavailable {
        Some(_) => Some(list(ListParams::default()).await?.items),
        None => None,
    };
    Ok(crate::policy::guard::ClusterView {
        schedulable_sample,
        sample_complete,
        all,
    })
}

/// kubectl GETs the DaemonSet of every DaemonSet pod; one GET per DaemonSet does.
pub(crate) async fn daemonsets(
    client: &kube::Client,
    pods: &[&Pod],
    events: &Sink,
) -> Result<DaemonSets, DrainError> {
    // A finished pod passes kubectl's DaemonSet filter without a lookup
    // (filters.go checks the owner only for pods still running).
    let wanted: BTreeSet<(String, String)> = pods
        .iter()
        .filter(|p| !crate::policy::classify::is_finished(p))
        .filter_map(|p| match controller_kind(p) {
            Some(("DaemonSet", name)) => Some((
                p.metadata.namespace.clone().unwrap_or_default(),
                name.to_string(),
            )),
            _ => None,
        })
        .collect();
    let mut out = HashMap::new();
    for (ns, name) in wanted {
        let api: Api<DaemonSet> = Api::namespaced(client.clone(), &ns);
        let found = match super::retry::with_retries(
            || api.get(&name),
            warn(events, "reading a DaemonSet"),
        )
        .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Err(s.message.clone()),
            Err(e) => return Err(api_error("get", "daemonsets.apps", Some(&ns), e)),
        };
        out.insert((ns, name), found);
    }
    Ok(out)
}

/// Every namespace's labels (for namespace selectors) and the names of
/// those being deleted (their pods may hang in Terminating).
pub(crate) async fn namespaces(
    client: &kube::Client,
    events: &Sink,
) -> Result<(HashMap<String, BTreeMap<String, String>>, BTreeSet<String>), DrainError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let params = ListParams::default();
    let list = super::retry::with_retries(|| api.list(&params), warn(events, "listing namespaces"))
        .await
        .map_err(|e| api_error("list", "namespaces", None, e))?;
    let mut labels = HashMap::new();
    let mut terminating = BTreeSet::new();
    for n in list.items {
        let name = n.metadata.name.unwrap_or_default();
        if n.status.and_then(|s| s.phase).as_deref() == Some("Terminating") {
            terminating.insert(name.clone());
        }
        labels.insert(name, n.metadata.labels.unwrap_or_default());
    }
    Ok((labels, terminating))
}

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

/// The one PodDisruptionBudget over each pod, from the watch of every
/// budget (`PdbWatches::every_budget`), each noted in `pdbs` with what it
/// allows now (a pod under several budgets is left out: the eviction API
/// refuses it anyway). Empty when budgets cannot be listed: evictions then
/// learn their budget from the API's answer, as kubectl's do.
pub(crate) async fn budgets_of(
    pods: &[&Pod],
    pdbs: &super::pdb_watch::PdbWatches,
) -> HashMap<PodKey, super::pdb_watch::Key> {
    let Some(every) = pdbs.every_budget().await else {
        return HashMap::new();
    };
    let mut by_namespace: HashMap<&str, Vec<(&PodDisruptionBudget, Selector)>> = HashMap::new();
    for pdb in every.iter().map(|p| &**p) {
        if let (Some(ns), Some(sel)) = (pdb.metadata.namespace.as_deref(), budget_selector(pdb)) {
            by_namespace.entry(ns).or_default().push((pdb, sel));
        }
    }
    let mut out = HashMap::new();
    for pod in pods {
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let over: Vec<&PodDisruptionBudget> = by_namespace
            .get(ns)
            .into_iter()
            .flatten()
            .filter(|(_, sel)| sel.matches(&labels))
            .map(|(pdb, _)| *pdb)
            .collect();
        if let [pdb] = over[..] {
            let key = (
                ns.to_string(),
                pdb.metadata.name.clone().unwrap_or_default(),
            );
            pdbs.seed(key.clone(), super::pdb_watch::Budget::from_pdb(pdb));
            out.insert(PodKey::of(pod), key);
        }
    }
    out
}

pub(crate) struct Classifier {
    pub(crate) plan: Plan,
    pub(crate) flags: FilterFlags,
    pub(crate) namespace_labels: HashMap<String, BTreeMap<String, String>>,
    pub(crate) terminating_namespaces: BTreeSet<String>,
    pub(crate) daemonsets: DaemonSets,
}

impl Classifier {
    /// Every pod's fate, decided once, at one instant.
    pub(crate) fn classify(&self, pods: Vec<Pod>, now: Timestamp) -> Vec<(Pod, Disposition)> {
        let context = Context {
            plan: &self.plan,
            flags: &self.flags,
            namespace_labels: &self.namespace_labels,
            daemonsets: &self.daemonsets,
            now,
        };
        pods.into_iter()
            .map(|p| {
                let d = context.classify(&p);
                (p, d)
            })
            .collect()
    }
}
