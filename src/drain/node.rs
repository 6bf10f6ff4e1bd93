//! Draining one node: its waves in order, each wave's evictions with
//! bounded concurrency, PDB refusals retried the moment the budget allows,
//! and the pods' departure learnt from one watch.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use super::Engine;
use super::events::{Event, emit};
use super::evict::{self, Answer};
use super::outcome::{Cause, NodeOutcome, NodeStatus, PodOutcome, PodResult, WaveOutcome};
use super::pdb_watch;
use super::pod_watch::{Change, PodWatch, pod_key, uid};
use crate::classify::{Disposition, SkipReason, WaitReason, priority};

/// Evictions a node keeps in flight at once.
const IN_FLIGHT: usize = 16;
/// Retry a PDB-blocked pod this often even when no watch event says so.
const FALLBACK_RETRY: Duration = Duration::from_secs(20);
/// Consecutive failed attempts (5xx, throttling) before a pod is given up.
const MAX_API_ATTEMPTS: u32 = 12;

#[derive(Debug, Clone)]
enum State {
    Queued,
    InFlight,
    /// Evicted, waiting for it to go.
    Terminating,
    Blocked {
        cause: Cause,
        retry_at: Option<Instant>,
        pdb: Option<pdb_watch::Key>,
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
}

impl Member {
    fn done(&self) -> bool {
        matches!(self.state, State::Done(_))
    }

    /// Marks the pod blocked; `true` when the cause is new (worth telling).
    fn block(
        &mut self,
        cause: Cause,
        retry_at: Option<Instant>,
        pdb: Option<pdb_watch::Key>,
    ) -> bool {
        let new = !matches!(&self.state, State::Blocked { cause: c, .. } if c.summary() == cause.summary());
        self.state = State::Blocked {
            cause,
            retry_at,
            pdb,
        };
        new
    }
}

enum End {
    Done,
    TimedOut,
    Interrupted,
    Failed(String),
}

pub struct NodeRun<'a> {
    engine: &'a Engine,
    node: String,
    started: Instant,
    members: BTreeMap<String, Member>,
    others: Vec<PodOutcome>,
    waves: Vec<WaveOutcome>,
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}

impl<'a> NodeRun<'a> {
    pub fn new(engine: &'a Engine, node: &str) -> Self {
        NodeRun {
            engine,
            node: node.to_string(),
            started: Instant::now(),
            members: BTreeMap::new(),
            others: Vec::new(),
            waves: Vec::new(),
        }
    }

    fn ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Sorts a pod into the drain's members or the pods left alone; returns
    /// a refusal message if kubectl's filters refuse it.
    fn admit(&mut self, pod: Pod) -> Option<String> {
        let key = pod_key(&pod);
        let prio = priority(&pod);
        let disposition = self.engine.classifier.classify(&pod);
        match disposition {
            Disposition::Evict { wave, warning } => {
                let state = if pod.metadata.deletion_timestamp.is_some() {
                    State::Terminating
                } else {
                    State::Queued
                };
                self.members.insert(
                    key,
                    Member {
                        pod,
                        wave,
                        state,
                        evicted: false,
                        attempts: 0,
                        warning,
                    },
                );
                None
            }
            Disposition::WaitCompleted { wave, reason } => {
                self.members.insert(
                    key,
                    Member {
                        pod,
                        wave,
                        state: State::Waiting(reason),
                        evicted: false,
                        attempts: 0,
                        warning: None,
                    },
                );
                None
            }
            Disposition::Skip { reason } => {
                self.others.push(PodOutcome {
                    pod: key,
                    priority: prio,
                    wave: None,
                    result: PodResult::Skipped { reason },
                    warning: None,
                });
                None
            }
            Disposition::Refuse { refusal } => {
                let message = refusal.kubectl_message();
                self.others.push(PodOutcome {
                    pod: key.clone(),
                    priority: prio,
                    wave: None,
                    result: PodResult::Remaining {
                        cause: Cause::Refused {
                            refusal,
                            message: message.clone(),
                        },
                    },
                    warning: None,
                });
                Some(format!("{message}: {key}"))
            }
        }
    }

