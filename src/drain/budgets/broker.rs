//! The one place a node's drain asks about the budgets it shares with
//! every other node drained at once (and every node of a roll): "may I
//! evict this pod now?", then what it sent and what it got. The broker
//! keeps the watches, the ledger of tickets and the start order; a node
//! holds a `NodeBudgets`, which gives back what it did not use when the
//! node's drain ends.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use k8s_openapi::api::core::v1::Pod;
use tokio::sync::{broadcast, mpsc};

use super::budget::{Budget, Key};
use super::every::Listed;
use super::ledger::{Asked, Ledger, Spent, Ticket};
use super::tell::Signal;
use super::watch::Watches;
use crate::vocabulary::events::Sink;
use crate::vocabulary::pod_key::PodKey;

/// Shared by every node's drain of a run (clones share it).
#[derive(Clone)]
pub(crate) struct Broker {
    watches: Watches,
    ledger: Arc<Mutex<Ledger>>,
    /// How many nodes' drains have joined: each one's rank in the start
    /// order.
    ranks: Arc<AtomicUsize>,
}

/// Whether a pod's eviction may be sent now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Go {
    Send,
    /// Every disruption this budget allows is taken by other evictions,
    /// or due to nodes that started earlier: held without asking.
    Hold(Key),
}

impl Broker {
    pub(crate) fn new(client: kube::Client, events: Sink) -> Self {
        let ledger = Arc::new(Mutex::new(Ledger::default()));
        Broker {
            watches: Watches::new(client, events, ledger.clone()),
            ledger,
            ranks: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Every change of a budget followed, told to each node's drain.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.watches.subscribe()
    }

    /// A followed budget's numbers as last seen.
    pub(crate) fn get(&self, key: &Key) -> Option<Budget> {
        self.watches.get(key)
    }

    /// Reads a budget once (dry runs, which do not wait for changes).
    pub(crate) async fn fetch(&self, key: &Key) -> Option<Budget> {
        self.watches.fetch(key).await
    }

    /// Follows this budget's changes from now on; false when it may not be
    /// read (its pods are then retried on kubectl's timer).
    pub(crate) fn follow(&self, key: &Key) -> bool {
        self.watches.ensure(key)
    }

    /// Whether one watch follows every budget of the cluster (they may all
    /// be listed); it is started by the first to ask.
    pub(crate) async fn sees_every_budget(&self) -> bool {
        self.watches.every().await.is_some()
    }

    /// The namespace's budgets, from the watch of every budget; None when
    /// they cannot all be listed.
    pub(crate) async fn every_budget_in(&self, ns: &str) -> Option<Vec<(Key, Listed)>> {
        let every = self.watches.every().await?;
        let budgets = every.lock().expect("every budget").in_namespace(ns);
        Some(budgets)
    }

    /// The one budget over each pod that has one, from the watch of every
    /// budget, each noted with what it allows now (`seed`): drains of
    /// several nodes at once share each budget's disruptions from the
    /// first attempt. None when budgets cannot all be listed: evictions
    /// then learn their budget from the API's answer, as kubectl's do.
    pub(crate) async fn budgets_of<'a>(
        &self,
        pods: impl IntoIterator<Item = &'a Pod>,
    ) -> Option<HashMap<PodKey, Key>> {
        let every = self.watches.every().await?;
        let no_labels = BTreeMap::new();
        let found: Vec<(PodKey, Key, Budget)> = {
            let every = every.lock().expect("every budget");
            pods.into_iter()
                .filter_map(|pod| {
                    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
                    let labels = pod.metadata.labels.as_ref().unwrap_or(&no_labels);
                    let (key, budget) = every.one_over(ns, labels)?;
                    Some((PodKey::of(pod), key, budget))
                })
                .collect()
        };
        let mut out = HashMap::new();
        for (pod, key, budget) in found {
            self.seed(key.clone(), budget);
            out.insert(pod, key);
        }
        Some(out)
    }

    /// A budget listed before the drain: what it allows now is handed out.
    pub(crate) fn seed(&self, key: Key, budget: Budget) {
        self.watches.seed(key, budget);
    }

