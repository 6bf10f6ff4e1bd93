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

use crate::drain::DrainError;
use crate::drain::api_error::api_error;
use crate::drain::events::{Event, Sink, emit};
use crate::drain::mirror::forbidden;
use crate::drain::warning::Warning;

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
        let nodes = nodes.into_iter().map(|n| (name(&n), Arc::new(n))).collect();
        *self.nodes.lock().expect("nodes") = nodes;
        self.changed.notify_waiters();
    }

    fn apply(&self, node: Node) {
        let name = name(&node);
        self.nodes
            .lock()
            .expect("nodes")
            .insert(name, Arc::new(node));
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
