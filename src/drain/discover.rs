//! Before anything changes: find the nodes, read what the guard rails and
//! kubectl's filters need, and decide every pod's fate.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::ListParams;

use super::{DrainError, NodeSelection};
use crate::policy::classify::{Context, DaemonSets, Disposition, FilterFlags, controller_kind};
use crate::policy::plan::Plan;
use crate::vocabulary::api_error::api_error;
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

pub(crate) async fn resolve_nodes(
    client: &kube::Client,
    selection: &NodeSelection,
) -> Result<Vec<Node>, DrainError> {
    let api: Api<Node> = Api::all(client.clone());
    match selection {
        NodeSelection::Names(names) => {
            let mut out = Vec::new();
            let mut missing = Vec::new();
            for n in names {
                match api.get(n).await {
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
            let list = api
                .list(&params)
                .await
                .map_err(|e| api_error("list", "nodes", None, e))?;
            if list.items.is_empty() {
                return Err(DrainError::NoNodesMatch(sel.clone()));
            }
            Ok(list.items)
        }
        NodeSelection::Kubelet { selector, range } => {
            let params = match selector {
                Some(sel) => ListParams::default().labels(sel),
                None => ListParams::default(),
            };
            let list = api
                .list(&params)
                .await
                .map_err(|e| api_error("list", "nodes", None, e))?;
            let taken: Vec<Node> = list
                .items
                .into_iter()
                .filter(|n| range.takes_node(n))
                .collect();
            if taken.is_empty() {
                return Err(DrainError::NoNodesMatch(selection.words()));
            }
            Ok(taken)
        }
    }
}

/// What the guard rails look at, at a cost that grows with the selection,
/// not the cluster (crate::policy::guard::ClusterView).
pub(crate) async fn cluster_view(
    client: &kube::Client,
    events: &Sink,
    selected: usize,
) -> Result<crate::policy::guard::ClusterView, DrainError> {
    let api: Api<Node> = Api::all(client.clone());
    let list = |params: ListParams| {
        let api = api.clone();
        async move {
            api.list(&params)
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
            emit(
                events,
                Event::Warning(Warning::CannotListNodes { error: message }),
            );
            (Vec::new(), false)
        }
        Err(e) => return Err(e),
    };
    Ok(crate::policy::guard::ClusterView {
        schedulable_sample,
        sample_complete,
    })
}

/// kubectl GETs the DaemonSet of every DaemonSet pod; one GET per DaemonSet
/// does: those of `pods` not `known` yet are read into it.
pub(crate) async fn daemonsets(
    client: &kube::Client,
    pods: &[Pod],
    known: &mut DaemonSets,
) -> Result<(), DrainError> {
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
        .filter(|k| !known.contains_key(k))
        .collect();
    for (ns, name) in wanted {
        let api: Api<DaemonSet> = Api::namespaced(client.clone(), &ns);
        let found = match api.get(&name).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Err(s.message.clone()),
            Err(e) => return Err(api_error("get", "daemonsets.apps", Some(&ns), e)),
        };
        known.insert((ns, name), found);
    }
    Ok(())
}

/// Every namespace's labels (for namespace selectors) and the names of
/// those being deleted (their pods may hang in Terminating).
pub(crate) async fn namespaces(
    client: &kube::Client,
) -> Result<(HashMap<String, BTreeMap<String, String>>, BTreeSet<String>), DrainError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let params = ListParams::default();
    let list = api
        .list(&params)
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