    /// A node's drain starts: its rank, and its first wave's pods whose
    /// budget is known counted as due on it, so that nodes started together
    /// are served in the order they started; every pod it evicts whose
    /// budget is known counted as unsent until it is sent or gone.
    pub(crate) fn join(
        &self,
        budget_of: Arc<HashMap<PodKey, Key>>,
        first_wave: impl IntoIterator<Item = PodKey>,
        evicted: impl IntoIterator<Item = PodKey>,
    ) -> NodeBudgets {
        let rank = self.ranks.fetch_add(1, Ordering::SeqCst);
        let (mut due, mut unsent, mut budgets) = (HashSet::new(), HashSet::new(), HashSet::new());
        {
            let mut ledger = self.ledger();
            for pod in first_wave {
                if let Some(budget) = budget_of.get(&pod) {
                    ledger.want(rank, budget, 1);
                    due.insert(pod);
                }
            }
            for pod in evicted {
                if let Some(budget) = budget_of.get(&pod) {
                    ledger.will_send(budget);
                    budgets.insert(budget.clone());
                    unsent.insert(pod);
                }
            }
        }
        NodeBudgets {
            signals: Some(self.watches.mailbox(rank, budgets)),
            broker: self.clone(),
            rank,
            budget_of,
            due,
            unsent,
            in_flight: HashMap::new(),
            granted: HashMap::new(),
        }
    }

    /// Pods of the nodes being drained whose eviction under this budget
    /// has not been sent yet.
    #[cfg(test)]
    pub(crate) fn unsent(&self, budget: &Key) -> usize {
        self.ledger().unsent(budget)
    }

    /// The same, for every budget with pods still to be sent (one look at
    /// the ledger).
    pub(crate) fn for_each_unsent(&self, f: impl FnMut(&Key, usize)) {
        self.ledger().for_each_unsent(f);
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().expect("budget ledger")
    }
}

/// One node's dealings with the broker.
pub(crate) struct NodeBudgets {
    broker: Broker,
    rank: usize,
    /// The changes of the budgets over its pods (`tell`), until taken.
    signals: Option<mpsc::UnboundedReceiver<Signal>>,
    /// The budget over each pod to evict, when known before the first
    /// attempt (drains of several nodes at once).
    budget_of: Arc<HashMap<PodKey, Key>>,
    /// Pods held or about to be tried on their budget, not sent yet.
    due: HashSet<PodKey>,
    /// Pods to evict under a known budget, of any wave, not sent yet.
    unsent: HashSet<PodKey>,
    /// The ticket each eviction in flight holds.
    in_flight: HashMap<PodKey, Ticket>,
    /// Tickets a budget's change granted to this node and not used yet.
    granted: HashMap<Key, Vec<Ticket>>,
}

impl NodeBudgets {
    /// The node's mailbox: the changes of the budgets over its pods.
    pub(crate) fn take_signals(&mut self) -> mpsc::UnboundedReceiver<Signal> {
        self.signals
            .take()
            .unwrap_or_else(|| mpsc::unbounded_channel().1)
    }

    /// May this pod's eviction be sent now? `granted`: the budget whose
    /// change granted this retry to the node (`claim`); `free`: the API
    /// lets it go without its budget (kube_conventions::eviction), so it
    /// takes none of the budget's disruptions.
    pub(crate) fn ask(&mut self, pod: &PodKey, granted: Option<&Key>, free: bool) -> Go {
        if free && granted.is_none() {
            self.not_due(pod);
            return Go::Send;
        }
        if let Some(budget) = granted {
            let ticket = self.granted.get_mut(budget).and_then(Vec::pop);
            if let Some(t) = ticket {
                self.in_flight.insert(pod.clone(), t);
            }
            self.not_due(pod);
            return Go::Send;
        }
        let Some(budget) = self.budget_of.get(pod).cloned() else {
            return Go::Send;
        };
        {
            // Held: counted as due under the same lock, so no other node's
            // claim falls between the refusal and the count.
            let mut ledger = self.broker.ledger();
            match ledger.ask(&budget, self.rank) {
                Asked::Held => {
                    if self.due.insert(pod.clone()) {
                        ledger.want(self.rank, &budget, 1);
                    }
                    return Go::Hold(budget);
                }
                Asked::Ticket(t) => {
                    self.in_flight.insert(pod.clone(), t);
                }
                Asked::Unknown => {}
            }
        }
        self.not_due(pod);
        Go::Send
    }

    /// The API answered this pod's eviction: a ticket it held is used, or
    /// given back when nothing was disrupted.
    pub(crate) fn answered(&mut self, pod: &PodKey, spent: Spent) {
        if let Some(ticket) = self.in_flight.remove(pod) {
            self.broker.ledger().spend(&ticket, spent);
        }
    }

    /// The pod is no longer due on its budget: deleted at the deadline,
    /// or gone however it went.
    pub(crate) fn not_due(&mut self, pod: &PodKey) {
        let (due, unsent) = (self.due.remove(pod), self.unsent.remove(pod));
        if let (true, Some(budget)) = (due || unsent, self.budget_of.get(pod)) {
            let mut ledger = self.broker.ledger();
            if due {
                ledger.sent(self.rank, budget);
            }
            if unsent {
                ledger.not_unsent(budget);
            }
        }
    }

