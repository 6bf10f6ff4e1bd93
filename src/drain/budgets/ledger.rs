//! The disruptions each budget allows, handed out as tickets to the
//! evictions of every node drained at once: pure bookkeeping, no I/O.
//!
//! Each change of a budget (seen by a watch, or listed before the drain)
//! hands out its `disruptionsAllowed` anew, as a new issue of tickets. A
//! first attempt takes one before it is sent; a budget's change is claimed
//! by the nodes holding its pods, so that a budget freeing one disruption
//! wakes one eviction across every node, not one per node. An eviction that
//! did not disrupt (a server error, throttling, a pod already gone) gives
//! its ticket back, if the issue it came from is still the current one; a
//! refusal by the budget itself says it allows none now, so its tickets go
//! until it next changes. Who gets a ticket first is the start order
//! (`queue`).

use std::collections::HashMap;

use super::budget::Key;
use super::queue::Queue;

/// One disruption of a budget, taken from one issue of its tickets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub(crate) budget: Key,
    issue: u64,
}

/// What the answer to an eviction that held a ticket means for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spent {
    /// The pod is being evicted: the disruption is used.
    Disrupted,
    /// The budget refused it: it allows none now.
    RefusedByBudget,
    /// Nothing was disrupted (a server error, throttling, forbidden, gone).
    Unused,
}

/// The ledger's answer to a first attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Asked {
    /// Go, with this disruption.
    Ticket(Ticket),
    /// Go: the budget's numbers are not known, the API decides alone.
    Unknown,
    /// Wait: every disruption is taken, or due to nodes started earlier.
    Held,
}

#[derive(Debug, Clone, Copy, Default)]
struct Count {
    left: usize,
    issue: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Ledger {
    budgets: HashMap<Key, Count>,
    /// Per budget, the pods each node (by rank) still has due on it.
    queue: Queue,
    /// Per budget, the pods of every node being drained whose eviction
    /// has not been sent yet, later waves included: what the pool weighs
    /// when it chooses the next node.
    unsent: HashMap<Key, usize>,
    issues: u64,
}

impl Ledger {
    /// A budget allows `allowed` disruptions as of now: a new issue.
    pub(crate) fn hand_out(&mut self, budget: &Key, allowed: usize) {
        self.issues += 1;
        self.budgets.insert(
            budget.clone(),
            Count {
                left: allowed,
                issue: self.issues,
            },
        );
    }

    /// A first attempt of the node of this rank on the budget: a ticket
    /// when one is left that no earlier node wants.
    pub(crate) fn ask(&mut self, budget: &Key, rank: usize) -> Asked {
        let Some(count) = self.budgets.get_mut(budget) else {
            return Asked::Unknown;
        };
        if self.queue.share(rank, budget, count.left) == 0 {
            return Asked::Held;
        }
        count.left -= 1;
        Asked::Ticket(Ticket {
            budget: budget.clone(),
            issue: count.issue,
        })
    }

    /// Up to `wanted` of the budget's free disruptions for the node of this
    /// rank (what earlier nodes still want is left to them).
    pub(crate) fn claim(&mut self, budget: &Key, wanted: usize, rank: usize) -> Vec<Ticket> {
        let Some(count) = self.budgets.get_mut(budget) else {
            return Vec::new();
        };
        let taken = wanted.min(self.queue.share(rank, budget, count.left));
        count.left -= taken;
        let ticket = Ticket {
            budget: budget.clone(),
            issue: count.issue,
        };
        vec![ticket; taken]
    }

    /// The answer to the eviction that held this ticket.
    pub(crate) fn spend(&mut self, ticket: &Ticket, spent: Spent) {
        let Some(count) = self.budgets.get_mut(&ticket.budget) else {
            return;
        };
        match spent {
            // A ticket of an older issue was counted again by the new one.
            Spent::Unused if count.issue == ticket.issue => count.left += 1,
            Spent::Disrupted | Spent::Unused => {}
            Spent::RefusedByBudget => count.left = 0,
        }
    }

    /// Tickets taken and not used (a node that ended first): back.
    pub(crate) fn give_back(&mut self, tickets: impl IntoIterator<Item = Ticket>) {
        for t in tickets {
            self.spend(&t, Spent::Unused);
        }
    }

    /// Free disruptions of the budget no node has taken (None: not known).
    #[cfg(test)]
    pub(crate) fn left(&self, budget: &Key) -> Option<usize> {
        self.budgets.get(budget).map(|c| c.left)
    }

    /// `n` more pods of the node of this rank are due on the budget.
    pub(crate) fn want(&mut self, rank: usize, budget: &Key, n: usize) {
        self.queue.want(rank, budget, n);
    }

    /// One of them was sent, or no longer needs to be.
    pub(crate) fn sent(&mut self, rank: usize, budget: &Key) {
        self.queue.sent(rank, budget);
    }

