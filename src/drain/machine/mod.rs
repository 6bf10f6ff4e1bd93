//! One node's drain as a state machine, without I/O. Each input (an
//! eviction's answer, a pod change, a budget change, a timer, an
//! interruption) moves its pods along and returns the effects the driver
//! (crate::drain::driver) must perform: send an eviction, watch a budget,
//! tell the listeners, finish. Time comes in with every input (the driver
//! reads the clock), so tests drive it without a server or a clock.
//!
//! The rules are kubectl drain's (pkg/drain/drain.go: evict every pod,
//! retry what a PodDisruptionBudget refuses, wait for each to be gone),
//! with waves run in order and refusals retried the moment the budget
//! allows instead of after a fixed 5 s.

//!
//! Its vocabulary is its own: `input` (what it hears), `effect` (what it
//! asks for), `member` (a pod and where it stands), `settings`. Its rules
//! are one concern a file: `waves` (order and pacing), `answers` (one
//! function per answer of the API), `changes` (pods, timers, surges),
//! `budgets` (a budget's changes), `deadline` (`--timeout`, wave timeouts,
//! `--deadline`), `hold_log` (how long budgets held), `finish` (the
//! outcome). It imports only plain data from the rest of the drain.

mod answers;
mod budgets;
mod changes;
mod deadline;
mod effect;
mod finish;
mod hold_log;
mod input;
mod lost;
mod member;
mod settings;
#[cfg(test)]
mod tests;
mod waves;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use tokio::time::Instant;

pub(crate) use effect::{Effect, Eviction};
use hold_log::HoldLog;
pub(crate) use input::{Answer, Change, Input, Now};
use member::{Member, State};
use settings::EXPIRY_CHECK;
pub(crate) use settings::{IN_FLIGHT, Settings, WaveSpec};

use crate::drain::budgets::{Budget, Key as BudgetKey};
use crate::policy::classify::{Disposition, kubectl_warning, priority};
use crate::policy::node_health::NodeDown;
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{
    Cause, NodeOutcome, NodeStatus, PodOutcome, PodResult, WaveOutcome,
};
use crate::vocabulary::pod_key::{PodKey, uid};

#[derive(Debug, Clone, Copy)]
struct Running {
    wave: usize,
    started: Instant,
}

pub(crate) struct NodeMachine {
    node: String,
    settings: Arc<Settings>,
    was_cordoned: bool,
    started: Instant,
    members: BTreeMap<PodKey, Member>,
    /// Pods the drain leaves alone, and pods kubectl's filters refuse.
    others: Vec<PodOutcome>,
    refusals: Vec<String>,
    /// Why pods failed for good (a refusal no retry changes).
    failures: Vec<String>,
    waves: Vec<WaveOutcome>,
    running: Option<Running>,
    queue: VecDeque<PodKey>,
    /// Queued retries their budget's change granted, with that budget.
    granted: HashMap<PodKey, BudgetKey>,
    in_flight: usize,
    budgets: HashMap<BudgetKey, Budget>,
    /// Every budget that refused an eviction here: the pods it held and
    /// the spans it held each.
    holds: BTreeMap<BudgetKey, HoldLog>,
    unwatched: HashSet<BudgetKey>,
    /// Namespaces being deleted (their pods may hang in Terminating): those
    /// listed beforehand and those an eviction's answer named.
    terminating_namespaces: BTreeSet<String>,
    last: Now,
    finished: bool,
    /// The pods are gone; the node waits for their volumes to detach.
    detaching: bool,
    /// The node's kubelet is not running, as last read.
    down: Option<NodeDown>,
    /// A pod the drain has not acted on changed (its kubelet failed it,
    /// say, as a graceful shutdown does): the node is to be read now.
    health_due: bool,
    effects: Vec<Effect>,
}

impl NodeMachine {
    /// A node's pods, each with the fate classification gave it.
    pub(crate) fn new(
        node: &str,
        settings: Arc<Settings>,
        pods: Vec<(Pod, Disposition)>,
        was_cordoned: bool,
        now: Now,
    ) -> Self {
        let terminating_namespaces = settings.terminating_namespaces.clone();
        let mut m = NodeMachine {
            node: node.to_string(),
            settings,
            was_cordoned,
            started: now.at,
            members: BTreeMap::new(),
            others: Vec::new(),
            refusals: Vec::new(),
            failures: Vec::new(),
            waves: Vec::new(),
            running: None,
            queue: VecDeque::new(),
            granted: HashMap::new(),
            in_flight: 0,
            budgets: HashMap::new(),
            holds: BTreeMap::new(),
            unwatched: HashSet::new(),
            terminating_namespaces,
            last: now,
            finished: false,
            detaching: false,
            down: None,
            health_due: false,
            effects: Vec::new(),
        };
        for (pod, disposition) in pods {
            m.admit(pod, disposition);
        }
        m
    }