    fn outcome(
        mut self,
        status: NodeStatus,
        message: Option<String>,
        was_cordoned: bool,
    ) -> NodeOutcome {
        let waves = &self.engine.classifier.plan.waves;
        let running = self
            .members
            .values()
            .filter(|m| !m.done())
            .map(|m| m.wave)
            .min();
        let now = Timestamp::now();
        for (key, m) in std::mem::take(&mut self.members) {
            let result = match m.state {
                State::Done(r) => r,
                _ if Some(m.wave) != running && running.is_some_and(|r| r < m.wave) => {
                    PodResult::Remaining {
                        cause: Cause::WaitingForEarlierWave {
                            wave: running
                                .and_then(|r| waves.get(r))
                                .map(|w| w.name.clone())
                                .unwrap_or_default(),
                        },
                    }
                }
                State::Blocked { cause, .. } => PodResult::Remaining { cause },
                State::Waiting(reason) => PodResult::Remaining {
                    cause: Cause::WaitingForCompletion { reason },
                },
                State::Terminating
                    if self
                        .engine
                        .classifier
                        .terminating_namespaces
                        .contains(key.split('/').next().unwrap_or_default()) =>
                {
                    PodResult::Remaining {
                        cause: Cause::NamespaceTerminating {
                            namespace: key.split('/').next().unwrap_or_default().to_string(),
                        },
                    }
                }
                State::Terminating => PodResult::Remaining {
                    cause: terminating_cause(&m.pod, now),
                },
                State::Queued | State::InFlight => PodResult::Remaining {
                    cause: Cause::NotStarted,
                },
            };
            self.others.push(PodOutcome {
                pod: key,
                priority: priority(&m.pod),
                wave: waves.get(m.wave).map(|w| w.name.clone()),
                result,
                warning: m.warning,
            });
        }
        self.others.sort_by(|a, b| a.pod.cmp(&b.pod));
        let elapsed = self.started.elapsed();
        if status != NodeStatus::DryRun {
            emit(
                &self.engine.events,
                Event::NodeDone {
                    node: self.node.clone(),
                    status: status.as_str().to_string(),
                    elapsed,
                },
            );
        }
        NodeOutcome {
            node: self.node,
            status,
            message,
            was_cordoned,
            elapsed_ms: elapsed.as_millis() as u64,
            waves: self.waves,
            pods: self.others,
        }
    }

    /// The plan for this node: every pod's verdict, from classification alone.
    pub fn plan(mut self, pods: Vec<Pod>, was_cordoned: bool) -> NodeOutcome {
        let refusals: Vec<String> = pods.into_iter().filter_map(|p| self.admit(p)).collect();
        for m in self.members.values_mut() {
            if !matches!(m.state, State::Waiting(_)) {
                m.state = State::Done(PodResult::WouldEvict);
            }
        }
        let message = (!refusals.is_empty()).then(|| refusals.join("; "));
        self.outcome(NodeStatus::DryRun, message, was_cordoned)
    }

    /// `--dry-run=server`: the plan, and what the eviction API says to each
    /// eviction right now (sent with `dryRun=All`). Nothing changes.
    pub async fn dry_run_server(mut self, pods: Vec<Pod>, was_cordoned: bool) -> NodeOutcome {
        let refusals: Vec<String> = pods.into_iter().filter_map(|p| self.admit(p)).collect();
        let keys: Vec<String> = self.members.keys().cloned().collect();
        for key in keys {
            let m = self.members.get(&key).expect("member");
            if matches!(m.state, State::Waiting(_)) {
                continue;
            }
            let result = {
                let (ns, name) = key.split_once('/').expect("ns/name");
                let answer = evict::send(
                    &self.engine.clients.evict,
                    &evict::Request {
                        namespace: ns,
                        name,
                        uid: uid(&m.pod),
                        grace_period: self.engine.options.grace_period,
                        dry_run: true,
                        delete: self.engine.options.disable_eviction,
                    },
                )
                .await;
                if let Answer::PdbBlocked { pdb, .. } = &answer {
                    self.engine.pdbs.fetch(&(ns.to_string(), pdb.clone())).await;
                }
                match self.blocked_cause(ns, answer) {
                    Some(cause) => PodResult::WouldBlock { cause },
                    None => PodResult::WouldEvict,
                }
            };
            self.members.get_mut(&key).expect("member").state = State::Done(result);
        }
        let message = (!refusals.is_empty()).then(|| refusals.join("; "));
        self.outcome(NodeStatus::DryRun, message, was_cordoned)
    }

