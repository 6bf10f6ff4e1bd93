//! The node's drain ends: its outcome, every pod with where it stands.

use super::member::State;
use super::{Effect, NodeMachine};
use crate::drain::conclude::{self, Ended, Standing};
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{NodeOutcome, NodeStatus};

impl NodeMachine {
    pub(super) fn finish(&mut self, status: NodeStatus, message: Option<String>) {
        self.finished = true;
        let elapsed = self.last.at.saturating_duration_since(self.started);
        let outcome = self.build(status, message);
        self.emit(Event::NodeDone {
            node: self.node.clone(),
            elapsed,
            outcome: std::sync::Arc::new(outcome.clone()),
        });
        self.effects.push(Effect::Finish(Box::new(outcome)));
    }

    pub(super) fn outcome(mut self, status: NodeStatus, message: Option<String>) -> NodeOutcome {
        self.build(status, message)
    }

    pub(super) fn build(&mut self, status: NodeStatus, message: Option<String>) -> NodeOutcome {
        let ended = self
            .members
            .iter()
            .map(|(key, m)| Ended {
                key,
                pod: &m.pod,
                wave: m.wave,
                standing: match &m.state {
                    State::Done(r) => Standing::Done(r.clone()),
                    State::Blocked { cause, .. } => Standing::Blocked(cause.clone()),
                    State::Waiting(reason) => Standing::Waiting(reason.clone()),
                    State::Terminating => Standing::Terminating,
                    State::Queued | State::InFlight => Standing::NotStarted,
                },
                warning: m.warning.clone(),
            })
            .collect();
        let names: Vec<String> = self.settings.waves.iter().map(|w| w.name.clone()).collect();
        let down = self.down.as_ref().map(|d| (self.node.as_str(), d));
        let mut pods = conclude::pod_outcomes(
            ended,
            &names,
            &self.terminating_namespaces,
            down,
            self.last.wall,
        );
        pods.extend(self.others.iter().cloned());
        pods.sort_by(|a, b| a.pod.cmp(&b.pod));
        NodeOutcome {
            node: self.node.clone(),
            status,
            message,
            was_cordoned: self.was_cordoned,
            not_cordoned: false,
            elapsed_ms: self.ms(),
            waves: self.waves.clone(),
            pods,
            budget_holds: self.budget_holds(),
            not_ready: self.down.clone(),
        }
    }
}
