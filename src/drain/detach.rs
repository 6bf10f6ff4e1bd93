//! Waiting, once a node's pods are gone, until the volumes they used are
//! detached from it: a node is safe to power off only then. The evicted
//! pods' claims name their PersistentVolumes; the node's VolumeAttachments
//! (storage.k8s.io/v1, written by the attach/detach controller) for those
//! volumes must be gone. VolumeAttachments take no field selector but
//! their name, so the nodes of one drain share one watch of them all
//! (`Attachments`), started when a node first waits: one list and one
//! watch, not a list of every attachment each second for each node. Said
//! on screen once with what is attached; `--detach-timeout` ends the wait
//! (the node is then reported timed out, naming the volumes);
//! `--skip-wait-for-detach` skips it. Without permission to read claims or
//! VolumeAttachments, one warning says so and the node counts as drained,
//! as kubectl drain would.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::Api;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::vocabulary::events::Announcer;
use crate::vocabulary::warning::Warning;

/// The attachments among `all` that hold one of `volumes` on `node`, by
/// (VolumeAttachment, volume).
pub(crate) fn attached<'a>(
    all: impl IntoIterator<Item = &'a VolumeAttachment>,
    node: &str,
    volumes: &BTreeSet<String>,
) -> Vec<(String, String)> {
    all.into_iter()
        .filter(|va| va.spec.node_name == node)
        .filter_map(|va| {
            let pv = va.spec.source.persistent_volume_name.as_ref()?;
            volumes
                .contains(pv)
                .then(|| (va.metadata.name.clone().unwrap_or_default(), pv.clone()))
        })
        .collect()
}

/// Every VolumeAttachment of the cluster, kept current by one watch that
/// the nodes of a drain share, and told when one changes.
#[derive(Default)]
pub(crate) struct Attachments {
    /// The store once listed, or the RBAC refusal that means it never will
    /// be. Any other failure is not kept: the next node's wait lists again,
    /// so one failed list does not turn the wait off for the whole drain.
    store: tokio::sync::Mutex<Option<Result<Store<VolumeAttachment>, String>>>,
    changed: Arc<Notify>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Attachments {
    /// Every VolumeAttachment, listed once and watched, or why not.
    pub(crate) async fn store(
        &self,
        client: &kube::Client,
    ) -> Result<Store<VolumeAttachment>, String> {
        let mut kept = self.store.lock().await;
        if let Some(kept) = kept.as_ref() {
            return kept.clone();
        }
        match self.watch(client).await {
            Ok(store) => kept.insert(Ok(store)).clone(),
            Err(e) if e.forbidden => kept.insert(Err(e.message)).clone(),
            Err(e) => Err(e.message),
        }
    }

    async fn watch(
        &self,
        client: &kube::Client,
    ) -> Result<Store<VolumeAttachment>, super::mirror::Unlisted> {
        let changed = self.changed.clone();
        let (task, store) = super::mirror::start(Api::all(client.clone()), move |event| {
            if let watcher::Event::InitDone | watcher::Event::Apply(_) | watcher::Event::Delete(_) =
                event
            {
                changed.notify_waiters();
            }
        })
        .await;
        *self.task.lock().expect("attachments task") = Some(task);
        store
    }
}

impl Drop for Attachments {
    fn drop(&mut self) {
        if let Some(task) = self.task.lock().expect("attachments task").take() {
            task.abort();
        }
    }
}

/// Waits until the claims' volumes are detached from `node`: Ok, or why
/// not within `limit`.
pub(crate) async fn wait(
    client: &kube::Client,
    attachments: &Attachments,
    events: &Announcer,
    node: &str,
    claims: &[(String, String)],
    limit: std::time::Duration,
) -> Result<(), String> {
    let mut volumes = BTreeSet::new();
    for (ns, claim) in claims {
        let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), ns);
        match api.get_opt(claim).await {
            Ok(Some(pvc)) => {
                if let Some(v) = pvc
                    .spec
                    .and_then(|s| s.volume_name)
                    .filter(|v| !v.is_empty())
                {
                    volumes.insert(v);
                }
            }
            Ok(None) => {}
            Err(e) => {
                // The API server's words (verb, resource, user), not the
                // client's debug dump of its Status.
                let error = crate::vocabulary::api_error::api_error(
                    "get",
                    "persistentvolumeclaims",
                    Some(claim),
                    e,
                );
                events.warn_once(Warning::CannotReadClaims {
                    error: error.to_string(),
                });
                return Ok(());
            }
        }
    }
    if volumes.is_empty() {
        return Ok(());
    }
    let store = match attachments.store(client).await {
        Ok(store) => store,
        Err(e) => {
            events.warn_once(Warning::CannotListAttachments { error: e });
            return Ok(());
        }
    };
    let deadline = tokio::time::Instant::now() + limit;
    let mut said = false;
    loop {
        // Asked for before the store is read, so no change is missed.
        let changed = attachments.changed.notified();
        let left = attached(store.state().iter().map(|va| &**va), node, &volumes);
        if left.is_empty() {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            let names: Vec<String> = left
                .iter()
                .map(|(va, pv)| format!("{pv} (VolumeAttachment {va})"))
                .collect();
            return Err(format!(
                "volumes still attached after {}: {}",
                crate::duration::human(limit),
                names.join(", ")
            ));
        }
        if !said {
            said = true;
            events.warn(Warning::AwaitingDetach {
                node: node.to_string(),
                volumes: left
                    .iter()
                    .map(|(va, pv)| (pv.clone(), va.clone()))
                    .collect(),
            });
        }
        let _ = tokio::time::timeout_at(deadline, changed).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn va(name: &str, node: &str, pv: &str) -> VolumeAttachment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "spec": {"attacher": "csi", "nodeName": node, "source": {"persistentVolumeName": pv}},
        }))
        .unwrap()
    }

    #[test]
    fn only_the_evicted_pods_volumes_on_this_node_count() {
        let all = [
            va("a", "n1", "pv-1"),
            va("b", "n2", "pv-1"),
            va("c", "n1", "pv-9"),
        ];
        let volumes: BTreeSet<String> = ["pv-1".to_string()].into();
        assert_eq!(
            attached(&all, "n1", &volumes),
            [("a".to_string(), "pv-1".to_string())]
        );
        assert!(attached(&all, "n3", &volumes).is_empty());
    }
}
