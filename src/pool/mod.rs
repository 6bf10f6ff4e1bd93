//! One runner for every pool of nodes, knowing neither drain nor roll: it
//! takes the groups (the order, `--by-zone`), the room (`room`:
//! `--max-parallel`, `--max-unavailable`, `--max-blocked-nodes`, quorum),
//! the gate (`gate`: `--announce`, `--window`, `--block-on-alerts`), a
//! Job's abort (`abort_watch`) and a driver: which node next among the
//! waiting (a drain weighs the budgets they share), the node's own check
//! before it starts (a roll's lock), and its job. Holds are said once and
//! recorded (`hold_log`), the count of nodes kept (`progress`), every
//! node's start and end told to the listeners, whom `observers` turns into
//! notifications and metrics for both verbs. `followed` wraps either
//! verb's run in its followers (the publisher, the observers, the
//! client's retries on screen: `retries_told`).

pub(crate) mod abort_watch;
pub(crate) mod alerts;
pub(crate) mod followed;
pub(crate) mod gate;
pub(crate) mod hold_log;
pub(crate) mod node_watch;
pub(crate) mod observers;
pub(crate) mod progress;
pub(crate) mod retries_told;
pub(crate) mod room;
pub(crate) mod unattended;

use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use futures::future::{Join, Ready, join, ready};
use futures::stream::FuturesUnordered;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::vocabulary::DrainError;
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::job_status::JobStatus;
use crate::vocabulary::warning::Warning;
use abort_watch::AbortWatch;
use gate::{Gate, Open};
use hold_log::HoldLog;
use node_watch::Nodes;
use progress::Progress;
use room::{HoldBack, Room, hold_back};

/// How often a node whose own check said "later" is tried again.
const LATER_RETRY: Duration = Duration::from_secs(1);
/// How long a change of the nodes waits for those that come with it.
const COALESCE: Duration = Duration::from_millis(200);

/// What a node's own check says before it starts.
pub(crate) enum Admit<S, O> {
    /// Start its job with this.
    Start(S),
    /// It needs no job: done already (by an earlier run), with this result.
    Done(O),
    /// Not now, and why (another run holds its lock), said once per
    /// `once`: the next node goes first, and this one is tried again in a
    /// while.
    Later { once: String, why: String },
}

/// How a node's job ended, as the runner counts and tells it.
pub(crate) struct Ended {
    /// How it ended; done and blocked (counted against
    /// `--max-blocked-nodes`) are the status's to say.
    pub(crate) status: JobStatus,
    pub(crate) message: Option<String>,
    /// Cordon to uncordon, for a node put back in service.
    pub(crate) out_of_service_ms: Option<u64>,
    /// Said as the node's last line (a roll's; a drained node's report
    /// line is its own).
    pub(crate) line: bool,
}

/// What the runner needs of a verb.
pub(crate) trait Driver {
    /// The command, as a stop is said (`drain stopped: …`).
    const VERB: &'static str;
    /// What a node's job starts with.
    type Start;
    /// A node's result.
    type Out;
    fn name(&self, node: usize) -> &str;
    /// Which of `waiting` (the first few, in order) to try first, as its
    /// position: the order unless the driver knows better.
    fn choose(&mut self, waiting: &[usize]) -> usize {
        let _ = waiting;
        0
    }
    /// The node's own check, once the room and the gate let it go.
    async fn admit(&mut self, node: usize) -> Result<Admit<Self::Start, Self::Out>, DrainError>;
    /// The result of a node that needs no slot, its job done now (a drain's
    /// node that kubectl's filters refuse, when every node was cordoned
    /// first: it ends at its start, and waiting for a slot only showed it
    /// as work to come). Asked of every node as its group begins.
    async fn at_once(&mut self, node: usize) -> Option<Self::Out> {
        let _ = node;
        None
    }
    fn ended(&self, out: &Self::Out) -> Ended;
    /// The result of a node never started: interrupted, or the run
    /// stopped taking nodes.
    fn not_started(
        &mut self,
        node: usize,
        interrupted: bool,
        stopped: Option<&Stopped>,
    ) -> Self::Out;
}

/// Why the run took no more nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// Nothing of the run is in progress, and this node still cannot go.
    CannotTakeOut { node: String, hold: HoldBack },
    /// More nodes were blocked than `--max-blocked-nodes` allows.
    TooManyBlocked { blocked: usize, max: usize },
    /// `kubectl maintain abort` asked (when, by whom).
    Aborted { asked: String },
}

/// Where a run's nodes say what they do: lines with the pool's count, and
/// holds, timed from the run's start.
pub(crate) struct Tell {
    pub(crate) events: Sink,
    pub(crate) progress: Progress,
    pub(crate) holds: HoldLog,
    pub(crate) started: Instant,
}

impl Tell {
    pub(crate) fn new(events: Sink, total: usize) -> Self {
        Tell {
            events,
            progress: Progress::new(total),
            holds: HoldLog::default(),
            started: Instant::now(),
        }
    }

    /// A node's phase on screen, with the pool's count.
    pub(crate) fn say(&self, node: &str, phase: &str, detail: String) {
        self.line(node, phase, detail, false);
    }

