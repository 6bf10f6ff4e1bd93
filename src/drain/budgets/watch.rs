//! Watches on the PodDisruptionBudgets the drain follows: one per budget
//! that refused an eviction (field-selected by name), shared by every
//! node's drain; or, for drains of several nodes at once, one watch of
//! every budget (`every`), whose first list also says which budget is over
//! each pod before the first eviction. Each change of a followed
//! budget is told to the drains of the nodes whose pods it holds (`tell`)
//! and hands out its disruptions anew in the ledger. kubectl drain needs no permission on
//! budgets: where reading one is forbidden, one warning says so and the
//! drain retries its pods on kubectl's timer instead.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::{OnceCell, broadcast, mpsc};

use super::budget::{Budget, Key, UNWATCHED_RETRY, key_of};
use super::every::Every;
use super::ledger::Ledger;
use super::tell::{Signal, Tell};
use crate::vocabulary::api_error::forbidden;
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

/// What the drain knows of a budget it asked to watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Watched {
    /// Read once before the drain, not watched yet.
    Listed(Budget),
    Starting,
    Seen(Budget),
    /// Reading it is forbidden: no change will ever be told.
    Forbidden,
}

#[derive(Clone)]
pub(crate) struct Watches {
    client: kube::Client,
    events: Sink,
    /// The one warning that budgets cannot be watched was given.
    warned: Arc<AtomicBool>,
    state: Arc<Mutex<HashMap<Key, Watched>>>,
    /// Where each change hands out the budget's disruptions.
    tickets: Arc<Mutex<Ledger>>,
    changed: Tell,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    /// Every budget of the cluster, once asked for (`every`); None
    /// inside when they could not be listed.
    all: Arc<OnceCell<Option<Arc<Mutex<Every>>>>>,
}

impl Watches {
    pub(crate) fn new(client: kube::Client, events: Sink, tickets: Arc<Mutex<Ledger>>) -> Self {
        let changed = Tell::new();
        Watches {
            client,
            events,
            warned: Arc::new(AtomicBool::new(false)),
            state: Arc::new(Mutex::new(HashMap::new())),
            tickets,
            changed,
            tasks: Arc::new(Mutex::new(Vec::new())),
            all: Arc::new(OnceCell::new()),
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.changed.subscribe()
    }

    /// A node's mailbox (`tell`): told of the changes of `budgets`, and of
    /// budgets not known before the drain.
    pub(crate) fn mailbox(
        &self,
        rank: usize,
        budgets: impl IntoIterator<Item = Key>,
    ) -> mpsc::UnboundedReceiver<Signal> {
        self.changed.mailbox(rank, budgets)
    }

    pub(crate) fn close_mailbox(&self, rank: usize) {
        self.changed.close(rank);
    }

    pub(crate) fn get(&self, key: &Key) -> Option<Budget> {
        match self.state.lock().expect("pdb state").get(key) {
            Some(Watched::Seen(b) | Watched::Listed(b)) => Some(*b),
            _ => None,
        }
    }

    /// Notes a budget as listed before the drain (no watch yet): what it
    /// allows becomes its tickets, so that first attempts across nodes take
    /// no more than it allows.
    pub(crate) fn seed(&self, key: Key, budget: Budget) {
        let mut state = self.state.lock().expect("pdb state");
        if state.contains_key(&key) {
            return;
        }
        hand_out(&self.tickets, &key, budget);
        state.insert(key, Watched::Listed(budget));
    }

    /// Reads a budget once (dry runs, which do not wait for changes).
    pub(crate) async fn fetch(&self, key: &Key) -> Option<Budget> {
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.client.clone(), &key.0);
        let budget = Budget::from_pdb(&api.get(&key.1).await.ok()?);
        self.state
            .lock()
            .expect("pdb state")
            .insert(key.clone(), Watched::Seen(budget));
        Some(budget)
    }