    /// The outcome of a node when kubectl's filters refused some pod on
    /// this or another node: nothing was changed.
    pub fn refuse(mut self, pods: Vec<Pod>, was_cordoned: bool) -> NodeOutcome {
        let refusals: Vec<String> = pods.into_iter().filter_map(|p| self.admit(p)).collect();
        if refusals.is_empty() {
            let message =
                "not drained: kubectl's filters refuse pods on another selected node".to_string();
            return self.outcome(NodeStatus::Refused, Some(message), was_cordoned);
        }
        let message = format!("cannot drain: {}", refusals.join("; "));
        self.outcome(NodeStatus::Refused, Some(message), was_cordoned)
    }

    /// The cause an answer stands for, if it refuses the pod.
    fn blocked_cause(&self, namespace: &str, answer: Answer) -> Option<Cause> {
        match answer {
            Answer::Accepted | Answer::Gone => None,
            Answer::PdbBlocked { pdb, message, .. } => {
                Some(self.pdb_cause(&(namespace.to_string(), pdb), message))
            }
            Answer::MultiplePdbs(message) => Some(Cause::MultiplePdbs { message }),
            Answer::Forbidden(message) => Some(Cause::Forbidden { message }),
            Answer::Retry { message, .. } | Answer::Failed(message) => {
                Some(Cause::ApiError { message })
            }
        }
    }

    fn pdb_cause(&self, key: &pdb_watch::Key, message: String) -> Cause {
        let b = self.engine.pdbs.get(key);
        Cause::Pdb {
            name: key.1.clone(),
            disruptions_allowed: b.map(|b| b.disruptions_allowed),
            current_healthy: b.map(|b| b.current_healthy),
            desired_healthy: b.map(|b| b.desired_healthy),
            expected_pods: b.map(|b| b.expected_pods),
            message,
        }
    }

    /// Drains the node. `watch` has delivered its first list: `pods`.
    pub async fn run(
        mut self,
        mut watch: PodWatch,
        pods: Vec<Pod>,
        was_cordoned: bool,
    ) -> NodeOutcome {
        let refusals: Vec<String> = pods.into_iter().filter_map(|p| self.admit(p)).collect();
        if !refusals.is_empty() {
            // kubectl's rule: a refused pod stops the node before anything is evicted.
            let message = format!("cannot drain: {}", refusals.join("; "));
            return self.outcome(NodeStatus::Refused, Some(message), was_cordoned);
        }
        emit(
            &self.engine.events,
            Event::NodeStarted {
                node: self.node.clone(),
                pods: self.members.len(),
            },
        );
        let waves = self.engine.classifier.plan.waves.clone();
        for (wi, wave) in waves.iter().enumerate() {
            let in_wave = self
                .members
                .values()
                .filter(|m| m.wave == wi && !m.done())
                .count();
            if in_wave == 0 {
                continue;
            }
            emit(
                &self.engine.events,
                Event::WaveStarted {
                    node: self.node.clone(),
                    wave: wave.name.clone(),
                    pods: in_wave,
                },
            );
            self.waves.push(WaveOutcome {
                name: wave.name.clone(),
                pods: in_wave,
                started_ms: Some(self.ms()),
                finished_ms: None,
            });
            let wave_started = Instant::now();
            let deadline = [
                self.engine.deadline(),
                wave.timeout.map(|t| wave_started + t),
            ]
            .into_iter()
            .flatten()
            .min();
            match self.run_wave(wi, &mut watch, deadline).await {
                End::Done => {
                    let now = self.ms();
                    if let Some(w) = self.waves.last_mut() {
                        w.finished_ms = Some(now);
                    }
                    emit(
                        &self.engine.events,
                        Event::WaveDone {
                            node: self.node.clone(),
                            wave: wave.name.clone(),
                            elapsed: wave_started.elapsed(),
                        },
                    );
                }
                End::TimedOut => {
                    let which = if wave.timeout.is_some_and(|t| wave_started.elapsed() >= t) {
                        format!("wave {} did not finish within its timeout", wave.name)
                    } else {
                        "the drain's --timeout passed".to_string()
                    };
                    return self.outcome(NodeStatus::TimedOut, Some(which), was_cordoned);
                }
                End::Interrupted => {
                    return self.outcome(NodeStatus::Interrupted, None, was_cordoned);
                }
                End::Failed(msg) => {
                    return self.outcome(NodeStatus::Failed, Some(msg), was_cordoned);
                }
            }
        }
        self.outcome(NodeStatus::Drained, None, was_cordoned)
    }