    /// The budget changed: up to `wanted` of its free disruptions for this
    /// node's held pods (what earlier nodes want is left to them); how
    /// many were granted.
    pub(crate) fn claim(&mut self, budget: &Key, wanted: usize) -> usize {
        let tickets = self.broker.ledger().claim(budget, wanted, self.rank);
        let n = tickets.len();
        self.granted
            .entry(budget.clone())
            .or_default()
            .extend(tickets);
        n
    }
}

impl Drop for NodeBudgets {
    /// The node's drain ended: what it still wanted goes to the others,
    /// and tickets it held unused are given back.
    fn drop(&mut self) {
        self.broker.watches.close_mailbox(self.rank);
        let mut ledger = self.broker.ledger();
        let unused = self.granted.drain().flat_map(|(_, t)| t);
        ledger.give_back(unused.chain(self.in_flight.drain().map(|(_, t)| t)));
        ledger.forget(self.rank);
        for pod in self.unsent.drain() {
            if let Some(budget) = self.budget_of.get(&pod) {
                ledger.not_unsent(budget);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str) -> PodKey {
        PodKey {
            namespace: "ns".into(),
            name: name.into(),
        }
    }

    fn web() -> Key {
        ("ns".to_string(), "web".to_string())
    }

    /// A broker over budgets listed before the drain; no watch is started.
    fn broker(allowed: i32, pods: &[&str]) -> (Broker, Arc<HashMap<PodKey, Key>>) {
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        let broker = Broker::new(client, events);
        let budget = Budget {
            disruptions_allowed: allowed,
            ..Budget::default()
        };
        broker.seed(web(), budget);
        let of = pods.iter().map(|p| (pod(p), web())).collect();
        (broker, Arc::new(of))
    }

    #[tokio::test]
    async fn a_failed_eviction_gives_its_ticket_back_to_the_next_pod() {
        let (broker, of) = broker(1, &["a", "b"]);
        let mut node = broker.join(of, [pod("a"), pod("b")], []);
        assert_eq!(node.ask(&pod("a"), None, false), Go::Send);
        assert_eq!(node.ask(&pod("b"), None, false), Go::Hold(web()));
        // a's eviction was answered 500: nothing was disrupted.
        node.answered(&pod("a"), Spent::Unused);
        assert_eq!(
            node.ask(&pod("a"), None, false),
            Go::Send,
            "retried at once"
        );
        node.answered(&pod("a"), Spent::Disrupted);
        assert_eq!(node.ask(&pod("b"), None, false), Go::Hold(web()));
    }

    #[tokio::test]
    async fn a_granted_retry_that_fails_gives_its_ticket_back() {
        let (broker, of) = broker(0, &["a"]);
        let mut node = broker.join(of, [pod("a")], []);
        assert_eq!(node.ask(&pod("a"), None, false), Go::Hold(web()));
        broker.ledger().hand_out(&web(), 1);
        assert_eq!(node.claim(&web(), 1), 1);
        assert_eq!(node.ask(&pod("a"), Some(&web()), false), Go::Send);
        assert_eq!(broker.ledger().left(&web()), Some(0));
        node.answered(&pod("a"), Spent::Unused);
        assert_eq!(broker.ledger().left(&web()), Some(1));
    }

    #[tokio::test]
    async fn the_node_that_started_first_is_served_first() {
        let (broker, of) = broker(0, &["a", "b"]);
        let mut first = broker.join(of.clone(), [pod("a")], []);
        let mut second = broker.join(of, [pod("b")], []);
        broker.ledger().hand_out(&web(), 1);
        assert_eq!(second.ask(&pod("b"), None, false), Go::Hold(web()));
        assert_eq!(second.claim(&web(), 1), 0, "the first node wants it");
        assert_eq!(first.claim(&web(), 1), 1);
        // The first node's drain ends without using it: the second's turn.
        drop(first);
        assert_eq!(second.claim(&web(), 1), 1);
    }

    #[tokio::test]
    async fn a_pod_is_unsent_until_its_eviction_goes_or_its_node_ends() {
        let (broker, of) = broker(1, &["a", "b", "c"]);
        // b is of a later wave: not due yet, but unsent all the same.
        let mut first = broker.join(of.clone(), [pod("a")], [pod("a"), pod("b")]);
        let second = broker.join(of, [], [pod("c")]);
        assert_eq!(broker.unsent(&web()), 3);
        assert_eq!(first.ask(&pod("a"), None, false), Go::Send);
        assert_eq!(broker.unsent(&web()), 2, "a was sent");
        first.not_due(&pod("a"));
        assert_eq!(broker.unsent(&web()), 2, "counted once");
        drop(second);
        assert_eq!(broker.unsent(&web()), 1, "only b of the first node");
        first.not_due(&pod("b"));
        assert_eq!(broker.unsent(&web()), 0);
    }
}
