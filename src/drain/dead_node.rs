//! The I/O around a node whose kubelet is down: reading it again while its
//! pods are awaited (a kubelet can die during the drain), and, once the
//! node's drain ends, keeping of each lost pod's claims those whose volume
//! really is still attached to the node and cannot attach elsewhere
//! meanwhile (not ReadWriteMany or ReadOnlyMany). What cannot be read is
//! kept as the pod said it.

use std::time::Duration;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::Api;

use super::context::DrainContext;
use super::detach::attached;
use super::machine::{Input, NodeMachine};
use crate::vocabulary::outcome::{NodeOutcome, PodResult, Stuck};

/// How often a node is read again while the drain waits for its pods.
pub(crate) const HEALTH_EVERY: Duration = Duration::from_secs(10);

/// How far apart the node is read at once for its pods' changes.
const DUE_READS_APART: Duration = Duration::from_secs(1);

/// The node's reads while its drain runs: every `HEALTH_EVERY` while its
/// pods are awaited, and at once when a pod the drain did not touch
/// changed (its kubelet may be failing its pods for a shutdown), before
/// anything else is done, at most once every `DUE_READS_APART`; a change
/// sooner than that brings the next periodic read forward.
#[derive(Default)]
pub(crate) struct Reads {
    /// A periodic read is under way.
    reading: bool,
    /// Brings the periodic read forward.
    now: std::sync::Arc<tokio::sync::Notify>,
    last_due: Option<tokio::time::Instant>,
}

impl Reads {
    /// The node read now, if the machine asked for it and the last such
    /// read is not too recent.
    pub(crate) async fn due_now(
        &mut self,
        client: &kube::Client,
        machine: &mut NodeMachine,
    ) -> Option<Input> {
        if !machine.take_health_due() {
            return None;
        }
        if self
            .last_due
            .is_some_and(|at| at.elapsed() < DUE_READS_APART)
        {
            self.now.notify_one();
            return None;
        }
        self.last_due = Some(tokio::time::Instant::now());
        let down = Box::pin(super::heartbeat::read(client, machine.node())).await;
        Some(Input::NodeHealth(down))
    }

    /// The next periodic read, if one is due and none is under way.
    pub(crate) fn periodic(
        &mut self,
        client: &kube::Client,
        machine: &NodeMachine,
    ) -> Option<impl Future<Output = Input> + use<>> {
        if self.reading || !machine.awaits_deletions() {
            return None;
        }
        self.reading = true;
        let (client, node, now) = (client.clone(), machine.node().to_string(), self.now.clone());
        Some(async move {
            tokio::select! {
                () = tokio::time::sleep(HEALTH_EVERY) => {}
                () = now.notified() => {}
            }
            Input::NodeHealth(super::heartbeat::read(&client, &node).await)
        })
    }

    /// A read's answer came.
    pub(crate) fn answered(&mut self) {
        self.reading = false;
    }
}

/// Keeps of the lost pods' claims those whose volume is still attached to
/// the node, naming the volume and its VolumeAttachment.
pub(crate) async fn attached_volumes(ctx: &DrainContext, outcome: &mut NodeOutcome) {
    let client = &ctx.clients.main;
    let store = ctx.attachments.store(client).await.ok();
    for p in &mut outcome.pods {
        let PodResult::Lost { stuck, .. } = &mut p.result else {
            continue;
        };
        let mut kept = Vec::new();
        for s in std::mem::take(stuck) {
            let Stuck::Volume { claim, .. } = &s else {
                kept.push(s);
                continue;
            };
            let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &p.pod.namespace);
            let Ok(Some(pvc)) = api.get_opt(claim).await else {
                kept.push(s);
                continue;
            };
            let spec = pvc.spec.unwrap_or_default();
            let modes = spec.access_modes.unwrap_or_default();
            // Attachable to many nodes at once: nothing waits for it.
            let shared = !modes.is_empty()
                && modes
                    .iter()
                    .all(|m| m == "ReadWriteMany" || m == "ReadOnlyMany");
            // Unbound (nothing attached), or shared: not stuck.
            let Some(volume) = spec.volume_name.filter(|v| !v.is_empty() && !shared) else {
                continue;
            };
            let attachment = match &store {
                Some(store) => {
                    let wanted = [volume.clone()].into();
                    let all = store.state();
                    match attached(all.iter().map(|va| &**va), &outcome.node, &wanted).first() {
                        Some((va, _)) => Some(va.clone()),
                        // Detached already: nothing holds it.
                        None => continue,
                    }
                }
                None => None,
            };
            kept.push(Stuck::Volume {
                claim: claim.clone(),
                volume: Some(volume),
                attachment,
            });
        }
        *stuck = kept;
    }
}
