//! One node's drain as a state machine, without I/O. Each input (an
//! eviction's answer, a pod change, a budget change, a timer, an
//! interruption) moves its pods along and returns the effects the driver
//! (crate::drain::driver) must perform: send an eviction, watch a budget,
//! tell the listeners, finish. Time comes in with every input, so tests
//! drive it without a server or a clock.
//!
//! The rules are kubectl drain's (pkg/drain/drain.go: evict every pod,
//! retry what a PodDisruptionBudget refuses, wait for each to be gone),
//! with waves run in order and refusals retried the moment the budget
//! allows instead of after a fixed 5 s.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use tokio::time::Instant;

use super::budgets::{Budget, Key as BudgetKey, UNWATCHED_RETRY};
use super::conclude::{self, Ended, Standing};
use super::events::Event;
use super::evict::Answer;
use super::outcome::{
    BudgetHold, Cause, NodeOutcome, NodeStatus, PodOutcome, PodResult, WaveOutcome,
};
use super::pod_key::{PodKey, uid};
use super::pod_watch::Change;
use crate::policy::classify::{
    Disposition, SkipReason, WaitReason, claim_names, controller_kind, priority,
};

/// Evictions a node keeps in flight at once.
pub(crate) const IN_FLIGHT: usize = 16;
/// Retry a PDB-blocked pod this often even when no budget change says so.
pub(crate) const FALLBACK_RETRY: Duration = Duration::from_secs(20);
/// Consecutive failed attempts (5xx, throttling) before a pod is given up.
pub(crate) const MAX_API_ATTEMPTS: u32 = 12;
/// How often `--skip-wait-for-delete-timeout` looks at terminating pods.
const EXPIRY_CHECK: Duration = Duration::from_secs(1);

/// The time of an input: monotonic for deadlines, wall-clock for pod
/// timestamps. One reading serves every decision an input leads to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Now {
    pub(crate) at: Instant,
    pub(crate) wall: Timestamp,
}