    fn admit(&mut self, pod: Pod, disposition: Disposition) {
        let key = PodKey::of(&pod);
        let member = |pod, wave, state, warning| Member {
            pod: Box::new(pod),
            wave,
            state,
            evicted: false,
            requested: false,
            attempts: 0,
            warning,
            told: None,
            held: None,
            forced: None,
            surge_asked: false,
            surge: false,
        };
        match disposition {
            Disposition::Evict {
                wave,
                warning,
                surge,
            } => {
                // A terminating pod is evicted again only to shorten its
                // grace period, as kubectl's eviction of it does (the usual
                // fix for a pod stuck Terminating: --grace-period=1).
                let shorter = self.settings.grace_period.is_some_and(|g| {
                    pod.metadata
                        .deletion_grace_period_seconds
                        .is_none_or(|current| g < current)
                });
                let state = if pod.metadata.deletion_timestamp.is_some() && !shorter {
                    State::Terminating
                } else {
                    State::Queued
                };
                let mut m = member(pod, wave, state, warning);
                m.surge = surge;
                self.members.insert(key, m);
            }
            Disposition::WaitCompleted { wave, reason } => {
                self.members
                    .insert(key, member(pod, wave, State::Waiting(reason), None));
            }
            Disposition::Skip { reason } => self.others.push(PodOutcome {
                pod: key,
                priority: priority(&pod),
                owner: crate::policy::classify::controller_kind(&pod).map(|(k, _)| k.to_string()),
                wave: None,
                result: PodResult::Skipped { reason },
                warning: None,
            }),
            Disposition::Refuse { refusal } => {
                let message = refusal.kubectl_message();
                self.refusals.push(format!("{message}: {key}"));
                self.others.push(PodOutcome {
                    pod: key,
                    priority: priority(&pod),
                    owner: crate::policy::classify::controller_kind(&pod)
                        .map(|(k, _)| k.to_string()),
                    wave: None,
                    result: PodResult::Remaining {
                        cause: Cause::Refused { refusal, message },
                    },
                    warning: None,
                });
            }
        }
    }

    pub(crate) fn node(&self) -> &str {
        &self.node
    }

    /// The node as found before the drain began: down or not.
    pub(crate) fn with_health(mut self, down: Option<NodeDown>) -> Self {
        self.down = down;
        self
    }

    /// Whether the node is to be read at once (`health_due`), cleared.
    pub(crate) fn take_health_due(&mut self) -> bool {
        std::mem::take(&mut self.health_due)
    }

    /// Does the drain wait for pods being deleted (so that a node whose
    /// kubelet died meanwhile is worth reading again)?
    pub(crate) fn awaits_deletions(&self) -> bool {
        !self.finished
            && self
                .members
                .values()
                .any(|m| !m.done() && (m.pod.metadata.deletion_timestamp.is_some() || m.evicted))
    }

    /// kubectl's refusals for this node's pods, one line each.
    pub(crate) fn refusals(&self) -> &[String] {
        &self.refusals
    }

    /// Does the drain wait for some pod to complete (so it reads pods'
    /// status, not only their metadata)?
    pub(crate) fn waits_for_completion(&self) -> bool {
        self.members
            .values()
            .any(|m| matches!(m.state, State::Waiting(_)))
    }

    /// Pods a dry run asks the eviction API about: every one it would evict.
    pub(crate) fn to_evict(&self) -> Vec<(PodKey, String)> {
        self.members
            .iter()
            .filter(|(_, m)| !matches!(m.state, State::Waiting(_)))
            .map(|(k, m)| (k.clone(), uid(&m.pod).to_string()))
            .collect()
    }

    /// The outcome of a drain that changes nothing: every pod it would
    /// evict gets its verdict (`WouldEvict` unless `verdicts` says otherwise).
    pub(crate) fn preview(
        mut self,
        mut verdicts: BTreeMap<PodKey, PodResult>,
        status: NodeStatus,
        message: Option<String>,
    ) -> NodeOutcome {
        for (k, m) in &mut self.members {
            if !matches!(m.state, State::Waiting(_)) {
                m.state = State::Done(verdicts.remove(k).unwrap_or(PodResult::WouldEvict));
            }
        }
        self.outcome(status, message)
    }

