//! What every request handler and simulated controller shares.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::clock::IdGen;
use crate::config::{Deny, Faults, Rule, SandboxConfig};
use crate::request_log::RequestLog;
use crate::store::Store;

/// What tests change while the sandbox serves.
struct Chaos {
    faults: Faults,
    deny: Vec<Deny>,
    role: Option<Vec<Rule>>,
}

pub(crate) struct Shared {
    store: Mutex<Store>,
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
    /// The ServiceAccount tokens its kubelets gave their pods.
    pub(crate) tokens: crate::auth::tokens::Tokens,
    /// The processes of the containers of local images.
    pub(crate) runtime: crate::kubelet::runtime::Runtime,
}

impl Shared {
    pub(crate) fn new(store: Store, config: SandboxConfig, log: Option<RequestLog>) -> Self {
        let dice = IdGen::new(config.faults.seed);
        let chaos = Mutex::new(Chaos {
            faults: config.faults.clone(),
            deny: config.deny.clone(),
            role: config.role.clone(),
        });
        Shared {
            store: Mutex::new(store),
            chaos,
            config,
            log,
            dice,
            injected: AtomicU64::new(0),
            failure: Mutex::new(None),
            tls: None,
            tokens: crate::auth::tokens::Tokens::default(),
            runtime: crate::kubelet::runtime::Runtime::new(Vec::new()),
        }
    }

    /// The store, locked. Never held across an `.await`.
    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock poisons it; the data is still the
        // last consistent write, so keep serving.
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