impl Now {
    pub(crate) fn read() -> Self {
        Now {
            at: Instant::now(),
            wall: kube_conventions::time::now(),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct WaveSpec {
    pub(crate) name: String,
    /// How long this wave may take on one node.
    pub(crate) timeout: Option<Duration>,
}

/// What every node's drain shares.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(crate) waves: Vec<WaveSpec>,
    /// `--timeout`: how long each node's drain may take, counted from its
    /// start, as kubectl drain counts it.
    pub(crate) timeout: Option<Duration>,
    /// `--skip-wait-for-delete-timeout` in seconds (0: off).
    pub(crate) skip_wait_for_delete: u64,
    /// Namespaces being deleted: their pods may hang in Terminating.
    pub(crate) terminating_namespaces: BTreeSet<String>,
    /// Evictions in flight at once on this node.
    pub(crate) in_flight: usize,
    /// `--disable-eviction`: pods are deleted, not evicted.
    pub(crate) delete: bool,
    /// `--grace-period`, when given.
    pub(crate) grace_period: Option<i64>,
    /// `--deadline`: counted from the node's start, after which what is
    /// left is deleted, budgets bypassed, each pod early enough to get its
    /// whole grace period by then.
    pub(crate) deadline: Option<Duration>,
    /// `--deadline-overrides-markers`: pods held by drain markers are
    /// deleted at the deadline too.
    pub(crate) deadline_overrides_markers: bool,
    /// `--surge`: a pod its budget holds gets one more replica of its
    /// Deployment first (crate::drain::surge).
    pub(crate) surge: bool,
    /// How long to wait, once the pods are gone, for the volumes they used
    /// to detach from the node (`--detach-timeout`); None with
    /// `--skip-wait-for-detach`.
    pub(crate) detach_wait: Option<Duration>,
}

#[derive(Debug)]
pub(crate) enum Input {
    /// The API server answered the eviction of this pod (this uid).
    Answer {
        key: PodKey,
        uid: String,
        answer: Answer,
        /// The VM evacuation a refused virt-launcher eviction started.
        evacuation: Option<Cause>,
    },
    Pod(Change),
    Budget {
        key: BudgetKey,
        budget: Budget,
        /// How many of the pods it holds here may be retried now: the
        /// disruptions it allows that no other node's drain took
        /// (`retry_wanted` asks for them).
        grant: usize,
    },
    /// Budget changes were missed: retry every pod a budget holds.
    BudgetsLagged,
    /// This budget cannot be watched (forbidden): its pods are retried on
    /// kubectl's timer instead.
    BudgetUnwatched(BudgetKey),
    /// The evicted pods' volumes detached from the node (Ok), or are
    /// still attached when the wait ended (why).
    Detached(Result<(), String>),
    /// What `--surge` did for this pod's workload: the Deployment surged,
    /// or why it cannot surge.
    Surged {
        key: PodKey,
        /// The Deployment surged; None when its budget allows disruptions
        /// once its pods are healthy (the wait ends by itself).
        result: Result<Option<String>, String>,
    },
    /// `next_wakeup` came.
    Tick,
    Interrupted,
}

#[derive(Debug)]
pub(crate) enum Effect {
    Evict {
        key: PodKey,
        uid: String,
        /// The VM, if the pod is a KubeVirt virt-launcher: a refusal may
        /// mean its evacuation started.
        vmi: Option<String>,
        /// The budget whose change granted this retry (`Input::Budget`):
        /// the disruption is this node's to use.
        granted: Option<BudgetKey>,
    },
    /// Wait until these claims' (namespace, name) volumes are detached
    /// from the node, at most `limit`.
    AwaitDetach {
        claims: Vec<(String, String)>,
        limit: Duration,
    },
    /// `--surge`: one more replica of this pod's Deployment, if it can.
    Surge {
        key: PodKey,
        /// The pod's controller: kind and name.
        owner: Option<(String, String)>,
        /// The budget that refused it.
        budget: BudgetKey,
    },
    /// Delete the pod, budgets bypassed (`--deadline`), with this grace period.
    Force {
        key: PodKey,
        uid: String,
        grace: i64,
    },
    WatchBudget(BudgetKey),
    Emit(Event),
    Finish(Box<NodeOutcome>),
}

#[derive(Debug, Clone)]
enum State {
    Queued,
    InFlight,
    /// Evicted, waiting for it to go.
    Terminating,
    Blocked {
        cause: Cause,
        retry_at: Option<Instant>,
        budget: Option<BudgetKey>,
    },
    /// Waited for, never evicted.
    Waiting(WaitReason),
    Done(PodResult),
}

struct Member {
    pod: Pod,
    wave: usize,
    state: State,
    evicted: bool,
    attempts: u32,
    warning: Option<String>,
    /// The cause the listeners were last told of (one line per change of
    /// cause, not one per retry).
    told: Option<String>,
    /// The budget refusing this pod's eviction, since when.
    held: Option<(BudgetKey, Instant)>,
    /// Deleted at the deadline, and why it was still there.
    forced: Option<String>,
    /// `--surge` was asked for this pod's workload.
    surge_asked: bool,
    /// A plan rule asks to surge this pod's workload.
    surge: bool,
}

impl Member {
    fn done(&self) -> bool {
        matches!(self.state, State::Done(_))
    }
}

/// The pods a budget held on a node, and each span it held one.
type HoldLog = (BTreeSet<PodKey>, Vec<(Instant, Instant)>);

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
            pod,
            wave,
            state,
            evicted: false,
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

    /// Starts the drain: refused at once if kubectl's filters refuse a pod
    /// (nothing is evicted), otherwise the first wave.
    pub(crate) fn start(&mut self, now: Now) -> Vec<Effect> {
        self.last = now;
        self.started = now.at;
        if self.refusals.is_empty() {
            self.emit(Event::NodeStarted {
                node: self.node.clone(),
                pods: self.members.len(),
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
            Input::BudgetsLagged => {
                let wave = self.wave();
                let held: Vec<PodKey> = self
                    .members
                    .iter()
                    .filter(|(_, m)| {
                        m.wave <= wave
                            && matches!(
                                m.state,
                                State::Blocked {
                                    budget: Some(_),
                                    ..
                                }
                            )
                    })
                    .map(|(k, _)| k.clone())
                    .collect();
                self.queue.extend(held);
            }
            Input::BudgetUnwatched(key) => self.on_unwatched(key),
            Input::Surged { key, result } => self.on_surged(&key, result),
            Input::Detached(Ok(())) => self.finish(NodeStatus::Drained, None),
            Input::Detached(Err(why)) => self.finish(NodeStatus::TimedOut, Some(why)),
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

    /// Ends the hold of every pod its budget no longer refuses: evicted,
    /// gone, or refused for another reason (a retry in flight still counts
    /// as held).
    fn release_holds(&mut self) {
        let now = self.last.at;
        for (key, m) in &mut self.members {
            let still = match (&m.state, &m.held) {
                (State::InFlight, _) => true,
                (
                    State::Blocked {
                        budget: Some(b), ..
                    },
                    Some((h, _)),
                ) => b == h,
                _ => false,
            };
            if !still && let Some((budget, since)) = m.held.take() {
                log_hold(&mut self.holds, budget, key, (since, now));
            }
        }
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
        let expiry = (self.settings.skip_wait_for_delete > 0
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

    /// The grace period a pod is deleted with: `--grace-period`, else its own.
    fn grace(&self, m: &Member) -> i64 {
        self.settings.grace_period.unwrap_or_else(|| {
            m.pod
                .spec
                .as_ref()
                .and_then(|s| s.termination_grace_period_seconds)
                .unwrap_or(30)
        })
    }

    /// When `--deadline` deletes this pod: its grace period before the
    /// deadline (at once when that is already past), as Karpenter times it.
    fn force_at(&self, m: &Member) -> Option<Instant> {
        let deadline = self.started + self.settings.deadline?;
        let grace = Duration::from_secs(self.grace(m).max(0) as u64);
        Some(
            deadline
                .checked_sub(grace)
                .unwrap_or(self.started)
                .max(self.started),
        )
    }

    /// Is this pod one the deadline deletes: still to be evicted (queued or
    /// refused), or, with `--deadline-overrides-markers`, held by a marker;
    /// not one already on its way out.
    fn forceable(&self, m: &Member) -> bool {
        m.forced.is_none()
            && match &m.state {
                State::Queued | State::Blocked { .. } => true,
                State::Waiting(_) => self.settings.deadline_overrides_markers,
                State::InFlight | State::Terminating | State::Done(_) => false,
            }
    }

    /// Deletes every pod whose time under `--deadline` came, budgets bypassed.
    fn force_due(&mut self) {
        if self.settings.deadline.is_none() {
            return;
        }
        let now = self.last.at;
        let due: Vec<PodKey> = self
            .members
            .iter()
            .filter(|(_, m)| self.forceable(m) && self.force_at(m).is_some_and(|at| at <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            let grace = self.grace(&self.members[&key]);
            let node = self.node.clone();
            let m = self.members.get_mut(&key).expect("member");
            let why = match &m.state {
                State::Blocked { cause, .. } => {
                    format!("still held at the deadline: {}", cause.summary())
                }
                State::Waiting(reason) => format!(
                    "still held at the deadline by {}",
                    Cause::WaitingForCompletion {
                        reason: reason.clone()
                    }
                    .summary()
                ),
                _ => "not evicted yet at the deadline".to_string(),
            };
            m.forced = Some(why.clone());
            m.state = State::InFlight;
            self.in_flight += 1;
            let uid = uid(&m.pod).to_string();
            self.effects.push(Effect::Force {
                key: key.clone(),
                uid,
                grace,
            });
            self.emit(Event::Forced {
                node,
                pod: key,
                why,
                grace,
            });
        }
    }

    /// When this node's `--timeout` runs out.
    fn deadline(&self) -> Option<Instant> {
        self.settings.timeout.map(|t| self.started + t)
    }

    fn wave_deadline(&self) -> Option<Instant> {
        let r = self.running?;
        let timeout = self.settings.waves.get(r.wave)?.timeout?;
        Some(r.started + timeout)
    }

    fn emit(&mut self, e: Event) {
        self.effects.push(Effect::Emit(e));
    }

    fn check_deadlines(&mut self) {
        let now = self.last.at;
        if self.wave_deadline().is_some_and(|d| now >= d) {
            let name = self.settings.waves[self.wave()].name.clone();
            let message = format!("wave {name} did not finish within its timeout");
            self.finish(NodeStatus::TimedOut, Some(message));
        } else if self.deadline().is_some_and(|d| now >= d) {
            let message = "--timeout passed for this node".to_string();
            self.finish(NodeStatus::TimedOut, Some(message));
        }
    }

    /// Finishes waves that are done, starts the next one with pods, sends
    /// what the queue holds as far as the in-flight limit allows.
    fn advance(&mut self) {
        loop {
            let current = self.running.map(|r| r.wave);
            if let Some(w) = current {
                let done = self
                    .members
                    .values()
                    .filter(|m| m.wave <= w)
                    .all(Member::done);
                if !done {
                    if self.stuck(w) {
                        let message = self.failures.join("; ");
                        self.finish(NodeStatus::Failed, Some(message));
                        return;
                    }
                    break;
                }
                self.wave_done(w);
            }
            let next = current.map_or(0, |w| w + 1);
            let Some(w) = (next..self.settings.waves.len())
                .find(|w| self.members.values().any(|m| m.wave == *w && !m.done()))
            else {
                self.pods_gone();
                return;
            };
            self.start_wave(w);
        }
        self.pump();
    }

    fn start_wave(&mut self, w: usize) {
        let name = self.settings.waves[w].name.clone();
        let pods = self
            .members
            .values()
            .filter(|m| m.wave == w && !m.done())
            .count();
        self.running = Some(Running {
            wave: w,
            started: self.last.at,
        });
        let at = self.ms();
        self.waves.push(WaveOutcome {
            name: name.clone(),
            pods,
            started_ms: Some(at),
            finished_ms: None,
        });
        self.queue.extend(
            self.members
                .iter()
                .filter(|(_, m)| m.wave == w && matches!(m.state, State::Queued))
                .map(|(k, _)| k.clone()),
        );
        self.emit(Event::WaveStarted {
            node: self.node.clone(),
            wave: name,
            pods,
        });
        // A held pod is waited for the way a budget makes kubectl wait:
        // said on screen, with how to release it.
        let held: Vec<(PodKey, WaitReason)> = self
            .members
            .iter()
            .filter(|(_, m)| m.wave == w)
            .filter_map(|(k, m)| match &m.state {
                State::Waiting(reason) => Some((k.clone(), reason.clone())),
                _ => None,
            })
            .collect();
        for (pod, reason) in held {
            let cause = Cause::WaitingForCompletion {
                reason: reason.clone(),
            };
            let release = reason.release_for(&pod.namespace, &pod.name);
            self.emit(Event::Blocked {
                node: self.node.clone(),
                pod,
                cause: format!("{}; to drain it now: {release}", cause.summary()),
                budget: None,
            });
        }
    }

    fn wave_done(&mut self, w: usize) {
        let at = self.ms();
        let mut elapsed = Duration::ZERO;
        if let Some(r) = self.running {
            elapsed = self.last.at.saturating_duration_since(r.started);
        }
        if let Some(last) = self.waves.last_mut() {
            last.finished_ms = Some(at);
        }
        self.emit(Event::WaveDone {
            node: self.node.clone(),
            wave: self.settings.waves[w].name.clone(),
            elapsed,
        });
    }

    fn ms(&self) -> u64 {
        self.last
            .at
            .saturating_duration_since(self.started)
            .as_millis() as u64
    }

    /// Sends evictions for queued and retried pods, up to the in-flight limit.
    fn pump(&mut self) {
        let limit = self.settings.in_flight.max(1);
        while self.in_flight < limit {
            let Some(key) = self.queue.pop_front() else {
                break;
            };
            let Some(m) = self.members.get_mut(&key) else {
                continue;
            };
            if !matches!(m.state, State::Queued | State::Blocked { .. }) {
                continue;
            }
            m.state = State::InFlight;
            self.in_flight += 1;
            let uid = uid(&m.pod).to_string();
            let vmi = super::kubevirt::vmi_name(&m.pod);
            let granted = self.granted.remove(&key);
            self.effects.push(Effect::Evict {
                key,
                uid,
                vmi,
                granted,
            });
        }
    }

    fn on_tick(&mut self) {
        let now = self.last.at;
        let wave = self.wave();
        let due: Vec<PodKey> = self
            .members
            .iter()
            .filter(|(_, m)| {
                m.wave <= wave
                    && matches!(&m.state, State::Blocked { retry_at: Some(at), .. } if *at <= now)
            })
            .map(|(k, _)| k.clone())
            .collect();
        self.queue.extend(due);
        self.expire_long_deletions();
    }

    /// `--skip-wait-for-delete-timeout`: a pod terminating longer than that counts as gone.
    fn expire_long_deletions(&mut self) {
        let limit = self.settings.skip_wait_for_delete;
        if limit == 0 {
            return;
        }
        let now = self.last.wall.as_second();
        for m in self.members.values_mut() {
            let old = m
                .pod
                .metadata
                .deletion_timestamp
                .as_ref()
                .is_some_and(|t| now - t.0.as_second() > limit as i64);
            if old && !m.done() {
                m.state = State::Done(PodResult::Evicted);
            }
        }
    }

    /// Records a budget's numbers without acting on them: for dry runs, and
    /// for a refusal by a budget whose numbers the drain knows but that has
    /// not changed since.
    pub(crate) fn note_budget(&mut self, key: BudgetKey, budget: Budget) {
        self.budgets.insert(key, budget);
    }

    /// The cause a refusing answer stands for.
    pub(crate) fn refusal_cause(&self, namespace: &str, answer: &Answer) -> Option<Cause> {
        match answer {
            Answer::Accepted | Answer::NamespaceTerminating | Answer::Gone => None,
            Answer::PdbBlocked { pdb, message, .. } => Some(budget_cause(
                pdb,
                self.budgets.get(&(namespace.to_string(), pdb.clone())),
                message.clone(),
            )),
            Answer::MultiplePdbs(message) => Some(Cause::MultiplePdbs {
                message: message.clone(),
            }),
            Answer::Forbidden(message) => Some(Cause::Forbidden {
                message: message.clone(),
            }),
            Answer::Retry { message, .. } | Answer::Failed(message) => Some(Cause::ApiError {
                message: message.clone(),
            }),
        }
    }

    /// Marks a pod blocked, telling the listeners when the cause is new.
    fn block(
        &mut self,
        key: &PodKey,
        cause: Cause,
        retry_at: Option<Instant>,
        budget: Option<BudgetKey>,
    ) {
        let Some(m) = self.members.get_mut(key) else {
            return;
        };
        // A budget's numbers change as pods come and go; the cause is the
        // same budget, so it is told once.
        let identity = match &cause {
            Cause::Pdb { name, .. } => format!("pdb/{name}"),
            other => other.summary(),
        };
        let new = m.told.as_ref() != Some(&identity);
        m.told = Some(identity);
        let summary = cause.summary();
        let budget_name = match &cause {
            Cause::Pdb { name, .. } => Some(format!("{}/{name}", key.namespace)),
            _ => None,
        };
        m.state = State::Blocked {
            cause,
            retry_at,
            budget,
        };
        if new {
            self.emit(Event::Blocked {
                node: self.node.clone(),
                pod: key.clone(),
                cause: summary,
                budget: budget_name,
            });
        }
    }

    fn on_answer(&mut self, key: &PodKey, pod_uid: &str, answer: Answer, vm: Option<Cause>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        // An evacuating VM is progress, not a block by its budget.
        let cause = vm.or_else(|| self.refusal_cause(&key.namespace, &answer));
        let now = self.last.at;
        let node = self.node.clone();
        let Some(m) = self.members.get_mut(key) else {
            return;
        };
        if uid(&m.pod) != pod_uid || m.done() {
            return;
        }
        match answer {
            Answer::Accepted => {
                m.evicted = true;
                m.attempts = 0;
                m.state = State::Terminating;
                self.emit(Event::Evicted {
                    node,
                    pod: key.clone(),
                });
            }
            // The namespace controller deletes the pod: waited for (kubectl
            // retries the eviction until the pod is gone), not counted as
            // evicted, and said on screen.
            Answer::NamespaceTerminating => {
                m.attempts = 0;
                m.state = State::Terminating;
                self.terminating_namespaces.insert(key.namespace.clone());
                let cause = Cause::NamespaceTerminating {
                    namespace: key.namespace.clone(),
                };
                self.emit(Event::Blocked {
                    node,
                    pod: key.clone(),
                    cause: cause.summary(),
                    budget: None,
                });
            }
            Answer::Gone => {
                m.state = State::Done(if m.evicted {
                    PodResult::Evicted
                } else {
                    PodResult::GoneByItself
                });
                self.emit(Event::PodGone {
                    node,
                    pod: key.clone(),
                });
            }
            Answer::PdbBlocked {
                pdb, retry_after, ..
            } => {
                m.attempts = 0;
                let budget = (key.namespace.clone(), pdb);
                if m.held.as_ref().is_none_or(|(b, _)| *b != budget) {
                    m.held = Some((budget.clone(), now));
                }
                self.effects.push(Effect::WatchBudget(budget.clone()));
                let fallback = if self.unwatched.contains(&budget) {
                    UNWATCHED_RETRY
                } else {
                    FALLBACK_RETRY
                };
                let retry = now + retry_after.unwrap_or(fallback);
                if (self.settings.surge || m.surge) && !m.surge_asked {
                    m.surge_asked = true;
                    let owner = controller_kind(&m.pod)
                        .map(|(kind, name)| (kind.to_string(), name.to_string()));
                    self.effects.push(Effect::Surge {
                        key: key.clone(),
                        owner,
                        budget: budget.clone(),
                    });
                }
                self.block(key, cause.expect("a refusal"), Some(retry), Some(budget));
            }
            // kubectl drain fails such a pod at once: no retry will help.
            Answer::MultiplePdbs(message) => {
                let message = format!("cannot evict {key}: {message}");
                self.fail(key, cause.expect("a refusal"), message);
            }
            Answer::Retry {
                retry_after,
                message,
                throttled,
            } => {
                m.attempts += 1;
                let attempts = m.attempts;
                let cause = Cause::ApiError {
                    message: message.clone(),
                };
                // Throttling says "later", not "no": only --timeout ends it.
                if attempts > MAX_API_ATTEMPTS && !throttled {
                    let message =
                        format!("evicting {key} failed {MAX_API_ATTEMPTS} times: {message}");
                    self.fail(key, cause, message);
                    return;
                }
                let backoff = Duration::from_millis(200 * (1 << attempts.min(6)))
                    .min(Duration::from_secs(10));
                m.state = State::Blocked {
                    cause,
                    retry_at: Some(now + retry_after.unwrap_or(backoff)),
                    budget: None,
                };
                self.emit(Event::ApiTrouble { node, message });
            }
            // A refusal no retry changes fails that pod; the others go on,
            // and the node ends failed once nothing else can move.
            Answer::Forbidden(message) => {
                let cause = Cause::Forbidden {
                    message: message.clone(),
                };
                let verb = if self.settings.delete {
                    "delete pods"
                } else {
                    "create pods/eviction"
                };
                let message = format!(
                    "not allowed to {verb} in namespace {}: {message}",
                    key.namespace
                );
                self.fail(key, cause, message);
            }
            Answer::Failed(message) => {
                let cause = Cause::ApiError {
                    message: message.clone(),
                };
                self.fail(key, cause, format!("evicting {key}: {message}"));
            }
        }
    }

    /// A pod no retry will move: blocked for good, its reason kept for the
    /// node's message (each distinct reason once).
    fn fail(&mut self, key: &PodKey, cause: Cause, message: String) {
        self.block(key, cause, None, None);
        if !self.failures.contains(&message) {
            self.failures.push(message);
        }
    }

    /// Has wave `w` nothing left that can move: every pod not gone failed
    /// for good and no eviction in flight?
    fn stuck(&self, w: usize) -> bool {
        !self.failures.is_empty()
            && self.in_flight == 0
            && self
                .members
                .values()
                .filter(|m| m.wave <= w && !m.done())
                .all(|m| {
                    matches!(
                        m.state,
                        State::Blocked {
                            retry_at: None,
                            budget: None,
                            ..
                        }
                    )
                })
    }

    fn on_change(&mut self, change: Change) {
        match change {
            Change::Gone { key, uid: gone } => {
                let node = self.node.clone();
                if let Some(m) = self.members.get_mut(&key)
                    && uid(&m.pod) == gone
                    && !m.done()
                {
                    m.state = State::Done(match (&m.state, &m.forced) {
                        (_, Some(why)) => PodResult::Forced { why: why.clone() },
                        (State::Waiting(_), None) => PodResult::Completed,
                        _ if m.evicted => PodResult::Evicted,
                        _ => PodResult::GoneByItself,
                    });
                    self.emit(Event::PodGone { node, pod: key });
                }
            }
            Change::Upsert(pod) => self.on_upsert(*pod),
            Change::Error(message) => self.emit(Event::ApiTrouble {
                node: self.node.clone(),
                message,
            }),
            Change::Polling(message) => self.emit(Event::Warning { message }),
        }
    }

    fn on_upsert(&mut self, pod: Pod) {
        let key = PodKey::of(&pod);
        let node = self.node.clone();
        match self.members.get_mut(&key) {
            Some(m) if uid(&m.pod) == uid(&pod) => {
                // A metadata-only watch brings no spec or status: keep ours.
                m.pod.metadata = pod.metadata;
                if pod.status.is_some() {
                    m.pod.status = pod.status;
                }
                if pod.spec.is_some() {
                    m.pod.spec = pod.spec;
                }
                let finished = matches!(
                    m.pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                    Some("Succeeded" | "Failed")
                );
                if finished && matches!(m.state, State::Waiting(_)) {
                    m.state = State::Done(PodResult::Completed);
                    self.emit(Event::PodGone { node, pod: key });
                }
            }
            Some(m) if !m.done() => {}
            _ => {
                // A pod that arrived after the drain began: one that
                // tolerates the cordon, or a StatefulSet's pod recreated
                // under the same name. It would come back if evicted, as
                // kubectl drain knows: it is reported, not chased.
                // A pod left alone from the start (a DaemonSet's, say)
                // changing is not an arrival.
                let listed = self.others.iter().any(|o| o.pod == key);
                if !listed {
                    self.others.push(PodOutcome {
                        pod: key,
                        priority: priority(&pod),
                        wave: None,
                        result: PodResult::Skipped {
                            reason: SkipReason::ArrivedDuringDrain,
                        },
                        warning: None,
                    });
                }
            }
        }
    }

    /// Every pod is gone: the node is drained, once the volumes its
    /// evicted pods used are detached (when there are any to wait for).
    fn pods_gone(&mut self) {
        if self.detaching {
            return;
        }
        let mut claims: Vec<(String, String)> = self
            .members
            .iter()
            .filter(|(_, m)| m.evicted || m.forced.is_some())
            .flat_map(|(k, m)| claim_names(&m.pod).map(|c| (k.namespace.clone(), c.to_string())))
            .collect();
        claims.sort();
        claims.dedup();
        match self.settings.detach_wait {
            Some(limit) if !claims.is_empty() => {
                self.detaching = true;
                self.effects.push(Effect::AwaitDetach { claims, limit });
            }
            _ => self.finish(NodeStatus::Drained, None),
        }
    }

    /// `--surge` answered: said on screen; a workload that cannot surge is
    /// noted on its pod, which waits on its budget as before.
    fn on_surged(&mut self, key: &PodKey, result: Result<Option<String>, String>) {
        let message = match result {
            Ok(None) => return,
            Ok(Some(deployment)) => format!(
                "surging Deployment {}/{deployment}: one more replica, so that its budget lets this pod go",
                key.namespace
            ),
            Err(why) => {
                let note = format!("not surged: {why}");
                if let Some(m) = self.members.get_mut(key) {
                    m.warning = Some(note.clone());
                }
                note
            }
        };
        self.emit(Event::Surge {
            node: self.node.clone(),
            pod: key.clone(),
            message,
        });
    }

    /// No change of this budget will come: retry its pods on kubectl's timer.
    fn on_unwatched(&mut self, key: BudgetKey) {
        let soon = self.last.at + UNWATCHED_RETRY;
        for m in self.members.values_mut() {
            if let State::Blocked {
                retry_at: Some(at),
                budget: Some(b),
                ..
            } = &mut m.state
                && *b == key
                && *at > soon
            {
                *at = soon;
            }
        }
        self.unwatched.insert(key);
    }

    /// How many pods this budget holds that its next disruption could
    /// free: those of the running wave or an earlier one.
    pub(crate) fn retry_wanted(&self, key: &BudgetKey) -> usize {
        let wave = self.wave();
        self.held_by(key)
            .filter(|k| self.members[*k].wave <= wave)
            .count()
    }

    fn held_by<'a>(&'a self, key: &'a BudgetKey) -> impl Iterator<Item = &'a PodKey> + 'a {
        self.members
            .iter()
            .filter(move |(_, m)| matches!(&m.state, State::Blocked { budget: Some(b), .. } if b == key))
            .map(|(k, _)| k)
    }

    /// A budget changed: refresh the causes it holds pods for, and retry as
    /// many of them as it now allows and were granted to this node.
    fn on_budget(&mut self, key: &BudgetKey, budget: Budget, grant: usize) {
        self.budgets.insert(key.clone(), budget);
        let mut allowed = (budget.disruptions_allowed.max(0) as usize).min(grant);
        let wave = self.wave();
        let held: Vec<PodKey> = self.held_by(key).cloned().collect();
        for k in held {
            let m = self.members.get_mut(&k).expect("member");
            // The report shows the budget's latest numbers; the listeners
            // were told of the budget once (see `block`).
            if let State::Blocked { cause, .. } = &mut m.state
                && let Cause::Pdb { message, .. } = cause
            {
                *cause = budget_cause(&key.1, Some(&budget), std::mem::take(message));
            }
            if allowed > 0 && m.wave <= wave {
                allowed -= 1;
                self.granted.insert(k.clone(), key.clone());
                self.queue.push_back(k);
            }
        }
    }

    fn finish(&mut self, status: NodeStatus, message: Option<String>) {
        self.finished = true;
        let elapsed = self.last.at.saturating_duration_since(self.started);
        self.emit(Event::NodeDone {
            node: self.node.clone(),
            status,
            elapsed,
        });
        let outcome = self.build(status, message);
        self.effects.push(Effect::Finish(Box::new(outcome)));
    }

    fn outcome(mut self, status: NodeStatus, message: Option<String>) -> NodeOutcome {
        self.build(status, message)
    }

    fn build(&mut self, status: NodeStatus, message: Option<String>) -> NodeOutcome {
        let ended = self
            .members
            .iter()
            .map(|(key, m)| Ended {
                key,
                pod: &m.pod,
                wave: m.wave,
                standing: match &m.state {
                    State::Done(r) => Standing::Done(r.clone()),
                    State::Blocked { cause, .. } => Standing::Blocked(cause.clone()),
                    State::Waiting(reason) => Standing::Waiting(reason.clone()),
                    State::Terminating => Standing::Terminating,
                    State::Queued | State::InFlight => Standing::NotStarted,
                },
                warning: m.warning.clone(),
            })
            .collect();
        let names: Vec<String> = self.settings.waves.iter().map(|w| w.name.clone()).collect();
        let mut pods =
            conclude::pod_outcomes(ended, &names, &self.terminating_namespaces, self.last.wall);
        pods.extend(self.others.iter().cloned());
        pods.sort_by(|a, b| a.pod.cmp(&b.pod));
        NodeOutcome {
            node: self.node.clone(),
            status,
            message,
            was_cordoned: self.was_cordoned,
            elapsed_ms: self.ms(),
            waves: self.waves.clone(),
            pods,
            budget_holds: self.budget_holds(),
        }
    }

    /// Each budget's holds on this node: how long any of its pods waited
    /// on it (overlapping waits counted once), and whether one still does.
    fn budget_holds(&self) -> Vec<BudgetHold> {
        let now = self.last.at;
        let mut holds = self.holds.clone();
        let mut holding = BTreeSet::new();
        for (key, m) in &self.members {
            if let Some((budget, since)) = &m.held {
                log_hold(&mut holds, budget.clone(), key, (*since, now));
                holding.insert(budget.clone());
            }
        }
        holds
            .into_iter()
            .map(|(budget, (pods, spans))| BudgetHold {
                holding: holding.contains(&budget),
                budget: format!("{}/{}", budget.0, budget.1),
                pods: pods.into_iter().collect(),
                held_ms: u64::try_from(union(spans).as_millis()).unwrap_or(u64::MAX),
            })
            .collect()
    }
}

/// Notes that `budget` held `pod` for `span`.
fn log_hold(
    holds: &mut BTreeMap<BudgetKey, HoldLog>,
    budget: BudgetKey,
    pod: &PodKey,
    span: (Instant, Instant),
) {
    let (pods, spans) = holds.entry(budget).or_default();
    pods.insert(pod.clone());
    spans.push(span);
}

/// The time covered by some span, each moment counted once.
fn union(mut spans: Vec<(Instant, Instant)>) -> Duration {
    spans.sort();
    let mut total = Duration::ZERO;
    let mut current: Option<(Instant, Instant)> = None;
    for (start, end) in spans {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + current.map_or(Duration::ZERO, |(s, e)| e - s)
}

/// The cause a budget's refusal stands for, with the budget's numbers when known.
fn budget_cause(name: &str, budget: Option<&Budget>, message: String) -> Cause {
    Cause::Pdb {
        name: name.to_string(),
        disruptions_allowed: budget.map(|b| b.disruptions_allowed),
        current_healthy: budget.map(|b| b.current_healthy),
        desired_healthy: budget.map(|b| b.desired_healthy),
        expected_pods: budget.map(|b| b.expected_pods),
        message,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    const SEC: Duration = Duration::from_secs(1);

    fn pod(name: &str, uid: &str) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns", "uid": uid}}))
            .expect("pod")
    }

    fn key(name: &str) -> PodKey {
        PodKey::new("ns", name)
    }

    fn evict(wave: usize) -> Disposition {
        Disposition::Evict {
            wave,
            warning: None,
            surge: false,
        }
    }

    /// A drain of `pods` (name, wave) on node `n`, started at `t0`.
    struct Drain {
        m: NodeMachine,
        t0: Instant,
        now: Instant,
    }

    impl Drain {
        fn new(pods: &[(&str, usize)], settings: Settings) -> (Self, Vec<Effect>) {
            let t0 = Instant::now();
            let at = |at| Now {
                at,
                wall: Timestamp::now(),
            };
            let pods = pods
                .iter()
                .map(|(n, w)| (pod(n, &format!("uid-{n}")), evict(*w)))
                .collect();
            let mut m = NodeMachine::new("n", Arc::new(settings), pods, false, at(t0));
            let effects = m.start(at(t0));
            (Drain { m, t0, now: t0 }, effects)
        }

        /// Feeds an input `offset` after the start.
        fn at(&mut self, offset: Duration, input: Input) -> Vec<Effect> {
            self.now = self.t0 + offset;
            self.m.step(
                input,
                Now {
                    at: self.now,
                    wall: Timestamp::now(),
                },
            )
        }

        fn answer(&mut self, offset: Duration, name: &str, answer: Answer) -> Vec<Effect> {
            self.at(
                offset,
                Input::Answer {
                    key: key(name),
                    uid: format!("uid-{name}"),
                    answer,
                    evacuation: None,
                },
            )
        }

        /// Budget `name` now allows `allowed` disruptions.
        fn allows(&mut self, offset: Duration, name: &str, allowed: i32) -> Vec<Effect> {
            self.at(
                offset,
                Input::Budget {
                    key: ("ns".into(), name.into()),
                    budget: budget(allowed),
                    grant: usize::MAX,
                },
            )
        }

        fn gone(&mut self, offset: Duration, name: &str) -> Vec<Effect> {
            self.at(
                offset,
                Input::Pod(Change::Gone {
                    key: key(name),
                    uid: format!("uid-{name}"),
                }),
            )
        }
    }

    fn waves(names: &[&str]) -> Settings {
        Settings {
            waves: names
                .iter()
                .map(|n| WaveSpec {
                    name: (*n).to_string(),
                    timeout: None,
                })
                .collect(),
            in_flight: IN_FLIGHT,
            ..Settings::default()
        }
    }

    fn evicted(effects: &[Effect]) -> Vec<String> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Evict { key, .. } => Some(key.name.clone()),
                _ => None,
            })
            .collect()
    }

    fn finished(effects: &[Effect]) -> Option<&NodeOutcome> {
        effects.iter().find_map(|e| match e {
            Effect::Finish(o) => Some(&**o),
            _ => None,
        })
    }

    fn result(o: &NodeOutcome, name: &str) -> PodResult {
        o.pods
            .iter()
            .find(|p| p.pod == key(name))
            .expect("pod in outcome")
            .result
            .clone()
    }

    fn refusal(pdb: &str, retry_after: Option<Duration>) -> Answer {
        Answer::PdbBlocked {
            pdb: pdb.into(),
            message: format!(
                "The disruption budget {pdb} needs 2 healthy pods and has 2 currently"
            ),
            retry_after,
        }
    }

    fn budget(allowed: i32) -> Budget {
        Budget {
            disruptions_allowed: allowed,
            current_healthy: 2 + allowed,
            desired_healthy: 2,
            expected_pods: 3,
            observed: true,
        }
    }

    #[test]
    fn at_the_deadline_a_held_pod_is_deleted_its_grace_period_early() {
        let settings = Settings {
            deadline: Some(20 * SEC),
            grace_period: Some(10),
            ..waves(&["user"])
        };
        let (mut d, start) = Drain::new(&[("a", 0), ("b", 0)], settings);
        assert_eq!(evicted(&start), ["a", "b"]);
        d.answer(SEC / 10, "a", refusal("web", None));
        d.answer(SEC / 10, "b", Answer::Accepted);
        // The budget's 20 s fallback retry comes after the force time.
        assert_eq!(d.m.next_wakeup(), Some(d.t0 + 10 * SEC));
        let early = d.at(9 * SEC, Input::Tick);
        assert!(!early.iter().any(|e| matches!(e, Effect::Force { .. })));
        let due = d.at(10 * SEC, Input::Tick);
        let forced: Vec<(&str, i64)> = due
            .iter()
            .filter_map(|e| match e {
                Effect::Force { key, grace, .. } => Some((key.name.as_str(), *grace)),
                _ => None,
            })
            .collect();
        assert_eq!(forced, [("a", 10)]);
        assert!(
            due.iter().any(
                |e| matches!(e, Effect::Emit(Event::Forced { why, .. }) if why.contains("web"))
            )
        );
        d.answer(10 * SEC, "a", Answer::Accepted);
        d.gone(11 * SEC, "b");
        let end = d.gone(19 * SEC, "a");
        let o = finished(&end).expect("finished");
        assert_eq!(o.status, NodeStatus::Drained);
        assert!(matches!(result(o, "a"), PodResult::Forced { .. }));
        assert_eq!(result(o, "b"), PodResult::Evicted);
    }

    #[test]
    fn waves_run_in_order_and_each_waits_for_the_one_before() {
        let (mut d, start) = Drain::new(
            &[("a", 0), ("b", 0), ("c", 1)],
            waves(&["user", "critical"]),
        );
        assert_eq!(evicted(&start), ["a", "b"], "only the first wave is sent");
        let accepted = d.answer(SEC, "a", Answer::Accepted);
        assert!(
            accepted
                .iter()
                .any(|e| matches!(e, Effect::Emit(Event::Evicted { .. })))
        );
        d.answer(SEC, "b", Answer::Accepted);
        assert!(
            evicted(&d.gone(2 * SEC, "a")).is_empty(),
            "b is still there"
        );
        let next = d.gone(3 * SEC, "b");
        assert_eq!(
            evicted(&next),
            ["c"],
            "wave critical starts once user is gone"
        );
        assert!(
            next.iter()
                .any(|e| matches!(e, Effect::Emit(Event::WaveDone { wave, .. }) if wave == "user"))
        );
        d.answer(4 * SEC, "c", Answer::Accepted);
        let end = d.gone(5 * SEC, "c");
        let outcome = finished(&end).expect("finished");
        assert_eq!(outcome.status, NodeStatus::Drained);
        assert_eq!(result(outcome, "a"), PodResult::Evicted);
        let names: Vec<&str> = outcome.waves.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["user", "critical"]);
    }

    #[test]
    fn budget_holds_count_each_moment_once_and_say_what_still_holds() {
        let mut settings = waves(&["user"]);
        settings.timeout = Some(20 * SEC);
        let (mut d, _) = Drain::new(&[("a", 0), ("b", 0), ("c", 0)], settings);
        // web refuses a from 1 s and b from 2 s; a goes at 5 s, b at 9 s.
        d.answer(SEC, "a", refusal("web", None));
        d.answer(2 * SEC, "b", refusal("web", None));
        d.allows(3 * SEC, "web", 1);
        d.answer(3 * SEC, "a", refusal("web", None));
        // db refuses c from 4 s until the node's --timeout.
        d.answer(4 * SEC, "c", refusal("db", None));
        d.allows(5 * SEC, "web", 1);
        d.answer(5 * SEC, "a", Answer::Accepted);
        d.gone(6 * SEC, "a");
        d.allows(9 * SEC, "web", 1);
        d.answer(9 * SEC, "b", Answer::Accepted);
        d.gone(10 * SEC, "b");
        let end = d.at(20 * SEC, Input::Tick);
        let outcome = finished(&end).expect("timed out");
        let holds: Vec<(&str, Vec<String>, u64, bool)> = outcome
            .budget_holds
            .iter()
            .map(|h| {
                let pods = h.pods.iter().map(|p| p.name.clone()).collect();
                (h.budget.as_str(), pods, h.held_ms, h.holding)
            })
            .collect();
        assert_eq!(
            holds,
            [
                ("ns/db", vec!["c".to_string()], 16_000, true),
                (
                    "ns/web",
                    vec!["a".to_string(), "b".to_string()],
                    8_000,
                    false
                ),
            ]
        );
    }

    #[test]
    fn a_budget_refusal_is_retried_when_the_budget_allows_one() {
        let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], waves(&["user"]));
        d.answer(SEC, "a", Answer::Accepted);
        let refused = d.answer(SEC, "b", refusal("web", None));
        assert!(
            refused
                .iter()
                .any(|e| matches!(e, Effect::WatchBudget((ns, n)) if ns == "ns" && n == "web"))
        );
        assert!(
            refused
                .iter()
                .any(|e| matches!(e, Effect::Emit(Event::Blocked { .. })))
        );
        // Without a budget change, the retry waits for the fallback.
        assert_eq!(d.m.next_wakeup(), Some(d.t0 + SEC + FALLBACK_RETRY));
        let still = d.allows(2 * SEC, "web", 0);
        assert!(evicted(&still).is_empty(), "the budget allows nothing yet");
        let retried = d.allows(3 * SEC, "web", 1);
        assert_eq!(
            evicted(&retried),
            ["b"],
            "retried the moment the budget allows it"
        );
    }

    #[test]
    fn a_budget_that_cannot_be_watched_is_retried_on_kubectls_timer() {
        let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], waves(&["user"]));
        d.answer(SEC, "a", refusal("web", None));
        assert_eq!(d.m.next_wakeup(), Some(d.t0 + SEC + FALLBACK_RETRY));
        d.at(2 * SEC, Input::BudgetUnwatched(("ns".into(), "web".into())));
        assert_eq!(
            d.m.next_wakeup(),
            Some(d.t0 + 2 * SEC + UNWATCHED_RETRY),
            "the waiting pod comes forward"
        );
        assert_eq!(evicted(&d.at(7 * SEC, Input::Tick)), ["a"]);
        d.answer(7 * SEC, "b", refusal("web", None));
        d.answer(7 * SEC, "a", refusal("web", None));
        assert_eq!(
            d.m.next_wakeup(),
            Some(d.t0 + 7 * SEC + UNWATCHED_RETRY),
            "later refusals wait 5 s, not 20"
        );
    }

