//! The roll's driver of the pool runner (crate::pool): its nodes in the
//! roll's order (the runner weighs the room and the gate), each taken
//! under its lock from where an earlier run left it, then rolled by
//! `node::roll`. A lock another run holds sends the runner to the next
//! node and back later.

use super::lease::{Lock, Locks, Taken};
use super::outcome::{NodeRoll, RollStatus};
use super::phase::{self, Phase};
use super::{Ctx, RollOptions, node};
use crate::pool::{Admit, Driver, Ended, Stopped};
use crate::vocabulary::DrainError;
use crate::vocabulary::events::{Event, emit};

/// The roll's nodes, by the runner's index.
pub(crate) struct Taking<'a> {
    ctx: &'a Ctx,
    options: &'a RollOptions,
    locks: &'a Locks,
    names: Vec<String>,
}

/// A node taken under its lock, to roll from `at`.
pub(crate) struct Start {
    lock: Lock,
    at: Phase,
    /// What its lock recorded of an earlier run (budgets, action).
    earlier: Option<phase::Record>,
}

impl<'a> Taking<'a> {
    pub(crate) fn new(
        ctx: &'a Ctx,
        options: &'a RollOptions,
        locks: &'a Locks,
        names: Vec<String>,
    ) -> Self {
        Taking {
            ctx,
            options,
            locks,
            names,
        }
    }
}

/// Rolls one node taken under its lock.
pub(crate) async fn roll(ctx: &Ctx, node: String, s: Start) -> NodeRoll {
    node::roll(ctx, node, s.lock, s.at, s.earlier).await
}

/// A node an earlier run (or another run, meanwhile) finished.
pub(crate) fn done_before(node: &str, resumed_from: Option<Phase>) -> NodeRoll {
    let mut out = NodeRoll::new(node, RollStatus::DoneBefore, None);
    out.resumed_from = resumed_from;
    out
}

impl Driver for Taking<'_> {
    type Start = Start;
    type Out = NodeRoll;

    fn name(&self, node: usize) -> &str {
        &self.names[node]
    }

    async fn admit(&mut self, i: usize) -> Result<Admit<Start, NodeRoll>, DrainError> {
        let node = &self.names[i];
        match self.locks.try_take(node).await? {
            Taken::Held(h) => Ok(Admit::Later {
                once: h.holder.clone(),
                why: format!(
                    "locked by {} (its lease expires within {} s unless renewed)",
                    h.holder,
                    h.expires_in.as_secs()
                ),
            }),
            Taken::Ours {
                lock,
                before,
                took_over,
            } => {
                if let Some(warning) = took_over {
                    emit(&self.ctx.events, Event::Warning(warning));
                }
                // The lock's record, read now under the lock, decides.
                let now = self
                    .ctx
                    .nodes
                    .get(node)
                    .map(|n| node::now_of(&n))
                    .unwrap_or_default();
                let o = self.options;
                let at = phase::resume(before.as_ref(), &o.identity, &now, o.fresh, o.since);
                if at == Phase::Done {
                    // Another run finished it meanwhile.
                    let _ = lock.release(&o.identity, Phase::Done).await;
                    return Ok(Admit::Done(done_before(node, None)));
                }
                Ok(Admit::Start(Start {
                    lock: *lock,
                    at,
                    earlier: phase::carried_over(before, &o.identity, o.fresh),
                }))
            }
        }
    }

    fn ended(&self, out: &NodeRoll) -> Ended {
        Ended {
            status: out.status.as_str(),
            message: out.message.clone(),
            done: out.status == RollStatus::Done,
            blocked: matches!(out.status, RollStatus::Blocked | RollStatus::Failed),
            out_of_service_ms: Some(out.out_of_service_ms),
            line: true,
        }
    }

    fn not_started(&mut self, i: usize, interrupted: bool, stopped: Option<&Stopped>) -> NodeRoll {
        let (status, why) = if interrupted {
            (
                RollStatus::Interrupted,
                "interrupted before it started".to_string(),
            )
        } else {
            let stopped = stopped.map_or_else(|| "the roll stopped".into(), ToString::to_string);
            (RollStatus::NotStarted, format!("not started: {stopped}"))
        };
        NodeRoll::new(&self.names[i], status, Some(why))
    }
}
