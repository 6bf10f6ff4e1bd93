//! Before anything changes: find the nodes, list their pods, read what the
//! filters need, and decide every pod's fate.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::ListParams;

use super::DrainError;
use crate::classify::{Context, DaemonSets, Disposition, FilterFlags, controller_kind};
use crate::plan::Plan;

pub enum NodeSelection {
    Names(Vec<String>),
    Selector(String),
}

pub struct PreparedNode {
    pub node: Node,
    pub name: String,
    pub pods: Vec<(Pod, Disposition)>,
}

/// Says on stderr that a request is being retried (before any progress display starts).
pub fn warn(what: &'static str) -> impl FnMut(&kube::Error) {
    move |e| eprintln!("warning: {what} failed, retrying: {e}")
}

pub fn api_error(
    verb: &str,
    resource: &str,
    namespace: Option<&str>,
    e: &kube::Error,
) -> DrainError {
    match e {
        kube::Error::Api(s) if s.code == 403 => DrainError::Forbidden {
            verb: verb.to_string(),
            resource: resource.to_string(),
            namespace: namespace.map(str::to_string),
            message: s.message.clone(),
        },
        other => DrainError::Api(format!("{verb} {resource}: {other}")),
    }
}

pub async fn resolve_nodes(
    client: &kube::Client,
    selection: &NodeSelection,
) -> Result<Vec<Node>, DrainError> {
    let api: Api<Node> = Api::all(client.clone());
    match selection {
        NodeSelection::Names(names) => {
            let mut out = Vec::new();
            let mut missing = Vec::new();
            for n in names {
                match super::retry::with_retries(|| api.get(n), warn("reading a node")).await {
                    Ok(node) => out.push(node),
                    Err(kube::Error::Api(s)) if s.code == 404 => missing.push(n.clone()),
                    Err(e) => return Err(api_error("get", "nodes", None, &e)),
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
            let list = super::retry::with_retries(|| api.list(&params), warn("listing nodes"))
                .await
                .map_err(|e| api_error("list", "nodes", None, &e))?;
            if list.items.is_empty() {
                return Err(DrainError::NoNodesMatch(sel.clone()));
            }
            Ok(list.items)
        }
    }
}

/// What the guard rails look at, at a cost that grows with the selection,
/// not the cluster (crate::guard::ClusterView).
pub async fn cluster_view(
    client: &kube::Client,
    guards: &crate::guard::Guards,
    selected: usize,
) -> Result<crate::guard::ClusterView, DrainError> {
    let api: Api<Node> = Api::all(client.clone());
    let list = |params: ListParams| {
        let api = api.clone();
        async move {
            super::retry::with_retries(|| api.list(&params), warn("listing nodes"))
                .await
                .map_err(|e| api_error("list", "nodes", None, &e))
        }
    };
    let mut control_planes =
        list(ListParams::default().labels(crate::guard::CONTROL_PLANE_SELECTOR))
            .await?
            .items;
    let legacy = list(ListParams::default().labels("node-role.kubernetes.io/master"))
        .await?
        .items;
    for n in legacy {
        if !control_planes
            .iter()
            .any(|c| c.metadata.name == n.metadata.name)
        {
            control_planes.push(n);
        }
    }
    // Enough schedulable nodes to find one the selection leaves, if any.
    let sample = list(
        ListParams::default()
            .fields("spec.unschedulable=false")
            .limit(u32::try_from(selected + 64).unwrap_or(u32::MAX)),
    )
    .await?;
    let sample_complete = sample
        .metadata
        .continue_
        .as_deref()
        .is_none_or(str::is_empty);
    let all = match guards.max_unavailable {
        Some(_) => Some(list(ListParams::default()).await?.items),
        None => None,
    };
    Ok(crate::guard::ClusterView {
        control_planes,
        schedulable_sample: sample.items,
        sample_complete,
        all,
    })
}

/// Every pod on a node, page by page as `--chunk-size` asks.
pub async fn list_pods(
    client: &kube::Client,
    node: &str,
    pod_selector: Option<&str>,
    chunk: u32,
) -> Result<Vec<Pod>, DrainError> {
    let api: Api<Pod> = Api::all(client.clone());
    let mut params = ListParams::default().fields(&format!("spec.nodeName={node}"));
    if let Some(sel) = pod_selector.filter(|s| !s.is_empty()) {
        params = params.labels(sel);
    }
    if chunk > 0 {
        params = params.limit(chunk);
    }
    let mut pods = Vec::new();
    loop {
        let page = super::retry::with_retries(|| api.list(&params), warn("listing pods"))
            .await
            .map_err(|e| api_error("list", "pods", None, &e))?;
        pods.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(pods),
        }
    }
}

/// kubectl GETs the DaemonSet of every DaemonSet pod; one GET per DaemonSet does.
pub async fn daemonsets(client: &kube::Client, pods: &[&Pod]) -> Result<DaemonSets, DrainError> {
    let wanted: BTreeSet<(String, String)> = pods
        .iter()
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
        let found = match super::retry::with_retries(|| api.get(&name), warn("reading a DaemonSet"))
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Err(s.message.clone()),
            Err(e) => return Err(api_error("get", "daemonsets.apps", Some(&ns), &e)),
        };
        out.insert((ns, name), found);
    }
    Ok(out)
}

/// Every namespace's labels (for namespace selectors) and the names of
/// those being deleted (their pods may hang in Terminating).
pub async fn namespaces(
    client: &kube::Client,
) -> Result<(HashMap<String, BTreeMap<String, String>>, BTreeSet<String>), DrainError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let params = ListParams::default();
    let list = super::retry::with_retries(|| api.list(&params), warn("listing namespaces"))
        .await
        .map_err(|e| api_error("list", "namespaces", None, &e))?;
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

pub struct Classifier {
    pub plan: Plan,
    pub flags: FilterFlags,
    pub namespace_labels: HashMap<String, BTreeMap<String, String>>,
    pub terminating_namespaces: BTreeSet<String>,
    pub daemonsets: DaemonSets,
}

impl Classifier {
    pub fn classify(&self, pod: &Pod) -> Disposition {
        Context {
            plan: &self.plan,
            flags: &self.flags,
            namespace_labels: &self.namespace_labels,
            daemonsets: &self.daemonsets,
            now: Timestamp::now(),
        }
        .classify(pod)
    }
}
