//! The runner's choices, without a server: jobs are futures the test ends.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use tokio::sync::{mpsc, oneshot, watch};

use super::*;
use crate::pool::unattended::Unattended;

/// Nodes `n0..`; what each job ends with is sent by the test.
struct Fake {
    names: Vec<String>,
    /// Positions `choose` returns, in turn (then the order).
    choices: VecDeque<usize>,
    /// Nodes whose check says "later" the first time.
    later_once: BTreeSet<usize>,
    /// Nodes done by an earlier run.
    done_before: BTreeSet<usize>,
    started: Rc<RefCell<Vec<usize>>>,
}

impl Fake {
    fn new(n: usize) -> Self {
        Fake {
            names: (0..n).map(|i| format!("n{i}")).collect(),
            choices: VecDeque::new(),
            later_once: BTreeSet::new(),
            done_before: BTreeSet::new(),
            started: Rc::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Out {
    Done,
    Blocked,
    DoneBefore,
    NotStarted(bool, Option<Stopped>),
}

impl Driver for Fake {
    const VERB: &'static str = "test";
    type Start = ();
    type Out = Out;

    fn name(&self, node: usize) -> &str {
        &self.names[node]
    }

    fn choose(&mut self, waiting: &[usize]) -> usize {
        self.choices.pop_front().unwrap_or(0).min(waiting.len() - 1)
    }

    async fn admit(&mut self, node: usize) -> Result<Admit<(), Out>, DrainError> {
        if self.later_once.remove(&node) {
            return Ok(Admit::Later {
                once: "other".into(),
                why: "locked by other".into(),
            });
        }
        if self.done_before.contains(&node) {
            return Ok(Admit::Done(Out::DoneBefore));
        }
        self.started.borrow_mut().push(node);
        Ok(Admit::Start(()))
    }

    fn ended(&self, out: &Out) -> Ended {
        let status = match out {
            Out::Done => JobStatus::Done,
            Out::Blocked => JobStatus::Blocked,
            Out::DoneBefore => JobStatus::DoneBefore,
            Out::NotStarted(..) => JobStatus::NotStarted,
        };
        Ended {
            status,
            message: None,
            out_of_service_ms: None,
            line: false,
        }
    }

    fn not_started(&mut self, _: usize, interrupted: bool, stopped: Option<&Stopped>) -> Out {
        Out::NotStarted(interrupted, stopped.cloned())
    }
}

fn room(max_parallel: usize, max_blocked: Option<usize>) -> Room {
    Room {
        max_parallel,
        max_unavailable: None,
        max_blocked,
        keep_quorum: false,
        keep_a_schedulable_node: false,
        done_stays_out: false,
    }
}

/// Runs `fake` over `groups`; each job waits for the test's word, sent on
/// the receiver's side in the order jobs started.
struct Harness {
    gate: Gate,
    abort: AbortWatch,
    tell: Tell,
    events: mpsc::UnboundedReceiver<Event>,
}

impl Harness {
    fn new(total: usize) -> Self {
        let (tx, events) = mpsc::unbounded_channel();
        Harness {
            gate: Unattended::default().gate(),
            abort: AbortWatch::none(),
            tell: Tell::new(tx, total),
            events,
        }
    }

    fn runner(&self, room: Room) -> Runner<'_> {
        Runner {
            room,
            nodes: None,
            gate: &self.gate,
            abort: &self.abort,
            tell: &self.tell,
        }
    }

    /// The warnings told, in words.
    fn warnings(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            if let Event::Warning(w) = e {
                out.push(w.to_string());
            }
        }
        out
    }

    fn lines(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            if let Event::Phase { node, detail, .. } = e {
                out.push(format!("{node}: {detail}"));
            }
        }
        out
    }
}

/// Jobs that end when told, each with its result; how many ran at once at
/// most.
struct Jobs {
    ends: RefCell<BTreeMap<usize, oneshot::Sender<Out>>>,
    running: RefCell<usize>,
    most: RefCell<usize>,
}

impl Jobs {
    fn new() -> Rc<Self> {
        Rc::new(Jobs {
            ends: RefCell::default(),
            running: RefCell::new(0),
            most: RefCell::new(0),
        })
    }

    fn job(self: &Rc<Self>, i: usize) -> impl Future<Output = Out> + use<> {
        let (tx, rx) = oneshot::channel();
        self.ends.borrow_mut().insert(i, tx);
        *self.running.borrow_mut() += 1;
        let most = (*self.most.borrow()).max(*self.running.borrow());
        *self.most.borrow_mut() = most;
        let me = self.clone();
        async move {
            let out = rx.await.unwrap_or(Out::Blocked);
            *me.running.borrow_mut() -= 1;
            out
        }
    }

    /// Ends every running job with `out`, in the order they started, as
    /// they come, until none is left.
    async fn end_all(self: Rc<Self>, out: impl Fn(usize) -> Out) {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let first = self.ends.borrow_mut().pop_first();
            match first {
                Some((i, tx)) => {
                    let _ = tx.send(out(i));
                }
                None if *self.running.borrow() == 0 => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    if self.ends.borrow().is_empty() {
                        return;
                    }
                }
                None => {}
            }
        }
    }
}

