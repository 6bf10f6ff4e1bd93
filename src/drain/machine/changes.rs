//! The node's pods changing (gone, updated, arrived), the timer, and what
//! `--surge` did.

use k8s_openapi::api::core::v1::Pod;

use super::member::State;
use super::{Change, NodeMachine};
use crate::policy::classify::{SkipReason, is_finished, priority};
use crate::vocabulary::events::{Event, Surged};
use crate::vocabulary::outcome::{Cause, PodOutcome, PodResult};
use crate::vocabulary::pod_key::{PodKey, uid};

impl NodeMachine {
    pub(super) fn on_change(&mut self, change: Change) {
        match change {
            Change::Gone { key, uid: gone } => {
                let node = self.node.clone();
                // A pod whose EvictionRequest a responder worked on, or
                // whose eviction is in flight: the drain evicted it (the
                // answer comes after the pod went).
                if self.members.get(&key).is_some_and(|m| {
                    uid(&m.pod) == gone
                        && (m.requested || matches!(m.state, State::InFlight))
                        && !m.evicted
                        && !m.done()
                }) {
                    self.accepted(&key);
                }
                if let Some(m) = self.members.get_mut(&key)
                    && uid(&m.pod) == gone
                    && !m.done()
                {
                    m.state = State::Done(match (&m.state, &m.forced) {
                        (_, Some(why)) => PodResult::Forced { why: why.clone() },
                        (State::Waiting(_), None) => PodResult::Completed,
                        _ if m.evicted => PodResult::Evicted,
                        _ => PodResult::GoneByItself,
                    });
                    self.emit(Event::PodGone { node, pod: key });
                }
            }
            Change::Upsert(pod) => self.on_upsert(*pod),
            Change::Error(message) => self.emit(Event::ApiTrouble {
                node: self.node.clone(),
                message,
            }),
            Change::Polling(warning) => self.emit(Event::Warning(warning)),
        }
    }

    pub(super) fn on_upsert(&mut self, pod: Pod) {
        let key = PodKey::of(&pod);
        let node = self.node.clone();
        let now = self.last.at;
        match self.members.get_mut(&key) {
            Some(m) if uid(&m.pod) == uid(&pod) => {
                // Changed in place by someone else than the drain: by its
                // kubelet, perhaps, going down (a graceful shutdown fails
                // every pod, deleting none): the node is read now, not at
                // the next period. A pod being deleted (an EvictionRequest
                // that went through) is the drain's own doing.
                let untouched = !m.evicted
                    && !m.done()
                    && pod.metadata.deletion_timestamp.is_none()
                    && !matches!(m.state, State::InFlight | State::Terminating);
                // A metadata-only watch brings no spec or status: keep ours.
                m.pod.metadata = pod.metadata;
                if pod.status.is_some() {
                    m.pod.status = pod.status;
                }
                if pod.spec.is_some() {
                    m.pod.spec = pod.spec;
                }
                // A pod handed over to its operator changed (KubeVirt's old
                // launcher completing once the VM has moved): asked again
                // now, not at the refusal's retry time.
                if let State::Blocked {
                    cause: Cause::HandedOver { .. },
                    retry_at,
                    ..
                } = &mut m.state
                {
                    *retry_at = Some(now);
                }
                if is_finished(&m.pod) && matches!(m.state, State::Waiting(_)) {
                    m.state = State::Done(PodResult::Completed);
                    self.emit(Event::PodGone { node, pod: key });
                }
                self.health_due |= untouched && self.down.is_none();
            }
            Some(m) if !m.done() => {}
            _ => {
                // A pod that arrived after the drain began: one that
                // tolerates the cordon, or a StatefulSet's pod recreated
                // under the same name. It would come back if evicted, as
                // kubectl drain knows: it is reported, not chased.
                // A pod left alone from the start (a DaemonSet's, say)
                // changing is not an arrival.
                let listed = self.others.iter().any(|o| o.pod == key);
                if !listed {
                    self.others.push(PodOutcome {
                        pod: key,
                        priority: priority(&pod),
                        owner: crate::policy::classify::controller_kind(&pod)
                            .map(|(k, _)| k.to_string()),
                        wave: None,
                        result: PodResult::Skipped {
                            reason: SkipReason::ArrivedDuringDrain,
                        },
                        warning: None,
                    });
                }
            }
        }
    }

    pub(super) fn on_tick(&mut self) {
        let now = self.last.at;
        self.retry_where(|s| matches!(s, State::Blocked { retry_at: Some(at), .. } if *at <= now));
        self.expire_long_deletions();
        self.expire_lost();
    }

    /// `--skip-wait-for-delete-timeout`: a pod terminating longer than that counts as gone.
    pub(super) fn expire_long_deletions(&mut self) {
        let limit = self.settings.skip_wait_for_delete;
        if limit == 0 {
            return;
        }
        let now = self.last.wall.as_second();
        let mut expired = Vec::new();
        for m in self.members.values_mut() {
            let old = m
                .pod
                .metadata
                .deletion_timestamp
                .as_ref()
                .is_some_and(|t| now - t.0.as_second() > limit as i64);
            if old && !m.done() {
                m.state = State::Done(PodResult::Evicted);
                expired.push(PodKey::of(&m.pod));
            }
        }
        for pod in expired {
            self.emit(Event::NotWaitedFor {
                node: self.node.clone(),
                pod,
                seconds: limit,
            });
        }
    }

    /// `--surge` answered: said on screen; a workload that cannot surge is
    /// noted on its pod, which waits on its budget as before; no surge
    /// made now is asked again at the pod's next refusal.
    pub(super) fn on_surged(&mut self, key: &PodKey, result: Result<Option<String>, String>) {
        let surged = match result {
            Ok(None) => {
                // Decided again with the facts of the next refusal (the
                // budget's numbers change as pods come and go).
                if let Some(m) = self.members.get_mut(key) {
                    m.surge_asked = false;
                }
                return;
            }
            Ok(Some(deployment)) => Surged::Scaling {
                namespace: key.namespace.clone(),
                deployment,
            },
            Err(why) => {
                let not = Surged::Not { why };
                if let Some(m) = self.members.get_mut(key) {
                    m.warning = Some(not.to_string());
                }
                not
            }
        };
        self.emit(Event::Surge {
            node: self.node.clone(),
            pod: key.clone(),
            surged,
        });
    }
}