    #[test]
    fn retry_after_sets_when_a_refused_pod_is_tried_again() {
        let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
        d.answer(SEC, "a", refusal("web", Some(10 * SEC)));
        assert_eq!(d.m.next_wakeup(), Some(d.t0 + 11 * SEC));
        assert!(evicted(&d.at(5 * SEC, Input::Tick)).is_empty());
        assert_eq!(evicted(&d.at(11 * SEC, Input::Tick)), ["a"]);
    }

    #[test]
    fn a_uid_conflict_or_a_new_uid_means_the_pod_is_gone() {
        let (mut d, _) = Drain::new(&[("a", 0), ("b", 0), ("c", 0)], waves(&["user"]));
        // 409 on the uid precondition: the pod we meant no longer exists.
        let a = d.answer(SEC, "a", Answer::Gone);
        assert!(
            a.iter()
                .any(|e| matches!(e, Effect::Emit(Event::PodGone { .. })))
        );
        d.answer(SEC, "b", Answer::Accepted);
        d.answer(SEC, "c", Answer::Accepted);
        // A StatefulSet recreates b under the same name: the watch reports
        // the old uid gone and the new pod as an arrival, never chased.
        let old_b = Change::Gone {
            key: key("b"),
            uid: "uid-b".into(),
        };
        d.at(2 * SEC, Input::Pod(old_b));
        let new_b = Change::Upsert(Box::new(pod("b", "uid-b2")));
        assert!(evicted(&d.at(2 * SEC, Input::Pod(new_b))).is_empty());
        let end = d.gone(3 * SEC, "c");
        let outcome = finished(&end).expect("drained once a, the old b and c are gone");
        assert_eq!(outcome.status, NodeStatus::Drained);
        assert_eq!(result(outcome, "a"), PodResult::GoneByItself);
        assert_eq!(result(outcome, "c"), PodResult::Evicted);
        assert!(outcome.pods.iter().any(|p| p.pod == key("b")
            && p.result
                == PodResult::Skipped {
                    reason: SkipReason::ArrivedDuringDrain
                }));
    }

