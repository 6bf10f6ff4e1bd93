//! The roll's nodes taken out and back in turn (`take_nodes`), by its
//! driver of the pool runner (crate::pool): its nodes in the
//! roll's order (the runner weighs the room and the gate), each taken
//! under its lock from where an earlier run left it, then rolled by
//! `node::roll`. A lock another run holds sends the runner to the next
//! node and back later.

use std::sync::Arc;

use tokio::sync::watch;

use super::lease::{self, Lock, Locks, Taken};
use super::outcome::{NodeRoll, RollOutcome, RollStatus};
use super::phase::{self, Phase};
use super::{Ctx, HookRun, Order, RollOptions, kured, node};
use crate::client::Clients;
use crate::policy::plan::Plan;
use crate::pool::abort_watch::AbortWatch;
use crate::pool::node_watch::Nodes;
use crate::pool::room::Room;
use crate::pool::{Admit, Driver, Ended, Runner, Stopped, Tell};
use crate::publish::Publisher;
use crate::publish::conditions::Maintenance;
use crate::vocabulary::DrainError;
use crate::vocabulary::events::{Event, Sink, emit};

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
    const VERB: &'static str = "roll";
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
            status: out.status,
            message: out.message.clone(),
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

/// Takes the nodes out and back in turn.
pub(super) async fn take_nodes(
    clients: Clients,
    plan: Plan,
    options: RollOptions,
    order: Order,
    events: Sink,
    interrupt: watch::Receiver<bool>,
    publisher: &Arc<Publisher>,
) -> Result<RollOutcome, DrainError> {
    let locks = Locks::new(
        &clients.main,
        &options.lock_namespace,
        options.lease_duration,
    );
    let names = order.names();
    let nodes = Nodes::start(&clients.main, &events).await?;
    let ctx = Ctx {
        nodes,
        kured: kured::Kured::new(
            &clients.main,
            &options.kured,
            format!("{}/{}", locks.holder(), options.identity),
        ),
        budgets: crate::drain::budgets::Broker::new(clients.main.clone(), events.clone()),
        attachments: Arc::default(),
        publisher: publisher.clone(),
        tell: Tell::new(events.clone(), names.len()),
        clients,
        plan,
        drain: options.drain.clone(),
        action: options.action.clone(),
        events,
        interrupt: interrupt.clone(),
        roll: options.identity.clone(),
        kured_users: tokio::sync::Mutex::default(),
        unattended: HookRun {
            draino: options.unattended.draino,
            attempt: options.since,
        },
    };
    // Planned on the nodes this run will take (not those an earlier run did).
    let (mut results, groups) = split_done(&order, &ctx.tell);
    let to_take: Vec<String> = groups.iter().flatten().map(|i| names[*i].clone()).collect();
    planned(&ctx, &to_take, Maintenance::Planned).await;
    let gate = options.unattended.gate();
    let abort = AbortWatch::from_env(&ctx.clients.main);
    let runner = Runner {
        room: room(&options),
        nodes: Some(&ctx.nodes),
        gate: &gate,
        abort: &abort,
        tell: &ctx.tell,
    };
    let mut taking = Taking::new(&ctx, &options, &locks, names.clone());
    let ran = runner
        .run(&mut taking, groups, &interrupt, |i, start| {
            roll(&ctx, names[i].clone(), start)
        })
        .await;
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => {
            planned(&ctx, &to_take, Maintenance::NoLongerPlanned).await;
            return Err(e);
        }
    };
    results.extend(ran);
    returned(&ctx, &to_take, &results).await;
    results.sort_by_key(|(i, _)| *i);
    let elapsed_ms = ctx.tell.started.elapsed().as_millis() as u64;
    let outcome = RollOutcome {
        roll: options.identity.clone(),
        elapsed_ms,
        nodes: results.into_iter().map(|(_, r)| r).collect(),
        conditions_not_written: Vec::new(),
        holds: ctx.tell.hold_records(),
        notifications: None,
    };
    if outcome
        .nodes
        .iter()
        .all(|n| matches!(n.status, RollStatus::Done | RollStatus::DoneBefore))
    {
        lease::finish(&locks, &names, &options.identity).await?;
    }
    Ok(outcome)
}

/// The nodes this run took and did not return are no longer planned
/// (those back in service have it off already: Maintenance::Over).
async fn returned(ctx: &Ctx, to_take: &[String], results: &[(usize, NodeRoll)]) {
    let done: std::collections::BTreeSet<&str> = results
        .iter()
        .filter(|(_, r)| r.status == RollStatus::Done)
        .map(|(_, r)| r.node.as_str())
        .collect();
    let left: Vec<String> = to_take
        .iter()
        .filter(|n| !done.contains(n.as_str()))
        .cloned()
        .collect();
    planned(ctx, &left, Maintenance::NoLongerPlanned).await;
}

/// The nodes an earlier run did, as results, and the groups of the
/// others, by their index in the order.
fn split_done(order: &Order, tell: &Tell) -> (Vec<(usize, NodeRoll)>, Vec<Vec<usize>>) {
    let (mut results, mut groups, mut i) = (Vec::new(), Vec::new(), 0);
    for group in &order.groups {
        let mut taken = Vec::new();
        for (node, at) in group {
            if *at == Phase::Done {
                tell.progress.done_before();
                results.push((i, done_before(node, Some(Phase::Done))));
            } else {
                taken.push(i);
            }
            i += 1;
        }
        groups.push(taken);
    }
    (results, groups)
}

/// The roll's room: its action takes nodes down, so quorum and the last
/// schedulable node are kept unless allowed; a node done is back in
/// service.
fn room(o: &RollOptions) -> Room {
    Room {
        max_parallel: o.drain.max_parallel,
        max_unavailable: o.drain.max_unavailable,
        max_blocked: o.drain.max_blocked_nodes,
        keep_quorum: !o.allow_quorum_loss,
        keep_a_schedulable_node: !o.allow_no_schedulable_nodes,
        done_stays_out: false,
    }
}

/// `MaintenancePlanned` on these nodes of the roll, or off.
async fn planned(ctx: &Ctx, names: &[String], stage: Maintenance) {
    ctx.publisher
        .maintenance_of_all(names, stage, Some(&ctx.events))
        .await;
}
