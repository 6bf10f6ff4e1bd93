//! What every request handler and simulated controller shares.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::clock::IdGen;
use crate::config::{Deny, Faults, Rule, SandboxConfig};
use crate::request_log::RequestLog;
use crate::store::Store;

/// The store, locked. The lock is parking_lot's for its fair hand-over
/// (the simulation gives it to whoever waits after each round); it is
/// not poisoned by a panic, and the data is the last consistent write.
pub(crate) type StoreGuard<'a> = parking_lot::MutexGuard<'a, Store>;

/// What tests change while the sandbox serves.
struct Chaos {
    faults: Faults,
    deny: Vec<Deny>,
    role: Option<Vec<Rule>>,
}

pub(crate) struct Shared {
    store: parking_lot::Mutex<Store>,
    /// Taken by a request's handler before it waits for the store, so that
    /// at most one handler waits for the store at a time and the
    /// simulation, which takes the store without it, waits for at most one
    /// handler's hold instead of the whole queue of them (see `store`).
    handlers_queue: parking_lot::Mutex<()>,
    /// Settings fixed at start; faults and refusals live in `chaos`.
    pub(crate) config: SandboxConfig,
    chaos: Mutex<Chaos>,
    pub(crate) log: Option<RequestLog>,
    /// Dice for fault injection, seeded from the config for repeatable runs.
    pub(crate) dice: IdGen,
    /// Faults injected since the faults were last set (`Faults::times`).
    injected: AtomicU64,
    /// Set when a task of the sandbox panicked (see `supervise`).
    failure: Mutex<Option<String>>,
    /// The CA and certificate it serves HTTPS with, when it does.
    pub(crate) tls: Option<crate::apiserver::tls::Tls>,
    /// The bearer token of its own user (crate::auth): unguessable, new at
    /// each start, unless the config names one.
    pub(crate) owner_token: String,
    /// The ServiceAccount tokens its kubelets gave their pods.
    pub(crate) tokens: crate::auth::tokens::Tokens,
    /// Set when the sandbox stops: its long-lived tasks end.
    pub(crate) stopping: tokio::sync::watch::Sender<bool>,
    /// The tasks that may outlive a request (crate::tasks).
    pub(crate) tasks: std::sync::Arc<crate::tasks::Tasks>,
    /// The processes of the containers of local images.
    pub(crate) runtime: crate::kubelet::containers::Runtime,
    /// How late the simulation acts (crate::lag).
    pub(crate) lag: crate::lag::Lag,
}

impl Shared {
    /// The path the API is served under, without a trailing `/` (empty:
    /// the root).
    pub(crate) fn path_prefix(&self) -> &str {
        self.config
            .path_prefix
            .as_deref()
            .map_or("", |p| p.trim_end_matches('/'))
    }

    pub(crate) fn new(store: Store, config: SandboxConfig, log: Option<RequestLog>) -> Self {
        let dice = IdGen::new(config.faults.seed);
        let chaos = Mutex::new(Chaos {
            faults: config.faults.clone(),
            deny: config.deny.clone(),
            role: config.role.clone(),
        });
        let owner_token = config
            .owner_token
            .clone()
            .unwrap_or_else(|| format!("sandbox-owner.{}", crate::random::hex(32)));
        Shared {
            stopping: tokio::sync::watch::Sender::new(false),
            tasks: std::sync::Arc::default(),
            owner_token,
            store: parking_lot::Mutex::new(store),
            handlers_queue: parking_lot::Mutex::new(()),
            chaos,
            config,
            log,
            dice,
            injected: AtomicU64::new(0),
            failure: Mutex::new(None),
            tls: None,
            tokens: crate::auth::tokens::Tokens::default(),
            runtime: crate::kubelet::containers::Runtime::none(),
            lag: crate::lag::Lag::new(),
        }
    }

    /// The store, locked. Never held across an `.await`.
    ///
    /// The API server's handlers queue for it one at a time
    /// (`handlers_queue`); the simulation does not. During a 10,000-node
    /// pool drain some twenty handlers waited for the store at once, and
    /// each round of the simulation, queued behind all of them, waited
    /// 2.7 ms on average: a quarter of its time, while it was the part of
    /// the cluster everything else waited for.
    pub(crate) fn store(&self) -> StoreGuard<'_> {
        if let Some(store) = self.store.try_lock() {
            return store;
        }
        // A worker of a multi-threaded runtime about to wait (for a round
        // of the simulation, on its own thread) first hands its other
        // tasks to another thread: with both workers of two cores waiting
        // here, nothing wrote the watches' answers out, and the watch of
        // every budget fell seconds behind a 5,000-node pool drain.
        let multi_threaded = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_threaded {
            let asked = std::time::Instant::now();
            let store = tokio::task::block_in_place(|| {
                let _turn = self.handlers_queue.lock();
                self.store.lock()
            });
            self.lag.request(asked.elapsed());
            store
        } else {
            self.store.lock()
        }
    }

    fn chaos(&self) -> MutexGuard<'_, Chaos> {
        self.chaos
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The faults in force now.
    pub(crate) fn faults(&self) -> Faults {
        self.chaos().faults.clone()
    }

    /// Changes the faults while serving (tests turn them on once a scenario settled).
    pub(crate) fn set_faults(&self, faults: Faults) {
        self.chaos().faults = faults;
        self.injected.store(0, Ordering::SeqCst);
    }

    /// Counts one more injected fault; false once `Faults::times` are spent.
    pub(crate) fn take_fault(&self, times: u64) -> bool {
        let before = self.injected.fetch_add(1, Ordering::SeqCst);
        times == 0 || before < times
    }

    /// Refuses `verb` on `resource` (in `namespace`, or everywhere when empty) from now on.
    pub(crate) fn deny(&self, d: Deny) {
        self.chaos().deny.push(d);
    }

    /// From now on allows only what `rules` allow (`None`: everything).
    pub(crate) fn set_role(&self, rules: Option<Vec<Rule>>) {
        self.chaos().role = rules;
    }

    pub(crate) fn denies(&self, verb: &str, resource: &str, namespace: &str) -> bool {
        let chaos = self.chaos();
        let outside_role = chaos
            .role
            .as_ref()
            .is_some_and(|rules| !rules.iter().any(|r| r.allows(verb, resource)));
        outside_role
            || chaos.deny.iter().any(|d| {
                d.verb == verb
                    && d.resource == resource
                    && (d.namespace.is_empty() || d.namespace == namespace)
            })
    }

    /// A number in [0, 1) from the fault dice.
    pub(crate) fn roll(&self) -> f64 {
        (self.dice.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(crate) fn fail(&self, why: String) {
        *self
            .failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why);
    }

    pub(crate) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}
