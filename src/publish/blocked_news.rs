//! Which holds of pods are worth a `DrainBlocked` Event, and when: a drain
//! of many nodes at once holds most pods on their budgets for a moment, and
//! that is not news to anyone following the node through the API. A hold is
//! told once it has lasted `TELL_AFTER`, or when its node's drain ends with
//! it still standing; a budget once per node, any other cause once per pod.
//! The screen and the log show every hold at once; only Events wait.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use crate::vocabulary::pod_key::PodKey;

pub(crate) const TELL_AFTER: Duration = Duration::from_secs(10);

/// A hold not told yet.
struct Held {
    node: String,
    /// What is told once per node: `pdb/NAMESPACE/NAME` for a budget, else
    /// the pod and its cause.
    identity: String,
    message: String,
    since: Instant,
}

#[derive(Default)]
pub(crate) struct Holds {
    pending: BTreeMap<PodKey, Held>,
    told: HashSet<(String, String)>,
}

impl Holds {
    /// A pod is held (`budget` is the PodDisruptionBudget holding it, if one is).
    pub(crate) fn held(
        &mut self,
        node: String,
        pod: &PodKey,
        cause: &str,
        budget: Option<&str>,
        now: Instant,
    ) {
        let (identity, message) = match budget {
            Some(b) => (
                format!("pdb/{b}"),
                format!("PodDisruptionBudget {b} holds evictions back (pod {pod} first): {cause}"),
            ),
            None => (
                format!("{pod}: {cause}"),
                format!("Pod {pod} blocks the drain: {cause}"),
            ),
        };
        let known = self.told.contains(&(node.clone(), identity.clone()))
            || self
                .pending
                .get(pod)
                .is_some_and(|h| h.identity == identity);
        if !known {
            let held = Held {
                node,
                identity,
                message,
                since: now,
            };
            self.pending.insert(pod.clone(), held);
        }
    }

    /// The pod went (or was evicted): its hold is over, untold.
    pub(crate) fn released(&mut self, pod: &PodKey) {
        self.pending.remove(pod);
    }

    /// (node, message) of every hold that has lasted `TELL_AFTER` by `now`.
    pub(crate) fn due(&mut self, now: Instant) -> Vec<(String, String)> {
        self.take(|h| now.duration_since(h.since) >= TELL_AFTER)
    }

    /// The node's drain ended with these holds standing: all of them, now.
    pub(crate) fn ended(&mut self, node: &str) -> Vec<(String, String)> {
        self.take(|h| h.node == node)
    }

    /// The node was drained: its holds ended by themselves.
    pub(crate) fn forget(&mut self, node: &str) {
        self.pending.retain(|_, h| h.node != node);
    }

    fn take(&mut self, which: impl Fn(&Held) -> bool) -> Vec<(String, String)> {
        let keys: Vec<PodKey> = self
            .pending
            .iter()
            .filter(|(_, h)| which(h))
            .map(|(k, _)| k.clone())
            .collect();
        let mut out = Vec::new();
        for k in keys {
            let h = self.pending.remove(&k).expect("listed above");
            if self.told.insert((h.node.clone(), h.identity)) {
                out.push((h.node, h.message));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str) -> PodKey {
        PodKey {
            namespace: "shop".into(),
            name: name.into(),
        }
    }

    #[test]
    fn a_hold_is_told_once_it_lasts_and_a_budget_once_per_node() {
        let t0 = Instant::now();
        let mut h = Holds::default();
        h.held("n1".into(), &pod("a"), "PDB web", Some("shop/web"), t0);
        h.held("n1".into(), &pod("b"), "PDB web", Some("shop/web"), t0);
        h.held("n2".into(), &pod("c"), "PDB web", Some("shop/web"), t0);
        assert!(h.due(t0 + Duration::from_secs(9)).is_empty());
        let told = h.due(t0 + TELL_AFTER);
        let nodes: Vec<&str> = told.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(nodes, ["n1", "n2"]);
        assert!(told[0].1.contains("pod shop/a first"), "{told:?}");
        // Held again on the same budget: already told for that node.
        h.held("n1".into(), &pod("d"), "PDB web", Some("shop/web"), t0);
        assert!(h.due(t0 + TELL_AFTER * 2).is_empty());
    }

    #[test]
    fn a_hold_that_ends_is_not_told_and_one_standing_at_the_end_is() {
        let t0 = Instant::now();
        let mut h = Holds::default();
        h.held("n1".into(), &pod("a"), "PDB web", Some("shop/web"), t0);
        h.released(&pod("a"));
        assert!(h.due(t0 + TELL_AFTER).is_empty());
        h.held("n1".into(), &pod("b"), "waits for its Job", None, t0);
        h.held("n2".into(), &pod("c"), "waits for its Job", None, t0);
        let told = h.ended("n1");
        assert_eq!(told.len(), 1);
        assert!(told[0].1.starts_with("Pod shop/b blocks the drain"));
        h.forget("n2");
        assert!(h.due(t0 + TELL_AFTER).is_empty());
    }
}
