//! One watch of every node for a whole roll: which node may go next, and
//! every wait of a node's roll (the reboot, Ready), read from it instead of
//! listing or getting nodes each second. kube-runtime's watcher lists,
//! then watches, and lists again when the watch expires; where watching
//! nodes is forbidden, they are listed every `POLL` instead (as kubectl
//! drain polls), said once.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::ListParams;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

use crate::vocabulary::DrainError;
use crate::vocabulary::api_error::api_error;
use crate::vocabulary::api_error::forbidden;
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

/// How often nodes are listed where they may not be watched.
pub(crate) const POLL: Duration = Duration::from_secs(2);

/// Every node, as last seen.
pub(crate) struct Nodes {
    seen: Arc<Seen>,
    task: JoinHandle<()>,
}

#[derive(Default)]
struct Seen {
    nodes: Mutex<BTreeMap<String, Arc<Node>>>,
    /// Woken at every change.
    changed: Notify,
}

impl Seen {
    fn replace(&self, nodes: Vec<Node>) {
        let nodes = nodes
            .into_iter()
            .map(|n| (name(&n), Arc::new(slim(n))))
            .collect();
        *self.nodes.lock().expect("nodes") = nodes;
        self.changed.notify_waiters();
    }

    fn apply(&self, node: Node) {
        let name = name(&node);
        self.nodes
            .lock()
            .expect("nodes")
            .insert(name, Arc::new(slim(node)));
        self.changed.notify_waiters();
    }

    fn delete(&self, node: &Node) {
        self.nodes.lock().expect("nodes").remove(&name(node));
        self.changed.notify_waiters();
    }
}

fn name(node: &Node) -> String {
    node.metadata.name.clone().unwrap_or_default()
}

/// A node as the roll keeps it: what it reads of every node (labels and
/// annotations, cordon and taints, conditions, boot ID, addresses), without
/// what a real node carries most of: its images (dozens, each with its
/// names), its volumes, capacity and managedFields. The uncordon, which
/// reads managedFields, GETs its node.
fn slim(mut node: Node) -> Node {
    node.metadata.managed_fields = None;
    if let Some(status) = node.status.as_mut() {
        status.images = None;
        status.volumes_attached = None;
        status.volumes_in_use = None;
        status.capacity = None;
        status.allocatable = None;
        status.config = None;
        status.daemon_endpoints = None;
        status.runtime_handlers = None;
        status.features = None;
    }
    node
}

impl Nodes {
    /// Starts following every node; returns once the watch's first list
    /// is in, or with why that list failed.
    pub(crate) async fn start(client: &kube::Client, events: &Sink) -> Result<Self, DrainError> {
        let api: Api<Node> = Api::all(client.clone());
        let seen = Arc::new(Seen::default());
        let (listed, first) = oneshot::channel();
        let task = tokio::spawn(follow(api, seen.clone(), events.clone(), listed));
        let nodes = Nodes { seen, task };
        first
            .await
            .expect("the node watch reports its first list")
            .map_err(|e| api_error("list", "nodes", None, e))?;
        Ok(nodes)
    }

    /// Every node.
    pub(crate) fn all(&self) -> Vec<Arc<Node>> {
        self.seen
            .nodes
            .lock()
            .expect("nodes")
            .values()
            .cloned()
            .collect()
    }

    /// One node, if it exists.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<Node>> {
        self.seen.nodes.lock().expect("nodes").get(name).cloned()
    }

    /// Resolves at the next change of any node. Asked for before the nodes
    /// are read, so that no change between is missed.
    pub(crate) fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.seen.changed.notified()
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Follows the nodes with a watch, telling `listed` how its first list
/// went; lists them every `POLL` once watching is refused (said once).
async fn follow(
    api: Api<Node>,
    seen: Arc<Seen>,
    events: Sink,
    listed: oneshot::Sender<Result<(), kube::Error>>,
) {
    let mut listed = Some(listed);
    let mut fresh: Vec<Node> = Vec::new();
    let mut stream = watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(item) = stream.next().await {
        match item {
            Ok(watcher::Event::Init) => fresh.clear(),
            Ok(watcher::Event::InitApply(n)) => fresh.push(n),
            Ok(watcher::Event::InitDone) => {
                seen.replace(std::mem::take(&mut fresh));
                if let Some(l) = listed.take() {
                    let _ = l.send(Ok(()));
                }
            }
            Ok(watcher::Event::Apply(n)) => seen.apply(n),
            Ok(watcher::Event::Delete(n)) => seen.delete(&n),
            Err(watcher::Error::InitialListFailed(e)) if listed.is_some() => {
                if let Some(l) = listed.take() {
                    let _ = l.send(Err(e));
                }
                return;
            }
            Err(e) => {
                // Other failures the watcher retries, with backoff.
                if let Some(error) = forbidden(&e) {
                    let warning = Warning::NodesPolled { error, every: POLL };
                    emit(&events, Event::Warning(warning));
                    break;
                }
            }
        }
    }
    drop(stream);
    loop {
        tokio::time::sleep(POLL).await;
        if let Ok(list) = api.list(&ListParams::default()).await {
            seen.replace(list.items);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roll::node::{boot_id, now_of};
    use serde_json::json;

    #[test]
    fn a_kept_node_has_what_the_roll_reads_and_not_its_images() {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""},
                "annotations": {"a": "b"},
                "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
            "spec": {"unschedulable": true, "taints": [{"key": "k", "effect": "NoSchedule"}]},
            "status": {
                "conditions": [{"type": "Ready", "status": "False",
                    "lastTransitionTime": "2026-11-27T10:00:00Z"}],
                "nodeInfo": {"bootID": "b1", "architecture": "amd64", "containerRuntimeVersion": "",
                    "kernelVersion": "", "kubeProxyVersion": "", "kubeletVersion": "",
                    "machineID": "", "operatingSystem": "linux", "osImage": "", "systemUUID": ""},
                "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                "images": [{"names": ["registry.example/app:1"], "sizeBytes": 1}],
                "capacity": {"cpu": "4"}, "allocatable": {"cpu": "4"},
                "volumesInUse": ["v"]
            }
        }))
        .unwrap();
        let kept = slim(node.clone());
        assert_eq!(kept.metadata.labels, node.metadata.labels);
        assert_eq!(kept.metadata.annotations, node.metadata.annotations);
        assert_eq!(kept.spec, node.spec);
        assert_eq!(boot_id(&kept), "b1");
        let (now, then) = (now_of(&kept), now_of(&node));
        assert_eq!(now.down_since_ms, then.down_since_ms);
        assert!(now.down_since_ms.is_some(), "not Ready since 10:00");
        let (status, was) = (kept.status.unwrap(), node.status.unwrap());
        assert_eq!(status.addresses, was.addresses);
        assert_eq!(status.conditions, was.conditions);
        assert!(status.images.is_none() && status.capacity.is_none());
        assert!(status.volumes_in_use.is_none() && kept.metadata.managed_fields.is_none());
    }
}
