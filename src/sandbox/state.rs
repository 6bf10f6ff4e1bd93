//! What every request handler and simulated controller shares.

use std::sync::{Mutex, MutexGuard};

use super::clock::IdGen;
use super::config::SandboxConfig;
use super::request_log::RequestLog;
use super::store::Store;

pub struct Shared {
    store: Mutex<Store>,
    pub config: SandboxConfig,
    pub log: Option<RequestLog>,
    /// Dice for fault injection, seeded from the config for repeatable runs.
    pub dice: IdGen,
}

impl Shared {
    pub fn new(store: Store, config: SandboxConfig, log: Option<RequestLog>) -> Self {
        let dice = IdGen::new(config.faults.seed);
        Shared {
            store: Mutex::new(store),
            config,
            log,
            dice,
        }
    }

    /// The store, locked. Never held across an `.await`.
    pub fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock poisons it; the data is still the
        // last consistent write, so keep serving.
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A number in [0, 1) from the fault dice.
    pub fn roll(&self) -> f64 {
        (self.dice.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
