//! Time limits: `--timeout` for the node, each wave's timeout, and
//! `--deadline`, which deletes what is still held, each pod its grace
//! period before the deadline (as Karpenter times it).

use std::time::Duration;

use tokio::time::Instant;

use super::member::{Member, State};
use super::{Effect, NodeMachine};
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{Forced, NodeStatus};
use crate::vocabulary::pod_key::{PodKey, uid};

impl NodeMachine {
    /// The grace period a pod is deleted with: `--grace-period`, else its own.
    pub(super) fn grace(&self, m: &Member) -> i64 {
        crate::policy::guard::grace_period(&m.pod, self.settings.grace_period)
    }

    /// When `--deadline` deletes this pod: its grace period before the
    /// deadline (at once when that is already past), as Karpenter times it.
    pub(super) fn force_at(&self, m: &Member) -> Option<Instant> {
        let deadline = self.started + self.settings.deadline?;
        let grace = Duration::from_secs(self.grace(m).max(0) as u64);
        Some(
            deadline
                .checked_sub(grace)
                .unwrap_or(self.started)
                .max(self.started),
        )
    }

    /// Is this pod one the deadline deletes: refused, or held back by the
    /// waves before it, or, with `--deadline-overrides-markers`, held by a
    /// marker; not one already on its way out. A pod of the running wave
    /// is asked for by eviction first: what its budget allows goes that way.
    pub(super) fn forceable(&self, m: &Member) -> bool {
        m.forced.is_none()
            && match &m.state {
                State::Queued => m.attempts > 0 || m.wave > self.wave(),
                State::Blocked { .. } => true,
                State::Waiting(_) => self.settings.deadline_overrides_markers,
                State::InFlight | State::Terminating | State::Done(_) => false,
            }
    }

    /// Deletes every pod whose time under `--deadline` came, budgets bypassed.
    pub(super) fn force_due(&mut self) {
        if self.settings.deadline.is_none() {
            return;
        }
        let now = self.last.at;
        let due: Vec<PodKey> = self
            .members
            .iter()
            .filter(|(_, m)| self.forceable(m) && self.force_at(m).is_some_and(|at| at <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            let grace = self.grace(&self.members[&key]);
            let node = self.node.clone();
            let m = self.members.get_mut(&key).expect("member");
            let why = match &m.state {
                State::Blocked { cause, .. } => Forced::Held(cause.clone()),
                State::Waiting(reason) => Forced::Waiting(reason.clone()),
                _ => Forced::NotEvictedYet,
            };
            m.forced = Some(why.clone());
            m.state = State::InFlight;
            self.in_flight += 1;
            let uid = uid(&m.pod).to_string();
            self.effects.push(Effect::Force {
                key: key.clone(),
                uid,
                grace,
            });
            self.emit(Event::Forced {
                node,
                pod: key,
                why,
                grace,
            });
        }
    }

    /// When this node's `--timeout` runs out.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.settings.timeout.map(|t| self.started + t)
    }

    pub(super) fn wave_deadline(&self) -> Option<Instant> {
        let r = self.running?;
        let timeout = self.settings.waves.get(r.wave)?.timeout?;
        Some(r.started + timeout)
    }

    pub(super) fn check_deadlines(&mut self) {
        let now = self.last.at;
        if self.wave_deadline().is_some_and(|d| now >= d) {
            let name = self.settings.waves[self.wave()].name.clone();
            let message = format!("wave {name} did not finish within its timeout");
            self.finish(NodeStatus::TimedOut, Some(message));
        } else if self.deadline().is_some_and(|d| now >= d) {
            let message = "--timeout passed for this node".to_string();
            self.finish(NodeStatus::TimedOut, Some(message));
        }
    }
}