    /// The node of this rank is done.
    pub(crate) fn forget(&mut self, rank: usize) {
        self.queue.forget(rank);
    }

    /// One more pod of a node being drained will be evicted under this budget.
    pub(crate) fn will_send(&mut self, budget: &Key) {
        *self.unsent.entry(budget.clone()).or_default() += 1;
    }

    /// A pod counted by `will_send` was sent, is gone, or its node is done.
    pub(crate) fn not_unsent(&mut self, budget: &Key) {
        if let Some(n) = self.unsent.get_mut(budget) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.unsent.remove(budget);
            }
        }
    }

    /// Pods of the nodes being drained still to be sent under this budget.
    #[cfg(test)]
    pub(crate) fn unsent(&self, budget: &Key) -> usize {
        self.unsent.get(budget).copied().unwrap_or(0)
    }

    /// The same, for every budget with pods still to be sent.
    pub(crate) fn for_each_unsent(&self, mut f: impl FnMut(&Key, usize)) {
        for (key, n) in &self.unsent {
            f(key, *n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Key {
        ("ns".to_string(), name.to_string())
    }

    fn ticket(asked: Asked) -> Ticket {
        match asked {
            Asked::Ticket(t) => t,
            other => panic!("no ticket: {other:?}"),
        }
    }

    #[test]
    fn a_first_attempt_takes_a_ticket_and_none_is_left_for_the_next() {
        let mut l = Ledger::default();
        let web = key("web");
        l.hand_out(&web, 1);
        assert!(matches!(l.ask(&web, 0), Asked::Ticket(_)));
        assert_eq!(l.ask(&web, 1), Asked::Held, "the one disruption is taken");
        assert_eq!(l.ask(&key("db"), 1), Asked::Unknown, "a budget not known");
    }

    #[test]
    fn an_answer_other_than_success_gives_the_ticket_back() {
        let mut l = Ledger::default();
        let web = key("web");
        l.hand_out(&web, 1);
        let t = ticket(l.ask(&web, 0));
        assert_eq!(l.left(&web), Some(0));
        // A 500: nothing was disrupted, the next attempt may go.
        l.spend(&t, Spent::Unused);
        assert_eq!(l.left(&web), Some(1));
        let t = ticket(l.ask(&web, 0));
        l.spend(&t, Spent::Disrupted);
        assert_eq!(l.left(&web), Some(0), "an eviction uses its disruption");
    }

    #[test]
    fn a_retry_granted_by_a_change_gives_its_ticket_back_too() {
        let mut l = Ledger::default();
        let web = key("web");
        l.hand_out(&web, 0);
        l.hand_out(&web, 2);
        let granted = l.claim(&web, 3, 0);
        assert_eq!(granted.len(), 2, "no more than the budget allows");
        assert_eq!(l.left(&web), Some(0));
        l.give_back(granted);
        assert_eq!(l.left(&web), Some(2));
    }

    #[test]
    fn a_ticket_of_an_older_issue_is_not_counted_twice() {
        let mut l = Ledger::default();
        let web = key("web");
        l.hand_out(&web, 1);
        let t = ticket(l.ask(&web, 0));
        // The budget changed while the eviction was in flight: its new
        // numbers already count that disruption as free or used.
        l.hand_out(&web, 1);
        l.spend(&t, Spent::Unused);
        assert_eq!(l.left(&web), Some(1));
    }

    #[test]
    fn a_refusal_by_the_budget_leaves_no_ticket_until_it_changes() {
        let mut l = Ledger::default();
        let web = key("web");
        l.hand_out(&web, 2);
        let t = ticket(l.ask(&web, 0));
        l.spend(&t, Spent::RefusedByBudget);
        assert_eq!(l.ask(&web, 0), Asked::Held);
        l.hand_out(&web, 1);
        assert!(matches!(l.ask(&web, 0), Asked::Ticket(_)));
    }

    #[test]
    fn tickets_go_first_to_the_node_that_started_first() {
        let mut l = Ledger::default();
        let web = key("web");
        l.want(0, &web, 1);
        l.want(1, &web, 1);
        l.hand_out(&web, 1);
        assert_eq!(l.ask(&web, 1), Asked::Held, "node 0 still wants the one");
        assert!(l.claim(&web, 1, 1).is_empty());
        assert_eq!(l.claim(&web, 1, 0).len(), 1);
        l.sent(0, &web);
        l.hand_out(&web, 1);
        assert!(
            matches!(l.ask(&web, 1), Asked::Ticket(_)),
            "node 0 has none due"
        );
        l.forget(1);
    }

    #[test]
    fn a_finished_node_leaves_its_share_to_the_next() {
        let mut l = Ledger::default();
        let web = key("web");
        l.want(0, &web, 2);
        l.hand_out(&web, 2);
        assert_eq!(l.ask(&web, 1), Asked::Held);
        l.forget(0);
        assert!(matches!(l.ask(&web, 1), Asked::Ticket(_)));
    }
}
