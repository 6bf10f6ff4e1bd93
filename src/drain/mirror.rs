//! One watch of every object of a kind, mirrored where the nodes of a drain
//! read it instead of listing again: the VolumeAttachments (`detach`) in
//! kube-runtime's reflector store (`start`), the budgets in their own
//! compact set (`follow`, crate::drain::budgets::every).

use std::fmt::Debug;
use std::hash::Hash;

use futures::StreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Why a mirror's first list failed (after the client's retries).
#[derive(Debug, Clone)]
pub(crate) struct Unlisted {
    pub(crate) message: String,
    /// Refused by RBAC: asking again will not help.
    pub(crate) forbidden: bool,
}

/// Starts following every object `api` lists, in a store (kube-runtime's
/// reflector) kept without managedFields, which no reader of a mirror reads
/// and which are most of a real object's bytes; `seen` is told each event
/// once the store holds it. Returns the watch's task, and once the first
/// list is in the store, or why that list failed (see `follow`).
pub(crate) async fn start<K, F>(
    api: Api<K>,
    mut seen: F,
) -> (JoinHandle<()>, Result<Store<K>, Unlisted>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
    F: FnMut(&watcher::Event<K>) + Send + 'static,
{
    let (reader, mut writer) = reflector::store();
    let (task, listed) = follow(api, move |event| {
        let event = event.modify(|o| o.meta_mut().managed_fields = None);
        writer.apply_watcher_event(&event);
        seen(&event);
    })
    .await;
    (task, listed.map(|()| reader))
}

/// Follows every object `api` lists: `apply` is given each event of the
/// watch (kube-runtime's watcher: a first list, then changes, relisting
/// after a 410). Returns the watch's task, and once the first list was
/// applied, or why that list failed (after the client's retries; the watch
/// then stops; later failures the watcher retries with backoff).
pub(crate) async fn follow<K, F>(
    api: Api<K>,
    mut apply: F,
) -> (JoinHandle<()>, Result<(), Unlisted>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    F: FnMut(watcher::Event<K>) + Send + 'static,
{
    let (listed, ready) = oneshot::channel::<Result<(), Unlisted>>();
    let task = tokio::spawn(async move {
        let mut listed = Some(listed);
        let mut stream = watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => {
                    let done = matches!(event, watcher::Event::InitDone);
                    apply(event);
                    if done && let Some(l) = listed.take() {
                        let _ = l.send(Ok(()));
                    }
                }
                Err(e) => {
                    if let Some(l) = listed.take() {
                        // A refusal in the API server's words (verb,
                        // resource, user), not the client's dump of it.
                        let refused = crate::vocabulary::api_error::forbidden(&e);
                        let _ = l.send(Err(Unlisted {
                            forbidden: refused.is_some(),
                            message: refused.unwrap_or_else(|| e.to_string()),
                        }));
                        return;
                    }
                }
            }
        }
    });
    let listed = match ready.await {
        Ok(result) => result,
        Err(_) => Err(Unlisted {
            message: "the watch ended before its first list".into(),
            forbidden: false,
        }),
    };
    (task, listed)
}