    fn wave_done(&self, wi: usize) -> bool {
        self.members
            .values()
            .filter(|m| m.wave <= wi)
            .all(Member::done)
    }

    async fn run_wave(
        &mut self,
        wi: usize,
        watch: &mut PodWatch,
        deadline: Option<Instant>,
    ) -> End {
        let mut queue: VecDeque<String> = self
            .members
            .iter()
            .filter(|(_, m)| m.wave == wi && matches!(m.state, State::Queued))
            .map(|(k, _)| k.clone())
            .collect();
        let mut inflight = FuturesUnordered::new();
        let mut pdb_changes = self.engine.pdbs.subscribe();
        let mut interrupt = self.engine.interrupt.clone();
        let deadline = deadline.unwrap_or_else(far_future);
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            if self.wave_done(wi) {
                return End::Done;
            }
            if *interrupt.borrow() {
                return End::Interrupted;
            }
            while inflight.len() < IN_FLIGHT {
                let Some(key) = queue.pop_front() else { break };
                let Some(m) = self.members.get_mut(&key) else {
                    continue;
                };
                if !matches!(m.state, State::Queued | State::Blocked { .. }) {
                    continue;
                }
                m.state = State::InFlight;
                let (ns, name) = key.split_once('/').expect("ns/name");
                let (ns, name, pod_uid) =
                    (ns.to_string(), name.to_string(), uid(&m.pod).to_string());
                let client = self.engine.clients.evict.clone();
                let slots = self.engine.slots.clone();
                let grace_period = self.engine.options.grace_period;
                let delete = self.engine.options.disable_eviction;
                let launcher = super::kubevirt::vmi_name(&m.pod).map(|_| m.pod.clone());
                let main = self.engine.clients.main.clone();
                inflight.push(async move {
                    let _permit = slots.acquire_owned().await;
                    let answer = evict::send(
                        &client,
                        &evict::Request {
                            namespace: &ns,
                            name: &name,
                            uid: &pod_uid,
                            grace_period,
                            dry_run: false,
                            delete,
                        },
                    )
                    .await;
                    // A refused VM pod: is KubeVirt evacuating it?
                    let vm = match (&answer, &launcher) {
                        (Answer::PdbBlocked { .. }, Some(pod)) => {
                            super::kubevirt::evacuation(&main, pod).await
                        }
                        _ => None,
                    };
                    (key, pod_uid, answer, vm)
                });
            }
            let next_retry = self
                .members
                .values()
                .filter_map(|m| match &m.state {
                    State::Blocked { retry_at, .. } if m.wave <= wi => *retry_at,
                    _ => None,
                })
                .min()
                .unwrap_or_else(far_future);
            tokio::select! {
                Some((key, pod_uid, answer, vm)) = inflight.next(), if !inflight.is_empty() => {
                    if let Some(msg) = self.on_answer(&key, &pod_uid, answer, vm) {
                        return End::Failed(msg);
                    }
                }
                change = watch.next() => match change {
                    Some(c) => self.on_change(c),
                    None => return End::Failed("the pod watch ended".into()),
                },
                msg = pdb_changes.recv() => match msg {
                    Ok(key) => self.on_budget(&key, wi, &mut queue),
                    Err(RecvError::Lagged(_)) => {
                        for (k, m) in &self.members {
                            if m.wave <= wi && matches!(m.state, State::Blocked { pdb: Some(_), .. }) {
                                queue.push_back(k.clone());
                            }
                        }
                    }
                    Err(RecvError::Closed) => {}
                },
                () = tokio::time::sleep_until(next_retry) => {
                    let now = Instant::now();
                    for (k, m) in &self.members {
                        if let State::Blocked { retry_at: Some(at), .. } = &m.state
                            && *at <= now
                            && m.wave <= wi
                        {
                            queue.push_back(k.clone());
                        }
                    }
                }
                () = tokio::time::sleep_until(deadline) => return End::TimedOut,
                _ = interrupt.changed() => return End::Interrupted,
                _ = tick.tick() => self.expire_long_deletions(),
            }
        }
    }

    /// `--skip-wait-for-delete-timeout`: a pod terminating longer than that counts as gone.
    fn expire_long_deletions(&mut self) {
        let limit = self.engine.classifier.flags.skip_wait_for_delete_timeout;
        if limit == 0 {
            return;
        }
        let now = Timestamp::now().as_second();
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

    fn on_answer(
        &mut self,
        key: &str,
        pod_uid: &str,
        answer: Answer,
        vm: Option<Cause>,
    ) -> Option<String> {
        let ns = key
            .split_once('/')
            .map(|(n, _)| n.to_string())
            .unwrap_or_default();
        let node = self.node.clone();
        // An evacuating VM is progress, not a block by its budget.
        let cause = vm.or_else(|| self.blocked_cause(&ns, answer.clone()));
        let pdbs = self.engine.pdbs.clone();
        let events = self.engine.events.clone();
        let m = self.members.get_mut(key)?;
        if uid(&m.pod) != pod_uid || m.done() {
            return None;
        }
        let now = Instant::now();
        match answer {
            Answer::Accepted => {
                m.evicted = true;
                m.attempts = 0;
                if !matches!(m.state, State::Done(_)) {
                    m.state = State::Terminating;
                }
                emit(
                    &events,
                    Event::Evicted {
                        node,
                        pod: key.to_string(),
                    },
                );
            }
            Answer::Gone => {
                m.state = State::Done(if m.evicted {
                    PodResult::Evicted
                } else {
                    PodResult::GoneByItself
                });
                emit(
                    &events,
                    Event::PodGone {
                        node,
                        pod: key.to_string(),
                    },
                );
            }
            Answer::PdbBlocked {
                pdb, retry_after, ..
            } => {
                let pkey = (ns, pdb);
                pdbs.ensure(&pkey);
                let cause = cause.expect("blocked");
                m.attempts = 0;
                let retry = Some(now + retry_after.unwrap_or(FALLBACK_RETRY));
                if m.block(cause.clone(), retry, Some(pkey)) {
                    let pod = key.to_string();
                    emit(
                        &events,
                        Event::Blocked {
                            node,
                            pod,
                            cause: cause.summary(),
                        },
                    );
                }
            }
            Answer::MultiplePdbs(_) => {
                let cause = cause.expect("blocked");
                if m.block(cause.clone(), Some(now + FALLBACK_RETRY), None) {
                    let pod = key.to_string();
                    emit(
                        &events,
                        Event::Blocked {
                            node,
                            pod,
                            cause: cause.summary(),
                        },
                    );
                }
            }
            Answer::Retry {
                retry_after,
                message,
            } => {
                m.attempts += 1;
                let cause = Cause::ApiError {
                    message: message.clone(),
                };
                if m.attempts > MAX_API_ATTEMPTS {
                    m.block(cause, None, None);
                    return Some(format!(
                        "evicting {key} failed {MAX_API_ATTEMPTS} times: {message}"
                    ));
                }
                let backoff = Duration::from_millis(200 * (1 << m.attempts.min(6)))
                    .min(Duration::from_secs(10));
                m.block(cause, Some(now + retry_after.unwrap_or(backoff)), None);
                emit(&events, Event::ApiTrouble { node, message });
            }
            Answer::Forbidden(message) => {
                let verb = if self.engine.options.disable_eviction {
                    "delete pods"
                } else {
                    "create pods/eviction"
                };
                m.block(
                    Cause::Forbidden {
                        message: message.clone(),
                    },
                    None,
                    None,
                );
                return Some(format!(
                    "not allowed to {verb} in namespace {ns}: {message}"
                ));
            }
            Answer::Failed(message) => {
                m.block(
                    Cause::ApiError {
                        message: message.clone(),
                    },
                    None,
                    None,
                );
                return Some(format!("evicting {key}: {message}"));
            }
        }
        None
    }

    fn on_change(&mut self, change: Change) {
        match change {
            Change::Gone { key, uid: gone } => {
                if let Some(m) = self.members.get_mut(&key)
                    && uid(&m.pod) == gone
                    && !m.done()
                {
                    m.state = State::Done(match m.state {
                        State::Waiting(_) => PodResult::Completed,
                        _ if m.evicted => PodResult::Evicted,
                        _ => PodResult::GoneByItself,
                    });
                    emit(
                        &self.engine.events,
                        Event::PodGone {
                            node: self.node.clone(),
                            pod: key,
                        },
                    );
                }
            }
            Change::Upsert(pod) => {
                let key = pod_key(&pod);
                match self.members.get_mut(&key) {
                    Some(m) if uid(&m.pod) == uid(&pod) => {
                        let finished = matches!(
                            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                            Some("Succeeded" | "Failed")
                        );
                        m.pod = *pod;
                        if finished && matches!(m.state, State::Waiting(_)) {
                            m.state = State::Done(PodResult::Completed);
                            emit(
                                &self.engine.events,
                                Event::PodGone {
                                    node: self.node.clone(),
                                    pod: key,
                                },
                            );
                        }
                    }
                    Some(m) if !m.done() => {}
                    _ => {
                        // A pod that arrived after the drain began: one that
                        // tolerates the cordon, or a StatefulSet's pod recreated
                        // under the same name. It would come back if evicted,
                        // as kubectl drain knows: it is reported, not chased.
                        let listed = self.others.iter().any(|o| {
                            o.pod == key
                                && matches!(
                                    o.result,
                                    PodResult::Skipped {
                                        reason: SkipReason::ArrivedDuringDrain
                                    }
                                )
                        });
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
            Change::Error(message) => emit(
                &self.engine.events,
                Event::ApiTrouble {
                    node: self.node.clone(),
                    message,
                },
            ),
        }
    }

    fn on_budget(&mut self, key: &pdb_watch::Key, wi: usize, queue: &mut VecDeque<String>) {
        let Some(budget) = self.engine.pdbs.get(key) else {
            return;
        };
        let mut allowed = budget.disruptions_allowed.max(0) as usize;
        let keys: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| matches!(&m.state, State::Blocked { pdb: Some(p), .. } if p == key))
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            let m = self.members.get_mut(&k).expect("member");
            if let State::Blocked {
                cause: Cause::Pdb { message, .. },
                ..
            } = &m.state
            {
                let message = message.clone();
                let refreshed = Cause::Pdb {
                    name: key.1.clone(),
                    disruptions_allowed: Some(budget.disruptions_allowed),
                    current_healthy: Some(budget.current_healthy),
                    desired_healthy: Some(budget.desired_healthy),
                    expected_pods: Some(budget.expected_pods),
                    message,
                };
                if let State::Blocked { cause, .. } = &mut m.state
                    && cause.summary() != refreshed.summary()
                {
                    emit(
                        &self.engine.events,
                        Event::Blocked {
                            node: self.node.clone(),
                            pod: k.clone(),
                            cause: refreshed.summary(),
                        },
                    );
                    *cause = refreshed;
                }
            }
            // Retry only as many pods as the budget now allows.
            if allowed > 0 && m.wave <= wi {
                allowed -= 1;
                queue.push_back(k);
            }
        }
    }
}

fn terminating_cause(pod: &Pod, now: Timestamp) -> Cause {
    let grace = pod.metadata.deletion_grace_period_seconds;
    // deletionTimestamp is when the grace period ends.
    let deadline = pod
        .metadata
        .deletion_timestamp
        .as_ref()
        .map(|t| t.0.as_second());
    let seconds = match (deadline, grace) {
        (Some(d), Some(g)) => now.as_second() - (d - g),
        _ => 0,
    };
    let finalizers = pod.metadata.finalizers.clone().unwrap_or_default();
    let past = deadline.is_some_and(|d| now.as_second() > d);
    if past && !finalizers.is_empty() {
        return Cause::Finalizers { finalizers };
    }
    Cause::Terminating {
        seconds,
        grace_period_seconds: grace,
    }
}
