//! Waiting, once a node's pods are gone, until the volumes they used are
//! detached from it: a node is safe to power off only then. The evicted
//! pods' claims name their PersistentVolumes; the node's VolumeAttachments
//! (storage.k8s.io/v1, written by the attach/detach controller) for those
//! volumes must be gone. Looked at every second, said on screen once with
//! what is attached; `--detach-timeout` ends the wait (the node is then
//! reported timed out, naming the volumes); `--skip-wait-for-detach` skips
//! it. Without permission to read claims or VolumeAttachments, one warning
//! says so and the node counts as drained, as kubectl drain would.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::Api;
use kube::api::ListParams;

use super::engine::Engine;
use super::events::{Event, emit};

const POLL: Duration = Duration::from_secs(1);

/// The attachments among `all` that hold one of `volumes` on `node`, by
/// (VolumeAttachment, volume).
pub(crate) fn attached(
    all: &[VolumeAttachment],
    node: &str,
    volumes: &BTreeSet<String>,
) -> Vec<(String, String)> {
    all.iter()
        .filter(|va| va.spec.node_name == node)
        .filter_map(|va| {
            let pv = va.spec.source.persistent_volume_name.as_ref()?;
            volumes
                .contains(pv)
                .then(|| (va.metadata.name.clone().unwrap_or_default(), pv.clone()))
        })
        .collect()
}

/// Waits until the claims' volumes are detached from `node`: Ok, or why
/// not within `limit`.
pub(crate) async fn wait(
    engine: &Engine,
    node: &str,
    claims: &[(String, String)],
    limit: Duration,
) -> Result<(), String> {
    let client = &engine.clients.main;
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
                engine.warn_once(format!(
                    "cannot read PersistentVolumeClaims, so cannot wait for volumes to detach (nodes count as drained once their pods are gone): {e}"
                ));
                return Ok(());
            }
        }
    }
    if volumes.is_empty() {
        return Ok(());
    }
    let api: Api<VolumeAttachment> = Api::all(client.clone());
    let started = tokio::time::Instant::now();
    let mut said = false;
    loop {
        let all = match api.list(&ListParams::default()).await {
            Ok(list) => list.items,
            Err(e) => {
                engine.warn_once(format!(
                    "cannot list VolumeAttachments, so cannot wait for volumes to detach (nodes count as drained once their pods are gone): {e}"
                ));
                return Ok(());
            }
        };
        let left = attached(&all, node, &volumes);
        if left.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = left
            .iter()
            .map(|(va, pv)| format!("{pv} (VolumeAttachment {va})"))
            .collect();
        if started.elapsed() >= limit {
            return Err(format!(
                "volumes still attached after {}: {}",
                crate::duration::human(limit),
                names.join(", ")
            ));
        }
        if !said {
            said = true;
            let message = format!(
                "node/{node}: pods gone, waiting for {} to detach: {} (--skip-wait-for-detach to not wait)",
                kube_conventions::count(left.len(), "volume"),
                names.join(", ")
            );
            emit(&engine.events, Event::Warning { message });
        }
        tokio::time::sleep(POLL).await;
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