    #[test]
    fn server_errors_back_off_and_give_up_after_the_attempts() {
        let retry = |throttled| Answer::Retry {
            retry_after: None,
            message: "503".into(),
            throttled,
        };
        let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
        let mut t = SEC;
        for attempt in 1..=MAX_API_ATTEMPTS {
            let e = d.answer(t, "a", retry(false));
            assert!(finished(&e).is_none(), "attempt {attempt}");
            t = d.m.next_wakeup().expect("a retry").duration_since(d.t0);
            assert_eq!(evicted(&d.at(t, Input::Tick)), ["a"]);
        }
        let e = d.answer(t, "a", retry(false));
        assert_eq!(finished(&e).expect("given up").status, NodeStatus::Failed);

        // Throttling (429 without a budget) is retried until --timeout.
        let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
        let mut t = SEC;
        for _ in 0..3 * MAX_API_ATTEMPTS {
            let e = d.answer(t, "a", retry(true));
            assert!(finished(&e).is_none());
            t = d.m.next_wakeup().expect("a retry").duration_since(d.t0);
            assert_eq!(evicted(&d.at(t, Input::Tick)), ["a"]);
        }
    }

    #[test]
    fn a_wave_timeout_ends_the_node_as_timed_out() {
        let mut settings = waves(&["user", "critical"]);
        settings.waves[0].timeout = Some(30 * SEC);
        let (mut d, _) = Drain::new(&[("a", 0), ("b", 1)], settings);
        d.answer(SEC, "a", refusal("web", None));
        assert!(d.m.next_wakeup() <= Some(d.t0 + 30 * SEC));
        let end = d.at(30 * SEC, Input::Tick);
        let outcome = finished(&end).expect("timed out");
        assert_eq!(outcome.status, NodeStatus::TimedOut);
        assert!(outcome.message.as_deref().unwrap().contains("wave user"));
        assert!(matches!(
            result(outcome, "a"),
            PodResult::Remaining {
                cause: Cause::Pdb { .. }
            }
        ));
        assert_eq!(
            result(outcome, "b"),
            PodResult::Remaining {
                cause: Cause::WaitingForEarlierWave {
                    wave: "user".into()
                }
            }
        );
    }