    fn line(&self, node: &str, phase: &str, detail: String, last: bool) {
        emit(
            &self.events,
            Event::Phase {
                node: node.to_string(),
                phase: phase.to_string(),
                detail,
                pool: self.progress.summary(),
                last,
            },
        );
    }

    fn ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The run (no node) or a node's hook holds, for this reason.
    pub(crate) fn hold(&self, node: Option<&str>, what: &str, reason: &str) {
        self.holds
            .begin(&self.events, node, what, reason, self.ms());
    }

    pub(crate) fn hold_ended(&self, node: Option<&str>, what: &str) {
        self.holds.end(&self.events, node, what, self.ms());
    }

    /// Every hold of the run, for its report.
    pub(crate) fn hold_records(&self) -> Vec<hold_log::HoldRecord> {
        self.holds.records(self.ms())
    }
}

/// What the runner weighs besides the driver.
pub(crate) struct Runner<'a> {
    pub(crate) room: Room,
    /// Every node, watched, when the room reads them.
    pub(crate) nodes: Option<&'a Nodes>,
    pub(crate) gate: &'a Gate,
    pub(crate) abort: &'a AbortWatch,
    pub(crate) tell: &'a Tell,
}

/// A node's job, with the node's index.
type Tagged<F> = Join<Ready<usize>, F>;