    /// Starts watching this budget unless it is watched already. Returns
    /// false when the budget is known to be forbidden to read.
    pub(crate) fn ensure(&self, key: &Key) -> bool {
        let every = self.all.get().and_then(Option::as_ref);
        {
            let mut state = self.state.lock().expect("pdb state");
            match state.get(key) {
                Some(Watched::Forbidden) => return false,
                Some(Watched::Starting | Watched::Seen(_)) => return true,
                // The watch of every budget tells its changes.
                Some(Watched::Listed(_)) if every.is_some() => return true,
                Some(Watched::Listed(_)) | None => state.insert(key.clone(), Watched::Starting),
            };
        }
        let listed = every.and_then(|e| e.lock().expect("every budget").get(key).map(|l| l.budget));
        if let Some(budget) = listed {
            // Followed from now on by the watch of every budget; told now
            // what it allows, as a watch of its own would on starting.
            saw(&self.state, &self.tickets, &self.changed, key, budget);
            return true;
        }
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.client.clone(), &key.0);
        let config = watcher::Config::default().fields(&format!("metadata.name={}", key.1));
        // The task holds what it writes, not the handle: a handle in it
        // would keep `tasks` shared, so that dropping the engine's last
        // handle never stopped the watches, and the events sink they hold
        // kept the drain's listeners waiting seconds after the report.
        let (state, changed) = (self.state.clone(), self.changed.clone());
        let tickets = self.tickets.clone();
        let (warned, events) = (self.warned.clone(), self.events.clone());
        let key = key.clone();
        let task = tokio::spawn(async move {
            let mut stream = watcher(api, config)
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(item) = stream.next().await {
                match item {
                    Ok(pdb) => saw(&state, &tickets, &changed, &key, Budget::from_pdb(&pdb)),
                    Err(e) => {
                        if let Some(message) = forbidden(&e) {
                            record(&state, &changed, &key, Watched::Forbidden);
                            if !warned.swap(true, Ordering::Relaxed) {
                                let warning = Warning::BudgetsUnwatched {
                                    error: message,
                                    every: UNWATCHED_RETRY,
                                };
                                emit(&events, Event::Warning(warning));
                            }
                            return;
                        }
                    }
                }
            }
        });
        self.tasks.lock().expect("tasks").push(task);
        true
    }

    /// Every budget of the cluster, as the compact set (`every`) kept
    /// current by one watch of every budget that the drains of all nodes
    /// share (started on the first call). It tells the changes of the
    /// budgets this drain follows (`seed`, `ensure`) and no others. None
    /// when every budget cannot be listed (a user allowed only some
    /// namespaces): each budget that refuses an eviction is then watched
    /// on its own.
    pub(crate) async fn every(&self) -> Option<Arc<Mutex<Every>>> {
        self.all.get_or_init(|| self.watch_all()).await.clone()
    }

    async fn watch_all(&self) -> Option<Arc<Mutex<Every>>> {
        let api: Api<PodDisruptionBudget> = Api::all(self.client.clone());
        let (state, changed) = (self.state.clone(), self.changed.clone());
        let tickets = self.tickets.clone();
        let every = Arc::new(Mutex::new(Every::default()));
        let kept = every.clone();
        let (task, listed) = crate::drain::mirror::follow(api, move |event| {
            kept.lock().expect("every budget").apply(&event);
            if let watcher::Event::Apply(pdb) | watcher::Event::InitApply(pdb) = &event {
                let key = key_of(pdb);
                let followed = matches!(
                    state.lock().expect("pdb state").get(&key),
                    Some(Watched::Listed(_) | Watched::Seen(_))
                );
                if followed {
                    saw(&state, &tickets, &changed, &key, Budget::from_pdb(pdb));
                }
            }
        })
        .await;
        self.tasks.lock().expect("tasks").push(task);
        listed.ok().map(|()| every)
    }
}

/// What a budget allows becomes its tickets, for the nodes to claim.
fn hand_out(tickets: &Mutex<Ledger>, key: &Key, budget: Budget) {
    tickets
        .lock()
        .expect("tickets")
        .hand_out(key, budget.allowed());
}

/// A watch saw this version of a budget: its tickets, its numbers, and the
/// waiting evictions told.
fn saw(
    state: &Mutex<HashMap<Key, Watched>>,
    tickets: &Mutex<Ledger>,
    changed: &Tell,
    key: &Key,
    budget: Budget,
) {
    hand_out(tickets, key, budget);
    record(state, changed, key, Watched::Seen(budget));
}

/// Notes what a watch saw of a budget and tells the waiting evictions.
fn record(state: &Mutex<HashMap<Key, Watched>>, changed: &Tell, key: &Key, watched: Watched) {
    state
        .lock()
        .expect("pdb state")
        .insert(key.clone(), watched);
    changed.send(&match watched {
        Watched::Forbidden => Signal::Forbidden(key.clone()),
        _ => Signal::Changed(key.clone()),
    });
}

impl Drop for Watches {
    fn drop(&mut self) {
        // The last clone stops the watches.
        if Arc::strong_count(&self.tasks) == 1 {
            for t in self.tasks.lock().expect("tasks").drain(..) {
                t.abort();
            }
        }
    }
}
