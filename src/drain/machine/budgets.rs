//! A budget's changes: the causes it holds pods for refreshed, and as many
//! of them retried as it allows and the broker granted this node.

use super::NodeMachine;
use super::answers::budget_cause;
use super::member::State;
use crate::drain::budgets::{Budget, Key as BudgetKey, UNWATCHED_RETRY};
use crate::vocabulary::outcome::Cause;
use crate::vocabulary::pod_key::PodKey;

impl NodeMachine {
    /// No change of this budget will come: retry its pods on kubectl's timer.
    pub(super) fn on_unwatched(&mut self, key: BudgetKey) {
        let soon = self.last.at + UNWATCHED_RETRY;
        for m in self.members.values_mut() {
            if let State::Blocked {
                retry_at: Some(at),
                budget: Some(b),
                ..
            } = &mut m.state
                && *b == key
                && *at > soon
            {
                *at = soon;
            }
        }
        self.unwatched.insert(key);
    }

    /// How many pods this budget holds that its next disruption could
    /// free: those of the running wave or an earlier one.
    pub(crate) fn retry_wanted(&self, key: &BudgetKey) -> usize {
        let wave = self.wave();
        self.held_by(key)
            .filter(|k| self.members[*k].wave <= wave)
            .count()
    }

    /// Does the budget hold one of this node's pods?
    pub(crate) fn held_by_budget(&self, key: &BudgetKey) -> bool {
        self.held_by(key).next().is_some()
    }

    pub(super) fn held_by<'a>(
        &'a self,
        key: &'a BudgetKey,
    ) -> impl Iterator<Item = &'a PodKey> + 'a {
        self.members
            .iter()
            .filter(move |(_, m)| matches!(&m.state, State::Blocked { budget: Some(b), .. } if b == key))
            .map(|(k, _)| k)
    }

    /// A budget changed: refresh the causes it holds pods for, and retry as
    /// many of them as it now allows and were granted to this node.
    pub(super) fn on_budget(&mut self, key: &BudgetKey, budget: Budget, grant: usize) {
        self.budgets.insert(key.clone(), budget);
        // `--surge` decided again as the budget changes, not only at the
        // next refusal: a surge found not needed yet (the budget counted an
        // old pod still stopping) is needed as soon as the budget says that
        // no disruption will come by itself.
        if budget.never_allows() {
            let surge_all = self.settings.surge;
            let want: Vec<PodKey> = self
                .held_by(key)
                .filter(|k| {
                    let m = &self.members[*k];
                    (surge_all || m.surge) && !m.surge_asked
                })
                .cloned()
                .collect();
            for k in want {
                self.ask_surge(&k, key.clone());
            }
        }
        let mut allowed = (budget.disruptions_allowed.max(0) as usize).min(grant);
        let wave = self.wave();
        let held: Vec<PodKey> = self.held_by(key).cloned().collect();
        for k in held {
            let m = self.members.get_mut(&k).expect("member");
            // The report shows the budget's latest numbers; the listeners
            // were told of the budget once (see `block`).
            if let State::Blocked { cause, .. } = &mut m.state
                && let Cause::Pdb { message, .. } = cause
            {
                *cause = budget_cause(&key.1, Some(&budget), std::mem::take(message));
            }
            if allowed > 0 && m.wave <= wave {
                allowed -= 1;
                self.granted.insert(k.clone(), key.clone());
                self.queue.push_back(k);
            }
        }
    }
}