/// The run as it takes nodes.
struct Taking<O> {
    results: Vec<(usize, O)>,
    blocked: usize,
    stopped: Option<Stopped>,
    /// What was said, once each.
    said: BTreeSet<String>,
    /// The gate's hold now, and when to look again.
    gated: Option<(&'static str, Duration)>,
    /// The run's nodes out of service now.
    out: BTreeSet<String>,
}

impl Runner<'_> {
    /// Runs `job` on every node of `groups` (each group finished before
    /// the next starts), as the room, the gate, an abort and the driver
    /// allow; stops on Ctrl-C (`interrupt`), the nodes not started
    /// reported by the driver, and why the run stopped taking nodes said
    /// as a warning. The nodes' results, by the driver's index, in the
    /// order they ended.
    pub(crate) async fn run<D, J, F>(
        &self,
        driver: &mut D,
        groups: Vec<Vec<usize>>,
        interrupt: &watch::Receiver<bool>,
        mut job: J,
    ) -> Result<Vec<(usize, D::Out)>, DrainError>
    where
        D: Driver,
        J: FnMut(usize, D::Start) -> F,
        F: Future<Output = D::Out>,
    {
        let mut st = Taking {
            results: Vec::new(),
            blocked: 0,
            stopped: None,
            said: BTreeSet::new(),
            gated: None,
            out: BTreeSet::new(),
        };
        // One receiver for the whole run: a clone taken at each wait would
        // see the same change again and again, and spin once interrupted.
        let mut interrupted = interrupt.clone();
        let mut hears = true;
        for group in groups {
            let mut pending = VecDeque::with_capacity(group.len());
            for i in group {
                match driver.at_once(i).await {
                    Some(out) => self.ended(driver, &mut st, i, out),
                    None => pending.push_back(i),
                }
            }
            let mut running = FuturesUnordered::new();
            loop {
                // Asked for before the nodes are read: no change is missed.
                let changed = self.nodes.map(Nodes::changed);
                let later = self
                    .fill(
                        driver,
                        &mut st,
                        &mut pending,
                        interrupt,
                        &mut running,
                        &mut job,
                    )
                    .await?;
                if running.is_empty()
                    && (pending.is_empty() || st.stopped.is_some() || *interrupt.borrow())
                {
                    break;
                }
                // Wait for a node to finish, a node to change (room in the
                // pool), a node's check or the gate to be worth trying again.
                let gate_again = st.gated.map(|(_, again)| again);
                let changed = async {
                    match changed {
                        Some(c) => c.await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    Some((i, out)) = running.next(), if !running.is_empty() => {
                        self.ended(driver, &mut st, i, out);
                    }
                    // Only a node still to take out cares about the others.
                    () = changed, if !pending.is_empty() => {
                        // Many nodes change at once (status heartbeats): look
                        // once for all of them, the jobs going on meanwhile
                        // (they run only while polled here).
                        let look = tokio::time::sleep(COALESCE);
                        tokio::pin!(look);
                        loop {
                            tokio::select! {
                                Some((i, out)) = running.next(), if !running.is_empty() => {
                                    self.ended(driver, &mut st, i, out);
                                }
                                () = &mut look => break,
                            }
                        }
                    }
                    () = tokio::time::sleep(LATER_RETRY), if later => {}
                    () = tokio::time::sleep(gate_again.unwrap_or_default()), if gate_again.is_some() => {}
                    heard = interrupted.changed(), if hears && !*interrupt.borrow() => {
                        hears = heard.is_ok();
                    }
                }
            }
            let was_interrupted = *interrupt.borrow();
            for i in pending {
                let out = driver.not_started(i, was_interrupted, st.stopped.as_ref());
                st.results.push((i, out));
            }
        }
        if let Some(why) = &st.stopped {
            let warning = Warning::RunStopped {
                verb: D::VERB,
                why: why.to_string(),
            };
            emit(&self.tell.events, Event::Warning(warning));
        }
        Ok(st.results)
    }

    /// Starts, in the driver's order, the pending nodes the room, the gate,
    /// an abort and their own check allow now. Says whether a node's check
    /// said "later".
    async fn fill<D, J, F>(
        &self,
        driver: &mut D,
        st: &mut Taking<D::Out>,
        pending: &mut VecDeque<usize>,
        interrupt: &watch::Receiver<bool>,
        running: &mut FuturesUnordered<Tagged<F>>,
        job: &mut J,
    ) -> Result<bool, DrainError>
    where
        D: Driver,
        J: FnMut(usize, D::Start) -> F,
        F: Future<Output = D::Out>,
    {
        let (mut later, mut tried) = (false, 0);
        let stop = |st: &Taking<D::Out>| st.stopped.is_some() || *interrupt.borrow();
        if pending.is_empty() || stop(st) {
            return Ok(later);
        }
        let all = self.nodes.map(Nodes::all).unwrap_or_default();
        let mut gate_checked = false;
        while !stop(st) && tried < pending.len() {
            let ahead = crate::policy::pool::lookahead(self.room.max_parallel).min(pending.len());
            let pos = driver.choose(&pending.make_contiguous()[..ahead]);
            let i = pending[pos];
            let name = driver.name(i).to_string();
            if let Some(hold) = hold_back(&self.room, &all, &st.out, running.len(), &name) {
                self.held_back(st, &name, hold, running.is_empty());
                break;
            }
            if !gate_checked {
                gate_checked = true;
                if !self.gate_open(st, &name).await {
                    break;
                }
            }
            if let Some(asked) = self.abort.asked(&self.tell.events).await {
                st.stopped = Some(Stopped::Aborted { asked });
                break;
            }
            match driver.admit(i).await? {
                Admit::Later { once, why } => {
                    if st.said.insert(format!("{name}: {once}")) {
                        self.tell.say(&name, "waiting", why);
                    }
                    later = true;
                    pending.remove(pos);
                    pending.push_back(i);
                    tried += 1;
                }
                Admit::Done(out) => {
                    pending.remove(pos);
                    tried = 0;
                    self.tell.progress.done_before();
                    st.results.push((i, out));
                }
                Admit::Start(start) => {
                    pending.remove(pos);
                    tried = 0;
                    self.tell.progress.started(&name);
                    st.out.insert(name);
                    running.push(join(ready(i), job(i, start)));
                }
            }
        }
        Ok(later)
    }

    /// Does the gate (`--announce`, `--window`, `--block-on-alerts`) let
    /// the next node start? A hold is said once per reason, and recorded.
    async fn gate_open<O>(&self, st: &mut Taking<O>, next: &str) -> bool {
        match self.gate.check().await {
            Open::Yes => {
                if let Some((what, _)) = st.gated.take() {
                    self.tell.hold_ended(None, what);
                }
                true
            }
            Open::No {
                what,
                reason,
                again_in,
            } => {
                if let Some((before, _)) = st.gated
                    && before != what
                {
                    self.tell.hold_ended(None, before);
                }
                st.gated = Some((what, again_in));
                self.tell.hold(None, what, &reason);
                if st.said.insert(reason.clone()) {
                    self.tell.say(next, "waiting", reason);
                }
                false
            }
        }
    }

    /// The next node cannot go yet: said once per reason; with nothing in
    /// progress and a hold that cannot end by itself, it never will, and
    /// the run stops.
    fn held_back<O>(&self, st: &mut Taking<O>, node: &str, hold: HoldBack, nothing_out: bool) {
        if nothing_out && !hold.ends_by_itself() {
            st.stopped = Some(Stopped::CannotTakeOut {
                node: node.to_string(),
                hold,
            });
            return;
        }
        let why = hold.to_string();
        if st.said.insert(why.clone()) {
            self.tell.say(node, "waiting", why);
        }
    }

    /// A node's job ended: counted, told; too many blocked stop the run.
    fn ended<D: Driver>(&self, driver: &D, st: &mut Taking<D::Out>, i: usize, out: D::Out) {
        let ended = driver.ended(&out);
        let node = driver.name(i).to_string();
        if !self.room.done_stays_out {
            st.out.remove(&node);
        }
        self.tell.progress.ended(&node, ended.status.done());
        if ended.line {
            let detail = ended.message.clone().unwrap_or_default();
            self.tell.line(&node, ended.status.as_str(), detail, true);
        }
        emit(
            &self.tell.events,
            Event::NodeEnded {
                node,
                status: ended.status,
                message: ended.message,
                out_of_service_ms: ended.out_of_service_ms,
            },
        );
        if ended.status.blocked() {
            st.blocked += 1;
            let max = self.room.max_blocked;
            if crate::policy::pool::stops(st.blocked, max) {
                st.stopped = Some(Stopped::TooManyBlocked {
                    blocked: st.blocked,
                    max: max.unwrap_or_default(),
                });
            }
        }
        st.results.push((i, out));
    }
}

#[cfg(test)]
mod tests;
