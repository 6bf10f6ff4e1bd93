//! Waves in order, each waiting for the one before, and evictions sent up
//! to the in-flight limit.

use std::time::Duration;

use super::member::{Member, State};
use super::{Effect, Eviction, NodeMachine, Running};
use crate::policy::classify::{WaitReason, claim_names};
use crate::policy::node_health::NodeDown;
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{Cause, NodeStatus, PodResult, WaveOutcome};
use crate::vocabulary::pod_key::{PodKey, uid};

impl NodeMachine {
    /// Finishes waves that are done, starts the next one with pods, sends
    /// what the queue holds as far as the in-flight limit allows.
    pub(super) fn advance(&mut self) {
        loop {
            let current = self.running.map(|r| r.wave);
            if let Some(w) = current {
                let done = self
                    .members
                    .values()
                    .filter(|m| m.wave <= w)
                    .all(Member::done);
                if !done {
                    if self.stuck(w) {
                        let message = self.failures.join("; ");
                        self.finish(NodeStatus::Failed, Some(message));
                        return;
                    }
                    break;
                }
                self.wave_done(w);
            }
            let next = current.map_or(0, |w| w + 1);
            let Some(w) = (next..self.settings.waves.len())
                .find(|w| self.members.values().any(|m| m.wave == *w && !m.done()))
            else {
                self.pods_gone();
                return;
            };
            self.start_wave(w);
        }
        self.pump();
    }

    pub(super) fn start_wave(&mut self, w: usize) {
        let name = self.settings.waves[w].name.clone();
        let pods = self
            .members
            .values()
            .filter(|m| m.wave == w && !m.done())
            .count();
        self.running = Some(Running {
            wave: w,
            started: self.last.at,
        });
        let at = self.ms();
        self.waves.push(WaveOutcome {
            name: name.clone(),
            pods,
            started_ms: Some(at),
            finished_ms: None,
        });
        self.queue.extend(
            self.members
                .iter()
                .filter(|(_, m)| m.wave == w && matches!(m.state, State::Queued))
                .map(|(k, _)| k.clone()),
        );
        self.emit(Event::WaveStarted {
            node: self.node.clone(),
            wave: name,
            pods,
        });
        // A held pod is waited for the way a budget makes kubectl wait:
        // said on screen, with how to release it.
        let held: Vec<(PodKey, WaitReason)> = self
            .members
            .iter()
            .filter(|(_, m)| m.wave == w)
            .filter_map(|(k, m)| match &m.state {
                State::Waiting(reason) => Some((k.clone(), reason.clone())),
                _ => None,
            })
            .collect();
        for (pod, reason) in held {
            let release = reason.release_for(&pod.namespace, &pod.name);
            self.emit(Event::Blocked {
                node: self.node.clone(),
                pod,
                cause: Cause::WaitingForCompletion { reason },
                budget: None,
                release: Some(release),
            });
        }
    }

    pub(super) fn wave_done(&mut self, w: usize) {
        // The last wave stays the running one while the node finishes
        // (volumes detaching): it is done once, not at every later input.
        if self.waves.last().is_some_and(|l| l.finished_ms.is_some()) {
            return;
        }
        let at = self.ms();
        let mut elapsed = Duration::ZERO;
        if let Some(r) = self.running {
            elapsed = self.last.at.saturating_duration_since(r.started);
        }
        if let Some(last) = self.waves.last_mut() {
            last.finished_ms = Some(at);
        }
        self.emit(Event::WaveDone {
            node: self.node.clone(),
            wave: self.settings.waves[w].name.clone(),
            elapsed,
        });
    }

    /// Queues again every pod of the running wave or an earlier one whose
    /// state `retry` picks.
    pub(super) fn retry_where(&mut self, retry: impl Fn(&State) -> bool) {
        let wave = self.wave();
        let due: Vec<PodKey> = self
            .members
            .iter()
            .filter(|(_, m)| m.wave <= wave && retry(&m.state))
            .map(|(k, _)| k.clone())
            .collect();
        self.queue.extend(due);
    }

    /// Sends evictions for queued and retried pods, up to the in-flight limit.
    pub(super) fn pump(&mut self) {
        let limit = self.settings.in_flight.max(1);
        while self.in_flight < limit {
            let Some(key) = self.queue.pop_front() else {
                break;
            };
            let Some(m) = self.members.get_mut(&key) else {
                continue;
            };
            if !matches!(m.state, State::Queued | State::Blocked { .. }) {
                continue;
            }
            m.state = State::InFlight;
            self.in_flight += 1;
            let uid = uid(&m.pod).to_string();
            let handled_by = crate::policy::classify::handled_by(&m.pod);
            let granted = self.granted.remove(&key);
            let group = crate::drain::evict::gang::group_of(&m.pod);
            let phase = m.pod.status.as_ref().and_then(|s| s.phase.as_deref());
            let phase = phase.unwrap_or_default();
            let budget_free = self.down.as_ref().is_some_and(NodeDown::shutting_down)
                || kube_conventions::eviction::ignores_budget(
                    phase,
                    m.pod.metadata.deletion_timestamp.is_some(),
                );
            // A grouped pod goes through the eviction subresource.
            m.requested |= self.settings.by_request && group.is_none();
            self.effects.push(Effect::Evict(Eviction {
                key,
                uid,
                handled_by,
                granted,
                group,
                budget_free,
            }));
        }
    }

    /// Has wave `w` nothing left that can move: every pod not gone failed
    /// for good and no eviction in flight?
    pub(super) fn stuck(&self, w: usize) -> bool {
        !self.failures.is_empty()
            && self.in_flight == 0
            && self
                .members
                .values()
                .filter(|m| m.wave <= w && !m.done())
                .all(|m| {
                    matches!(
                        m.state,
                        State::Blocked {
                            retry_at: None,
                            budget: None,
                            ..
                        }
                    )
                })
    }

    /// Every pod is gone: the node is drained, once the volumes its
    /// evicted pods used are detached (when there are any to wait for).
    pub(super) fn pods_gone(&mut self) {
        if self.detaching {
            return;
        }
        let mut claims: Vec<(String, String)> = self
            .members
            .iter()
            .filter(|(_, m)| m.evicted || m.forced.is_some())
            // A lost pod's volumes stay attached until it is gone: it is
            // reported with them instead (crate::drain::machine::lost).
            .filter(|(_, m)| !matches!(m.state, State::Done(PodResult::Lost { .. })))
            .flat_map(|(k, m)| claim_names(&m.pod).map(|c| (k.namespace.clone(), c.to_string())))
            .collect();
        claims.sort();
        claims.dedup();
        match self.settings.detach_wait {
            Some(limit) if !claims.is_empty() => {
                self.detaching = true;
                self.effects.push(Effect::AwaitDetach { claims, limit });
            }
            _ => self.finish(NodeStatus::Drained, None),
        }
    }
}
