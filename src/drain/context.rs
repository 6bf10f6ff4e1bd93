//! What every node's drain shares: the cluster, the options, the budget
//! broker, what is published for others, and where progress is told. The
//! pipeline (`engine`) builds it once; each step takes the part it needs.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tokio::sync::{Semaphore, watch};

use super::budgets::{self, Broker};
use super::evict::Evictor;
use super::machine::{IN_FLIGHT, Settings, WaveSpec};
use super::{Options, detach, surge};
use crate::client::Clients;
use crate::publish::Publisher;
use crate::vocabulary::events::Announcer;
use crate::vocabulary::pod_key::PodKey;

/// Evictions in flight across all nodes at once.
pub(crate) const GLOBAL_IN_FLIGHT: usize = 64;

/// What every node's drain shares.
pub(crate) struct DrainContext {
    pub(crate) clients: Clients,
    pub(crate) options: Options,
    pub(crate) budgets: Broker,
    /// Node conditions written as each node's drain goes.
    pub(crate) publisher: Arc<Publisher>,
    /// Deployments `--surge` scaled up, to scale back when their node is done.
    pub(crate) surges: surge::Surges,
    /// The VolumeAttachments nodes wait on to be detached: one watch for
    /// every node of the run (a roll's nodes share it too).
    pub(crate) attachments: Arc<detach::Attachments>,
    /// The budget over each pod to evict, when known before the first
    /// attempt (drains of several nodes at once, `lookup::Index`).
    pub(crate) budget_of: Arc<HashMap<PodKey, budgets::Key>>,
    pub(crate) evictor: Evictor,
    /// Evictions in flight across every node.
    pub(crate) slots: Semaphore,
    pub(crate) events: Announcer,
    pub(crate) interrupt: watch::Receiver<bool>,
    pub(crate) waves: Vec<WaveSpec>,
    pub(crate) terminating_namespaces: BTreeSet<String>,
}

impl DrainContext {
    /// The run ends: its EvictionRequests are cleaned up (those whose pod
    /// went deleted, the others withdrawn), and the operator told.
    pub(crate) async fn end_requests(&self) {
        let Some(requests) = &self.evictor.requests else {
            return;
        };
        let withdrawn = requests.finish().await;
        for warning in requests.take_warnings() {
            self.events.warn_once(warning);
        }
        if withdrawn > 0 {
            self.events.warn(
                crate::vocabulary::warning::Warning::EvictionRequestsWithdrawn { count: withdrawn },
            );
        }
    }

    /// What each node's machine works with.
    pub(crate) fn settings(&self) -> Arc<Settings> {
        Arc::new(Settings {
            waves: self.waves.clone(),
            timeout: self.options.timeout,
            skip_wait_for_delete: self.options.flags.skip_wait_for_delete_timeout,
            lost_pod_timeout: self.options.lost_pod_timeout,
            terminating_namespaces: self.terminating_namespaces.clone(),
            in_flight: IN_FLIGHT,
            delete: self.options.disable_eviction,
            grace_period: self.options.grace_period,
            deadline: self.options.deadline,
            deadline_overrides_markers: self.options.deadline_overrides_markers,
            surge: self.options.surge,
            detach_wait: self.options.detach_wait,
            by_request: self.evictor.requests.is_some(),
        })
    }
}
