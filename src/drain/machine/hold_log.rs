//! How long each budget held pods on the node, each moment counted once,
//! and whether it still holds one.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::time::Instant;

use super::NodeMachine;
use super::member::State;
use crate::drain::budgets::Key as BudgetKey;
use crate::vocabulary::outcome::BudgetHold;
use crate::vocabulary::pod_key::PodKey;

/// The pods a budget held on a node, and each span it held one.
pub(super) type HoldLog = (BTreeSet<PodKey>, Vec<(Instant, Instant)>);

/// Notes that `budget` held `pod` for `span`.
pub(super) fn log_hold(
    holds: &mut BTreeMap<BudgetKey, HoldLog>,
    budget: BudgetKey,
    pod: &PodKey,
    span: (Instant, Instant),
) {
    let (pods, spans) = holds.entry(budget).or_default();
    pods.insert(pod.clone());
    spans.push(span);
}

/// The time covered by some span, each moment counted once.
pub(super) fn union(mut spans: Vec<(Instant, Instant)>) -> Duration {
    spans.sort();
    let mut total = Duration::ZERO;
    let mut current: Option<(Instant, Instant)> = None;
    for (start, end) in spans {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + current.map_or(Duration::ZERO, |(s, e)| e - s)
}

impl NodeMachine {
    /// Ends the hold of every pod its budget no longer refuses: evicted,
    /// gone, or refused for another reason (a retry in flight still counts
    /// as held).
    pub(super) fn release_holds(&mut self) {
        let now = self.last.at;
        for (key, m) in &mut self.members {
            let still = match (&m.state, &m.held) {
                (State::InFlight, _) => true,
                (
                    State::Blocked {
                        budget: Some(b), ..
                    },
                    Some((h, _)),
                ) => b == h,
                _ => false,
            };
            if !still && let Some((budget, since)) = m.held.take() {
                log_hold(&mut self.holds, budget, key, (since, now));
            }
        }
    }

    /// Each budget's holds on this node: how long any of its pods waited
    /// on it (overlapping waits counted once), and whether one still does.
    pub(super) fn budget_holds(&self) -> Vec<BudgetHold> {
        let now = self.last.at;
        let mut holds = self.holds.clone();
        let mut holding = BTreeSet::new();
        for (key, m) in &self.members {
            if let Some((budget, since)) = &m.held {
                log_hold(&mut holds, budget.clone(), key, (*since, now));
                holding.insert(budget.clone());
            }
        }
        holds
            .into_iter()
            .map(|(budget, (pods, spans))| BudgetHold {
                holding: holding.contains(&budget),
                budget: format!("{}/{}", budget.0, budget.1),
                pods: pods.into_iter().collect(),
                held_ms: u64::try_from(union(spans).as_millis()).unwrap_or(u64::MAX),
            })
            .collect()
    }
}