/// Runs `fake` over `groups` in `room`, every job ending with `out`.
async fn run_all(
    h: &Harness,
    fake: &mut Fake,
    room: Room,
    groups: Vec<Vec<usize>>,
    out: impl Fn(usize) -> Out,
) -> (Vec<(usize, Out)>, Rc<Jobs>) {
    let jobs = Jobs::new();
    let (_tx, interrupt) = watch::channel(false);
    let runner = h.runner(room);
    let run = runner.run(fake, groups, &interrupt, |i, ()| jobs.job(i));
    let (ran, ()) = tokio::join!(run, jobs.clone().end_all(out));
    (ran.unwrap(), jobs)
}

fn by_node<O>(ran: Vec<(usize, O)>) -> Vec<(usize, O)> {
    let mut r = ran;
    r.sort_by_key(|(i, _)| *i);
    r
}

#[tokio::test(start_paused = true)]
async fn nodes_start_in_the_drivers_order_within_the_slots() {
    let h = Harness::new(5);
    let mut fake = Fake::new(5);
    // The driver prefers the third waiting node, then the order.
    fake.choices = VecDeque::from([2]);
    let started = fake.started.clone();
    let (ran, jobs) = run_all(&h, &mut fake, room(2, None), vec![(0..5).collect()], |_| {
        Out::Done
    })
    .await;
    let results = by_node(ran);
    assert_eq!(results.len(), 5);
    assert!(results.iter().all(|(_, o)| *o == Out::Done));
    assert_eq!(*started.borrow(), [2, 0, 1, 3, 4]);
    assert_eq!(*jobs.most.borrow(), 2);
    assert_eq!(h.tell.progress.summary(), "pool: 5/5 done, 0 in progress");
}

#[tokio::test(start_paused = true)]
async fn groups_finish_one_before_the_next() {
    let h = Harness::new(4);
    let mut fake = Fake::new(4);
    let started = fake.started.clone();
    let groups = vec![vec![3, 1], vec![0, 2]];
    let (_, jobs) = run_all(&h, &mut fake, room(4, None), groups, |_| Out::Done).await;
    assert_eq!(*started.borrow(), [3, 1, 0, 2]);
    // Four slots, yet a group at a time.
    assert_eq!(*jobs.most.borrow(), 2);
}

#[tokio::test(start_paused = true)]
async fn too_many_blocked_nodes_stop_the_run() {
    let mut h = Harness::new(4);
    let mut fake = Fake::new(4);
    let all = vec![(0..4).collect()];
    let (ran, _) = run_all(&h, &mut fake, room(1, Some(0)), all, |_| Out::Blocked).await;
    let stopped = Stopped::TooManyBlocked { blocked: 1, max: 0 };
    assert_eq!(h.warnings(), [format!("test stopped: {stopped}")]);
    let results = by_node(ran);
    assert_eq!(results[0].1, Out::Blocked);
    for (_, out) in &results[1..] {
        assert_eq!(*out, Out::NotStarted(false, Some(stopped.clone())));
    }
}

#[tokio::test(start_paused = true)]
async fn a_node_said_later_goes_after_the_next_and_done_nodes_need_no_job() {
    let mut h = Harness::new(3);
    let mut fake = Fake::new(3);
    fake.later_once.insert(0);
    fake.done_before.insert(2);
    let started = fake.started.clone();
    let all = vec![(0..3).collect()];
    let (ran, _) = run_all(&h, &mut fake, room(1, None), all, |_| Out::Done).await;
    let results = by_node(ran);
    assert_eq!(*started.borrow(), [1, 0]);
    assert_eq!(results[2].1, Out::DoneBefore);
    assert_eq!(
        h.lines(),
        [
            "n0: locked by other",
            "n2: for a free slot (1 node in progress, --max-parallel 1)"
        ]
    );
    assert_eq!(h.tell.progress.summary(), "pool: 3/3 done, 0 in progress");
}

#[tokio::test(start_paused = true)]
async fn an_interrupt_leaves_the_waiting_nodes_not_started() {
    let h = Harness::new(3);
    let mut fake = Fake::new(3);
    let jobs = Jobs::new();
    let (tx, interrupt) = watch::channel(false);
    let runner = h.runner(room(1, None));
    let run = runner.run(&mut fake, vec![(0..3).collect()], &interrupt, |i, ()| {
        jobs.job(i)
    });
    let stop = async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        tx.send(true).unwrap();
        jobs.clone().end_all(|_| Out::Done).await;
    };
    let (ran, ()) = tokio::join!(run, stop);
    let results = by_node(ran.unwrap());
    assert_eq!(results[0].1, Out::Done);
    assert_eq!(results[1].1, Out::NotStarted(true, None));
    assert_eq!(results[2].1, Out::NotStarted(true, None));
}

#[tokio::test(start_paused = true)]
async fn a_slot_wait_is_said_once() {
    let mut h = Harness::new(3);
    let mut fake = Fake::new(3);
    let all = vec![(0..3).collect()];
    run_all(&h, &mut fake, room(1, None), all, |_| Out::Done).await;
    assert_eq!(
        h.lines(),
        ["n1: for a free slot (1 node in progress, --max-parallel 1)"]
    );
}