    /// The outcome of a node whose drain never started: every pod still on it.
    pub(crate) fn not_started(self, message: String) -> NodeOutcome {
        self.outcome(NodeStatus::NotStarted, Some(message))
    }

    /// The outcome of a node that failed before its drain started (its
    /// cordon, at its turn): every pod still on it.
    pub(crate) fn failed_to_start(self, message: String) -> NodeOutcome {
        self.outcome(NodeStatus::Failed, Some(message))
    }

    /// Starts the drain: refused at once if kubectl's filters refuse a pod
    /// (nothing is evicted), otherwise the first wave.
    pub(crate) fn start(&mut self, now: Now) -> Vec<Effect> {
        self.last = now;
        self.started = now.at;
        if self.refusals.is_empty() {
            let mut warned: Vec<(PodKey, &'static str)> = self
                .members
                .iter()
                .filter_map(|(k, m)| {
                    Some((k.clone(), kubectl_warning(None, m.warning.as_deref())?))
                })
                .chain(self.others.iter().filter_map(|o| match &o.result {
                    PodResult::Skipped { reason } => {
                        Some((o.pod.clone(), kubectl_warning(Some(reason), None)?))
                    }
                    _ => None,
                }))
                .collect();
            warned.sort();
            self.emit(Event::NodeStarted {
                node: self.node.clone(),
                pods: self.members.len(),
                timeout: self.settings.timeout,
                warned,
            });
            self.advance();
        } else {
            // kubectl's rule: a refused pod stops the node before anything is evicted.
            let message = format!("cannot drain: {}", self.refusals.join("; "));
            self.finish(NodeStatus::Refused, Some(message));
        }
        std::mem::take(&mut self.effects)
    }

    /// Moves the drain on by one input.
    pub(crate) fn step(&mut self, input: Input, now: Now) -> Vec<Effect> {
        if self.finished {
            return Vec::new();
        }
        self.last = now;
        match input {
            Input::Answer {
                key,
                uid,
                answer,
                evacuation,
            } => self.on_answer(&key, &uid, answer, evacuation),
            Input::Pod(change) => self.on_change(change),
            Input::Budget { key, budget, grant } => self.on_budget(&key, budget, grant),
            Input::BudgetUnwatched(key) => self.on_unwatched(key),
            Input::Surged { key, result } => self.on_surged(&key, result),
            Input::Detached(Ok(())) => self.finish(NodeStatus::Drained, None),
            Input::Detached(Err(why)) => self.finish(NodeStatus::TimedOut, Some(why)),
            Input::NodeHealth(down) => self.on_health(down),
            Input::Tick => self.on_tick(),
            Input::Interrupted => self.finish(NodeStatus::Interrupted, None),
        }
        self.release_holds();
        if !self.finished {
            self.force_due();
            self.check_deadlines();
        }
        if !self.finished {
            self.advance();
        }
        std::mem::take(&mut self.effects)
    }

    /// When the machine wants a `Tick`: a retry falls due, a deadline
    /// passes, or terminating pods are to be checked against
    /// `--skip-wait-for-delete-timeout`.
    pub(crate) fn next_wakeup(&self) -> Option<Instant> {
        if self.finished {
            return None;
        }
        let wave = self.wave();
        let retries = self.members.values().filter_map(|m| match &m.state {
            State::Blocked { retry_at, .. } if m.wave <= wave => *retry_at,
            _ => None,
        });
        let expiry = ((self.settings.skip_wait_for_delete > 0 || self.counts_lost())
            && self
                .members
                .values()
                .any(|m| m.pod.metadata.deletion_timestamp.is_some() && !m.done()))
        .then(|| self.last.at + EXPIRY_CHECK);
        let forcing = self
            .members
            .values()
            .filter(|_| self.settings.deadline.is_some())
            .filter(|m| self.forceable(m))
            .filter_map(|m| self.force_at(m));
        retries
            .chain(self.wave_deadline())
            .chain(self.deadline())
            .chain(expiry)
            .chain(forcing)
            .min()
    }

    fn wave(&self) -> usize {
        self.running.map_or(0, |r| r.wave)
    }

    fn emit(&mut self, e: Event) {
        self.effects.push(Effect::Emit(e));
    }

    fn ms(&self) -> u64 {
        self.last
            .at
            .saturating_duration_since(self.started)
            .as_millis() as u64
    }
}
