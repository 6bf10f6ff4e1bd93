//! Which node goes next: in the roll's order, as far as the pool's room
//! (`--max-parallel`, `--max-unavailable`, quorum, a schedulable node left)
//! and the per-node locks allow, read from the roll's watch of the nodes;
//! woken when a node's roll ends, a node changes, or a lock another run
//! holds is worth trying again.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use k8s_openapi::api::core::v1::Node;
use tokio::sync::watch;

use super::gate::Open;
use super::lease::{Lock, Locks, Taken};
use super::outcome::{NodeRoll, RollStatus};
use super::phase::{self, Phase};
use super::{Ctx, RollOptions, node};
use crate::drain::DrainError;
use crate::drain::events::{Event, emit};
use crate::policy::guard::{self, MaxUnavailable};
use crate::policy::pool;

/// How often a lock another holder has is tried again.
const LOCK_RETRY: Duration = Duration::from_secs(1);
/// How long a change of the nodes waits for those that come with it.
const COALESCE: Duration = Duration::from_millis(200);

/// Why the next node cannot start yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HoldBack {
    /// Taking it out would lose etcd's quorum.
    Quorum(guard::Refusal),
    /// Taking it out would leave no schedulable node.
    NoSchedulableNode,
    /// Every slot `--max-parallel` gives is taken.
    NoFreeSlot {
        in_progress: usize,
        max_parallel: usize,
    },
    /// `--max-unavailable` counts enough nodes out already.
    MaxUnavailable {
        unavailable: usize,
        nodes: usize,
        allows: usize,
    },
}

impl HoldBack {
    /// With no node of this roll in progress, can the hold still end by
    /// itself (nodes out for other reasons coming back)? When not, the
    /// node never can be taken out and the roll stops.
    pub(crate) fn ends_by_itself(&self) -> bool {
        matches!(self, HoldBack::MaxUnavailable { .. })
    }
}

impl std::fmt::Display for HoldBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HoldBack::Quorum(why) => write!(f, "{why} (--allow-quorum-loss overrides)"),
            HoldBack::NoSchedulableNode => f.write_str(
                "taking it out would leave no schedulable node (--allow-no-schedulable-nodes overrides)",
            ),
            HoldBack::NoFreeSlot {
                in_progress,
                max_parallel,
            } => write!(
                f,
                "for a free slot ({in_progress} nodes in progress, --max-parallel {max_parallel})"
            ),
            HoldBack::MaxUnavailable {
                unavailable,
                nodes,
                allows,
            } => write!(
                f,
                "{unavailable} of {nodes} nodes are unavailable; --max-unavailable allows {allows}"
            ),
        }
    }
}

/// What the choice of the next node weighs of the roll's options.
#[derive(Debug, Clone, Copy)]
struct Limits {
    max_parallel: usize,
    max_unavailable: Option<MaxUnavailable>,
    allow_quorum_loss: bool,
    allow_no_schedulable_nodes: bool,
}

impl Limits {
    fn of(o: &RollOptions) -> Self {
        Limits {
            max_parallel: o.drain.max_parallel,
            max_unavailable: o.max_unavailable,
            allow_quorum_loss: o.allow_quorum_loss,
            allow_no_schedulable_nodes: o.allow_no_schedulable_nodes,
        }
    }
}

/// Why the next node cannot start yet (or, with nothing in progress, at all).
fn hold_back(
    options: Limits,
    all: &[Arc<Node>],
    in_progress: &BTreeSet<String>,
    candidate: &str,
) -> Option<HoldBack> {
    // Every node borrowed: a roll of a 5,000-node cluster copied them all
    // at each choice (12 MB at its peak).
    let chosen = |name: &str| name == candidate || in_progress.contains(name);
    let nodes = || all.iter().map(|n| &**n);
    if !options.allow_quorum_loss {
        let cps = nodes().filter(|n| guard::is_control_plane(n));
        if let Err(e) = guard::quorum(cps, chosen) {
            return Some(HoldBack::Quorum(e));
        }
    }
    if !options.allow_no_schedulable_nodes && guard::none_usable_outside(nodes(), chosen) {
        return Some(HoldBack::NoSchedulableNode);
    }
    let unavailable = all
        .iter()
        .filter(|n| {
            let name = n.metadata.name.as_deref().unwrap_or_default();
            in_progress.contains(name) || guard::unavailable(n)
        })
        .count();
    let room = |max_unavailable| {
        pool::room(
            options.max_parallel,
            in_progress.len(),
            max_unavailable,
            all.len(),
            unavailable,
        )
    };
    // Every slot taken: the pool's budget is not what holds it back.
    if room(None) == 0 {
        return Some(HoldBack::NoFreeSlot {
            in_progress: in_progress.len(),
            max_parallel: options.max_parallel,
        });
    }
    (room(options.max_unavailable) == 0).then(|| HoldBack::MaxUnavailable {
        unavailable,
        nodes: all.len(),
        allows: options.max_unavailable.map_or(0, |m| m.of(all.len())),
    })
}

