//! What a pool drain knows of the budgets when it chooses the next node
//! (`crate::policy::pool::next` decides): each node's pods to evict per
//! budget, the pods of nodes not started yet, the running nodes' pods not
//! sent yet (the broker's ledger) and what each budget allows at once.
//! Budgets get dense ids, so that weighing hundreds of candidates' budgets
//! at each choice reads arrays, not maps behind locks.

use std::collections::{BTreeMap, HashMap};

use super::budgets::{Broker, Key};
use crate::policy::pool::{BudgetNow, next};

pub(crate) struct PoolBudgets<'a> {
    ids: HashMap<&'a Key, usize>,
    keys: Vec<&'a Key>,
    /// Each node's pods to evict, per budget id.
    per_node: Vec<BTreeMap<usize, usize>>,
    /// Pods of the nodes not started yet, per budget id.
    not_started: Vec<usize>,
    /// What each budget allows at once, read from the broker the first
    /// time a candidate holds its pods.
    at_once: Vec<Option<usize>>,
    /// The running nodes' pods not sent yet, per budget id, as of the
    /// current choice (and which ids it set).
    busy: Vec<usize>,
    busy_set: Vec<usize>,
}

impl<'a> PoolBudgets<'a> {
    /// Each node's pods to evict, as the budget over each (pods without a
    /// known budget are not counted).
    pub(crate) fn new(nodes: impl IntoIterator<Item = impl IntoIterator<Item = &'a Key>>) -> Self {
        let (mut ids, mut keys) = (HashMap::new(), Vec::new());
        let per_node: Vec<BTreeMap<usize, usize>> = nodes
            .into_iter()
            .map(|pods| {
                let mut per = BTreeMap::new();
                for key in pods {
                    let id = *ids.entry(key).or_insert_with(|| {
                        keys.push(key);
                        keys.len() - 1
                    });
                    *per.entry(id).or_insert(0) += 1;
                }
                per
            })
            .collect();
        let mut not_started = vec![0; keys.len()];
        for (id, n) in per_node.iter().flatten() {
            not_started[*id] += n;
        }
        PoolBudgets {
            at_once: vec![None; keys.len()],
            busy: vec![0; keys.len()],
            busy_set: Vec::new(),
            ids,
            keys,
            per_node,
            not_started,
        }
    }

    /// Which of `waiting` (node indexes, in the order to keep) to start
    /// next, as its position. `chains`: weigh budgets' chains (more than
    /// one slot; a serial drain keeps the given order).
    pub(crate) fn choose(&mut self, waiting: &[usize], broker: &Broker, chains: bool) -> usize {
        for id in self.busy_set.drain(..) {
            self.busy[id] = 0;
        }
        broker.for_each_unsent(|key, n| {
            if let Some(id) = self.ids.get(key) {
                self.busy[*id] = n;
                self.busy_set.push(*id);
            }
        });
        let candidates: Vec<&BTreeMap<usize, usize>> =
            waiting.iter().map(|i| &self.per_node[*i]).collect();
        for id in candidates.iter().flat_map(|c| c.keys()) {
            if self.at_once[*id].is_none() {
                let budget = broker.get(self.keys[*id]);
                self.at_once[*id] = Some(budget.map_or(1, |b| b.at_once()));
            }
        }
        next(&candidates, |id| {
            let busy = self.busy[*id];
            BudgetNow {
                busy,
                allowed: self.at_once[*id].unwrap_or(1),
                left: if chains {
                    busy + self.not_started[*id]
                } else {
                    0
                },
            }
        })
    }

    /// The node was started: its pods are no longer waiting ones (the
    /// broker counts them until sent).
    pub(crate) fn started(&mut self, node: usize) {
        for (id, n) in &self.per_node[node] {
            self.not_started[*id] = self.not_started[*id].saturating_sub(*n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Key {
        ("ns".to_string(), name.to_string())
    }

    #[test]
    fn budgets_get_ids_and_waiting_pods_leave_as_nodes_start() {
        let (web, db) = (key("web"), key("db"));
        let nodes = [vec![&web, &web, &db], vec![&db], vec![]];
        let mut pool = PoolBudgets::new(nodes);
        assert_eq!(pool.keys, [&web, &db]);
        assert_eq!(pool.per_node[0], BTreeMap::from([(0, 2), (1, 1)]));
        assert_eq!(pool.not_started, [2, 2]);
        pool.started(0);
        assert_eq!(pool.not_started, [0, 1]);
    }
}
