//! What the engine tells its listeners while it works. Progress displays
//! and logs consume these; they never drive the work.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::outcome::{Cause, Forced, NodeOutcome};
use super::pod_key::PodKey;
use super::warning::Warning;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    Cordoned {
        node: String,
        already: bool,
    },
    /// A node of the run, before anything is done to it: the pods its
    /// drain is to move (every pod not left alone by design, the ones
    /// kubectl's filters refuse included), so that the run's count of
    /// pods is whole from the start.
    Planned {
        node: String,
        pods: usize,
    },
    NodeStarted {
        node: String,
        pods: usize,
        /// `--timeout`, counted from now.
        timeout: Option<Duration>,
        /// kubectl's warnings about this node's pods, as its filters give
        /// them (pkg/drain/filters.go): the message and each pod it names.
        warned: Vec<(PodKey, &'static str)>,
    },
    WaveStarted {
        node: String,
        wave: String,
        pods: usize,
    },
    Evicted {
        node: String,
        pod: PodKey,
    },
    /// An eviction was refused for now (a budget, or throttling) and will
    /// be asked again: one per refusal, with the API's message.
    EvictionRefused {
        node: String,
        pod: PodKey,
        message: String,
    },
    /// Terminating longer than `--skip-wait-for-delete-timeout` (seconds):
    /// no longer waited for.
    NotWaitedFor {
        node: String,
        pod: PodKey,
        seconds: u64,
    },
    /// On a node whose kubelet is down, its deletion asked `seconds` ago,
    /// longer than `--lost-pod-timeout`: counted as gone.
    PodLost {
        node: String,
        pod: PodKey,
        seconds: i64,
        timeout: Duration,
    },
    /// A pod cannot go yet, and why.
    Blocked {
        node: String,
        pod: PodKey,
        cause: Cause,
        /// `namespace/name` of the PodDisruptionBudget holding it, if one is.
        budget: Option<String>,
        /// A command that lets it go now, if one does.
        release: Option<String>,
    },
    PodGone {
        node: String,
        pod: PodKey,
    },
    /// What `--surge` did for a pod's workload.
    Surge {
        node: String,
        pod: PodKey,
        surged: Surged,
    },
    /// `--deadline` came for a pod: deleted, budgets bypassed.
    Forced {
        node: String,
        pod: PodKey,
        why: Forced,
        grace: i64,
    },
    WaveDone {
        node: String,
        wave: String,
        elapsed: Duration,
    },
    NodeDone {
        node: String,
        elapsed: Duration,
        /// Everything the node's drain ended with, its status first.
        outcome: Arc<NodeOutcome>,
    },
    /// The API server is failing requests; the drain keeps retrying.
    ApiTrouble {
        node: String,
        message: String,
    },
    Warning(Warning),
    /// A roll moved a node to a phase (or says what the phase waits on);
    /// `pool` is the roll's total so far; `last`: the node's roll ended
    /// (the phase is its status).
    Phase {
        node: String,
        phase: String,
        detail: String,
        pool: String,
        last: bool,
    },
    /// A roll waits on something other than pods: `what` names it
    /// (`alerts`, `window`, or a hook's annotation), for one node or (no
    /// node) the whole roll; `reason` in words. Said again when the reason
    /// changes. Notifications, metrics and the report follow these; the
    /// screen shows the roll's `Phase` lines.
    Hold {
        node: Option<String>,
        what: String,
        reason: String,
    },
    HoldEnded {
        node: Option<String>,
        what: String,
    },
    /// A run started a phase of a node (`roll::phase::Phase`'s name, or
    /// `drain` for a drain's node).
    RunPhase {
        node: String,
        phase: &'static str,
    },
    /// A node's job in a run ended (crate::pool): how, why when not done,
    /// and for a node put back in service how long it was out.
    NodeEnded {
        node: String,
        status: super::job_status::JobStatus,
        message: Option<String>,
        out_of_service_ms: Option<u64>,
    },
    /// An answer to an eviction, as its HTTP code (`5xx` when the code is
    /// not known), for metrics.
    EvictionAnswered {
        node: String,
        code: &'static str,
    },
}

/// What `--surge` did for a pod's workload.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Surged {
    /// One more replica of this Deployment.
    Scaling {
        namespace: String,
        deployment: String,
    },
    /// The workload cannot surge: why.
    Not { why: String },
}

pub(crate) type Sink = tokio::sync::mpsc::UnboundedSender<Event>;

/// Sends an event; a listener that went away does not stop the drain.
pub(crate) fn emit(sink: &Sink, e: Event) {
    let _ = sink.send(e);
}

/// The sink with a memory of the warnings given, so that a warning every
/// node's drain may find is said once.
pub(crate) struct Announcer {
    pub(crate) sink: Sink,
    warned: Mutex<Vec<Warning>>,
}

impl Announcer {
    pub(crate) fn new(sink: Sink) -> Self {
        Announcer {
            sink,
            warned: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn emit(&self, e: Event) {
        emit(&self.sink, e);
    }

    /// A warning that every node's drain may find, given once.
    pub(crate) fn warn_once(&self, warning: Warning) {
        let mut warned = self.warned.lock().expect("warned");
        if !warned.contains(&warning) {
            warned.push(warning.clone());
            self.emit(Event::Warning(warning));
        }
    }

    /// A warning said each time it is found.
    pub(crate) fn warn(&self, warning: Warning) {
        self.emit(Event::Warning(warning));
    }
}