/// Why the roll took no more nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RollStopped {
    /// Nothing else is out, and this node still cannot go.
    CannotTakeOut { node: String, hold: HoldBack },
    /// More nodes could not be rolled than `--max-blocked-nodes` allows.
    TooManyBlocked { blocked: usize, max: usize },
    /// `kubectl maintain abort` asked (when, by whom).
    Aborted { asked: String },
}

/// The roll as it takes nodes: what ended, how many could not be rolled,
/// why it stopped taking more, and which waits it has said.
pub(crate) struct Taking<'a> {
    ctx: &'a Ctx,
    options: &'a RollOptions,
    locks: &'a Locks,
    pub(crate) results: BTreeMap<String, NodeRoll>,
    blocked: usize,
    pub(crate) stopped: Option<RollStopped>,
    said: BTreeSet<String>,
    /// The gate's hold now (`announce`, `window`, `alerts`), and when to
    /// look again.
    gated: Option<(&'static str, Duration)>,
}

/// A node taken under its lock, to roll from `at`.
struct Start {
    node: String,
    lock: Lock,
    at: Phase,
    /// What its lock recorded of an earlier run (budgets, action).
    earlier: Option<phase::Record>,
}

impl<'a> Taking<'a> {
    pub(crate) fn new(ctx: &'a Ctx, options: &'a RollOptions, locks: &'a Locks) -> Self {
        Taking {
            ctx,
            options,
            locks,
            results: BTreeMap::new(),
            blocked: 0,
            stopped: None,
            said: BTreeSet::new(),
            gated: None,
        }
    }

    /// Rolls one group of the order (a zone, or every node), up to the
    /// pool's room at a time.
    pub(crate) async fn group(
        &mut self,
        group: Vec<(String, Phase)>,
        interrupt: &watch::Receiver<bool>,
    ) -> Result<(), DrainError> {
        let mut pending: VecDeque<String> = VecDeque::new();
        for (node, at) in group {
            if at == Phase::Done {
                self.done_before(&node, Some(Phase::Done));
            } else {
                pending.push_back(node);
            }
        }
        let ctx = self.ctx;
        let mut running = FuturesUnordered::new();
        loop {
            // Asked for before the nodes are read: no change is missed.
            let changed = ctx.nodes.changed();
            let (starts, lock_held) = self.what_fits(&mut pending, interrupt).await?;
            for s in starts {
                running.push(node::roll(ctx, s.node, s.lock, s.at, s.earlier));
            }
            if running.is_empty()
                && (pending.is_empty() || self.stopped.is_some() || *interrupt.borrow())
            {
                break;
            }
            // Wait for a node to finish, a node to change (room in the
            // pool), a lock held by another to be worth trying again.
            let mut interrupted = interrupt.clone();
            let gate_again = self.gated.map(|(_, again)| again);
            tokio::select! {
                Some(out) = running.next(), if !running.is_empty() => self.ended(out),
                // Only a node still to take out cares about the others.
                () = changed, if !pending.is_empty() => {
                    // Many nodes change at once (status heartbeats): look
                    // once for all of them, the nodes' rolls going on
                    // meanwhile (they run only while polled here).
                    let look = tokio::time::sleep(COALESCE);
                    tokio::pin!(look);
                    loop {
                        tokio::select! {
                            Some(out) = running.next(), if !running.is_empty() => self.ended(out),
                            () = &mut look => break,
                        }
                    }
                }
                () = tokio::time::sleep(LOCK_RETRY), if lock_held => {}
                () = tokio::time::sleep(gate_again.unwrap_or_default()), if gate_again.is_some() => {}
                _ = interrupted.changed() => {}
            }
        }
        self.not_started(pending, *interrupt.borrow());
        Ok(())
    }