    #[test]
    fn the_drain_timeout_ends_the_node_as_timed_out() {
        let mut settings = waves(&["user"]);
        settings.timeout = Some(5 * SEC);
        let (mut d, _) = Drain::new(&[("a", 0)], settings);
        d.answer(SEC, "a", Answer::Accepted);
        let end = d.at(6 * SEC, Input::Tick);
        let outcome = finished(&end).expect("timed out");
        assert_eq!(outcome.status, NodeStatus::TimedOut);
        assert!(matches!(
            result(outcome, "a"),
            PodResult::Remaining {
                cause: Cause::Terminating { .. }
            }
        ));
    }

    #[test]
    fn an_interruption_stops_the_node_and_keeps_what_was_reached() {
        let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], waves(&["user"]));
        d.answer(SEC, "a", Answer::Accepted);
        d.gone(2 * SEC, "a");
        let end = d.at(3 * SEC, Input::Interrupted);
        let outcome = finished(&end).expect("interrupted");
        assert_eq!(outcome.status, NodeStatus::Interrupted);
        assert_eq!(result(outcome, "a"), PodResult::Evicted);
        assert_eq!(
            result(outcome, "b"),
            PodResult::Remaining {
                cause: Cause::NotStarted
            }
        );
        assert!(
            d.at(4 * SEC, Input::Tick).is_empty(),
            "a finished machine does nothing"
        );
    }

    #[test]
    fn a_refused_pod_stops_the_node_before_any_eviction() {
        let t0 = Now::read();
        let pods = vec![
            (pod("a", "1"), evict(0)),
            (
                pod("bare", "2"),
                Disposition::Refuse {
                    refusal: crate::policy::classify::Refusal::Unmanaged,
                },
            ),
        ];
        let mut m = NodeMachine::new("n", Arc::new(waves(&["user"])), pods, false, t0);
        let effects = m.start(t0);
        assert!(evicted(&effects).is_empty());
        let outcome = finished(&effects).expect("refused");
        assert_eq!(outcome.status, NodeStatus::Refused);
        assert!(outcome.message.as_deref().unwrap().contains("ns/bare"));
    }

    #[test]
    fn a_metadata_only_update_keeps_what_the_snapshot_knew() {
        let t0 = Now::read();
        let mut full = pod("a", "uid-a");
        full.spec = Some(serde_json::from_value(json!({"containers": [], "priority": 7})).unwrap());
        let mut m = NodeMachine::new(
            "n",
            Arc::new(waves(&["user"])),
            vec![(full, evict(0))],
            false,
            t0,
        );
        m.start(t0);
        assert!(
            !m.waits_for_completion(),
            "metadata is all this drain reads"
        );
        let mut meta = pod("a", "uid-a");
        meta.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::now()),
        );
        m.step(Input::Pod(Change::Upsert(Box::new(meta))), t0);
        let end = m.step(Input::Interrupted, t0);
        let outcome = finished(&end).expect("interrupted");
        let a = outcome.pods.iter().find(|p| p.pod == key("a")).unwrap();
        assert_eq!(a.priority, 7, "the spec from the snapshot is kept");
    }

    #[test]
    fn a_pod_left_alone_that_changes_is_not_an_arrival() {
        let t0 = Now::read();
        let daemon = (
            pod("agent", "uid-agent"),
            Disposition::Skip {
                reason: SkipReason::DaemonSet,
            },
        );
        let pods = vec![(pod("a", "uid-a"), evict(0)), daemon];
        let mut m = NodeMachine::new("n", Arc::new(waves(&["user"])), pods, false, t0);
        m.start(t0);
        let changed = pod("agent", "uid-agent");
        m.step(Input::Pod(Change::Upsert(Box::new(changed))), t0);
        let end = m.step(Input::Interrupted, t0);
        let outcome = finished(&end).expect("interrupted");
        let agent: Vec<&PodResult> = outcome
            .pods
            .iter()
            .filter(|p| p.pod == key("agent"))
            .map(|p| &p.result)
            .collect();
        assert_eq!(
            agent,
            [&PodResult::Skipped {
                reason: SkipReason::DaemonSet
            }]
        );
    }

    #[test]
    fn a_forbidden_eviction_does_not_stop_the_others() {
        let (mut d, _) = Drain::new(&[("a", 0), ("b", 0)], waves(&["user"]));
        let a = d.answer(SEC, "a", Answer::Forbidden("no".into()));
        assert!(finished(&a).is_none(), "b's eviction is still in flight");
        d.answer(SEC, "b", Answer::Accepted);
        let end = d.gone(2 * SEC, "b");
        let outcome = finished(&end).expect("nothing else can move");
        assert_eq!(outcome.status, NodeStatus::Failed);
        assert!(
            outcome
                .message
                .as_deref()
                .unwrap()
                .contains("not allowed to create pods/eviction in namespace ns"),
            "{outcome:?}"
        );
        assert_eq!(result(outcome, "b"), PodResult::Evicted);
        assert!(matches!(
            result(outcome, "a"),
            PodResult::Remaining {
                cause: Cause::Forbidden { .. }
            }
        ));
    }

    #[test]
    fn a_pod_under_two_budgets_fails_at_once() {
        let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
        let end = d.answer(SEC, "a", Answer::MultiplePdbs("more than one".into()));
        let outcome = finished(&end).expect("failed without a retry");
        assert_eq!(outcome.status, NodeStatus::Failed);
        assert!(matches!(
            result(outcome, "a"),
            PodResult::Remaining {
                cause: Cause::MultiplePdbs { .. }
            }
        ));
    }

    #[test]
    fn a_pod_blocked_again_by_the_same_budget_is_told_once() {
        let blocked = |effects: &[Effect]| {
            effects
                .iter()
                .filter(|e| matches!(e, Effect::Emit(Event::Blocked { .. })))
                .count()
        };
        let (mut d, _) = Drain::new(&[("a", 0)], waves(&["user"]));
        let mut told = blocked(&d.answer(SEC, "a", refusal("web", None)));
        told += blocked(&d.allows(2 * SEC, "web", 1));
        told += blocked(&d.answer(3 * SEC, "a", refusal("web", None)));
        told += blocked(&d.allows(4 * SEC, "web", 0));
        assert_eq!(told, 1, "one line per pod per change of cause");
    }
}