    /// Takes, in order, the pending nodes the pool's room and the locks
    /// allow now. Also says whether a lock another run holds was met.
    async fn what_fits(
        &mut self,
        pending: &mut VecDeque<String>,
        interrupt: &watch::Receiver<bool>,
    ) -> Result<(Vec<Start>, bool), DrainError> {
        let ctx = self.ctx;
        let (mut starts, mut lock_held, mut tried) = (Vec::new(), false, 0);
        if pending.is_empty() || self.stopped.is_some() || *interrupt.borrow() {
            return Ok((starts, lock_held));
        }
        if !self
            .gate_open(pending.front().expect("a pending node"))
            .await
        {
            return Ok((starts, lock_held));
        }
        let mut in_progress = ctx.pool.lock().expect("pool").in_progress.clone();
        let all = ctx.nodes.all();
        while self.stopped.is_none() && !*interrupt.borrow() && tried < pending.len() {
            let node = pending.front().cloned().expect("a pending node");
            if let Some(hold) = hold_back(Limits::of(self.options), &all, &in_progress, &node) {
                self.held_back(&node, hold, in_progress.is_empty());
                break;
            }
            if let Some(asked) = ctx.abort.asked(&ctx.events).await {
                self.stopped = Some(RollStopped::Aborted { asked });
                break;
            }
            match self.locks.try_take(&node).await? {
                Taken::Held(h) => {
                    let why = format!(
                        "locked by {} (its lease expires within {} s unless renewed)",
                        h.holder,
                        h.expires_in.as_secs()
                    );
                    if self.said.insert(format!("{node}: {}", h.holder)) {
                        ctx.say(&node, "waiting", why);
                    }
                    lock_held = true;
                    pending.rotate_left(1);
                    tried += 1;
                }
                Taken::Ours {
                    lock,
                    before,
                    took_over,
                } => {
                    if let Some(warning) = took_over {
                        emit(&ctx.events, Event::Warning(warning));
                    }
                    pending.pop_front();
                    tried = 0;
                    // The lock's record, read now under the lock, decides.
                    let now = ctx
                        .nodes
                        .get(&node)
                        .map(|n| node::now_of(&n))
                        .unwrap_or_default();
                    let options = self.options;
                    let at = phase::resume(
                        before.as_ref(),
                        &options.identity,
                        &now,
                        options.fresh,
                        options.since,
                    );
                    if at == Phase::Done {
                        // Another run finished it meanwhile.
                        let _ = lock.release(&options.identity, Phase::Done).await;
                        self.done_before(&node, None);
                        continue;
                    }
                    ctx.started_node(&node);
                    in_progress.insert(node.clone());
                    starts.push(Start {
                        node,
                        lock: *lock,
                        at,
                        earlier: phase::carried_over(before, &options.identity, options.fresh),
                    });
                }
            }
        }
        Ok((starts, lock_held))
    }

    /// Does the gate (`--announce`, `--window`, `--block-on-alerts`) let
    /// the next node start? A hold is said once per reason, and recorded.
    async fn gate_open(&mut self, next: &str) -> bool {
        let ctx = self.ctx;
        match ctx.gate.check().await {
            Open::Yes => {
                if let Some((what, _)) = self.gated.take() {
                    ctx.hold_ended(None, what);
                }
                true
            }
            Open::No {
                what,
                reason,
                again_in,
            } => {
                if let Some((before, _)) = self.gated
                    && before != what
                {
                    ctx.hold_ended(None, before);
                }
                self.gated = Some((what, again_in));
                ctx.hold(None, what, &reason);
                if self.said.insert(reason.clone()) {
                    ctx.say(next, "waiting", reason);
                }
                false
            }
        }
    }

    /// The next node cannot go yet: said once per reason; with nothing in
    /// progress and a hold that cannot end by itself, it never will, and
    /// the roll stops.
    fn held_back(&mut self, node: &str, hold: HoldBack, nothing_out: bool) {
        if nothing_out && !hold.ends_by_itself() {
            self.stopped = Some(RollStopped::CannotTakeOut {
                node: node.to_string(),
                hold,
            });
            return;
        }
        let why = hold.to_string();
        if self.said.insert(why.clone()) {
            self.ctx.say(node, "waiting", why);
        }
    }

    /// A node's roll ended; too many that could not be rolled stop the roll.
    fn ended(&mut self, out: NodeRoll) {
        if matches!(out.status, RollStatus::Blocked | RollStatus::Failed) {
            self.blocked += 1;
            let max = self.options.drain.max_blocked_nodes;
            if pool::stops(self.blocked, max) {
                self.stopped = Some(RollStopped::TooManyBlocked {
                    blocked: self.blocked,
                    max: max.unwrap_or_default(),
                });
            }
        }
        self.results.insert(out.node.clone(), out);
    }

    /// A node an earlier run (or another run, meanwhile) finished.
    fn done_before(&mut self, node: &str, resumed_from: Option<Phase>) {
        self.ctx.pool.lock().expect("pool").done += 1;
        let mut out = NodeRoll::new(node, RollStatus::DoneBefore, None);
        out.resumed_from = resumed_from;
        self.results.insert(node.to_string(), out);
    }

    /// The nodes the roll stopped (or was interrupted) before starting.
    fn not_started(&mut self, pending: VecDeque<String>, interrupted: bool) {
        for node in pending {
            let (status, why) = if interrupted {
                (
                    RollStatus::Interrupted,
                    "interrupted before it started".to_string(),
                )
            } else {
                let stopped = self
                    .stopped
                    .as_ref()
                    .map_or_else(|| "the roll stopped".into(), ToString::to_string);
                (RollStatus::NotStarted, format!("not started: {stopped}"))
            };
            self.results
                .insert(node.clone(), NodeRoll::new(&node, status, Some(why)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_max_unavailable_can_end_by_itself_with_nothing_in_progress() {
        let max = HoldBack::MaxUnavailable {
            unavailable: 2,
            nodes: 10,
            allows: 2,
        };
        assert!(max.ends_by_itself());
        assert_eq!(
            max.to_string(),
            "2 of 10 nodes are unavailable; --max-unavailable allows 2"
        );
        let slot = HoldBack::NoFreeSlot {
            in_progress: 2,
            max_parallel: 2,
        };
        assert!(!slot.ends_by_itself());
        assert!(!HoldBack::NoSchedulableNode.ends_by_itself());
        let quorum = guard::Refusal::Quorum {
            out: 2,
            nodes: 3,
            names: vec!["cp1".into(), "cp2".into()],
            tolerated: 1,
        };
        assert!(!HoldBack::Quorum(quorum).ends_by_itself());
    }

    fn node(name: &str, control_plane: bool, cordoned: bool) -> Arc<Node> {
        let labels = if control_plane {
            serde_json::json!({"node-role.kubernetes.io/control-plane": ""})
        } else {
            serde_json::json!({})
        };
        let taints = if control_plane {
            serde_json::json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}])
        } else {
            serde_json::json!([])
        };
        Arc::new(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "labels": labels},
                "spec": {"unschedulable": cordoned, "taints": taints},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }))
            .unwrap(),
        )
    }

    #[test]
    fn the_next_node_is_held_by_quorum_the_last_schedulable_node_and_the_slots() {
        let limits = Limits {
            max_parallel: 2,
            max_unavailable: None,
            allow_quorum_loss: false,
            allow_no_schedulable_nodes: false,
        };
        let running = |names: &[&str]| -> BTreeSet<String> {
            names.iter().map(ToString::to_string).collect()
        };
        let mut all = vec![
            node("cp1", true, false),
            node("cp2", true, false),
            node("cp3", true, false),
            node("w1", false, false),
            node("w2", false, false),
            node("w3", false, false),
        ];
        assert_eq!(hold_back(limits, &all, &running(&[]), "w1"), None);
        // A second control plane out of three loses etcd's quorum.
        let quorum = hold_back(limits, &all, &running(&["cp1"]), "cp2");
        assert!(matches!(quorum, Some(HoldBack::Quorum(_))), "{quorum:?}");
        let allowed = Limits {
            allow_quorum_loss: true,
            ..limits
        };
        assert_eq!(hold_back(allowed, &all, &running(&["cp1"]), "cp2"), None);
        // w1 out, w2 and w3 cordoned: only tainted control planes are left.
        all[4] = node("w2", false, true);
        all[5] = node("w3", false, true);
        assert_eq!(
            hold_back(limits, &all, &running(&[]), "w1"),
            Some(HoldBack::NoSchedulableNode)
        );
        let allowed = Limits {
            allow_no_schedulable_nodes: true,
            ..limits
        };
        assert_eq!(hold_back(allowed, &all, &running(&[]), "w1"), None);
        // w3 schedulable again, every slot taken.
        all[5] = node("w3", false, false);
        assert_eq!(
            hold_back(limits, &all, &running(&["cp1", "w2"]), "w1"),
            Some(HoldBack::NoFreeSlot {
                in_progress: 2,
                max_parallel: 2
            })
        );
    }
}
