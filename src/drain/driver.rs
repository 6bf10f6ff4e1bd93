//! Performs what a node's state machine decides: sends its evictions
//! (crate::drain::evict, at most `GLOBAL_IN_FLIGHT` across every node),
//! watches the budgets that
//! refused, follows the node's pods, wakes it when it asked to be woken,
//! and hands every answer back to it. No decision is made here.

use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use super::budgets::{self, Go, NodeBudgets, Signal, Spent};
use super::context::DrainContext;

use super::machine::{Answer, Change, Effect, Eviction, Input, NodeMachine, Now};
use super::pod_watch::{PodQuery, PodWatch};
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::NodeOutcome;
use crate::vocabulary::pod_key::PodKey;

/// Drains one node until its machine finishes. The machine was made from
/// the node's snapshot: `known` pods at `resource_version`. `budgets` is
/// the node's place with the budget broker, which it leaves when done.
pub(crate) async fn drain_node(
    ctx: &DrainContext,
    mut machine: NodeMachine,
    query: PodQuery,
    resource_version: String,
    known: Vec<(PodKey, String)>,
    mut budgets: NodeBudgets,
) -> NodeOutcome {
    let pods: Api<Pod> = Api::all(ctx.clients.main.clone());
    let metadata_only = !machine.waits_for_completion();
    let watch = PodWatch::resume(pods, query, resource_version, known, metadata_only);
    let mut changes = as_stream(watch);
    let mut changed = budgets.take_signals();
    let mut interrupt = ctx.interrupt.clone();
    let mut inflight = FuturesUnordered::new();
    let mut reads = super::dead_node::Reads::default();
    let mut effects = if *interrupt.borrow() {
        machine.step(Input::Interrupted, now())
    } else {
        machine.start(now())
    };
    loop {
        let mut unwatched = Vec::new();
        let mut held = Vec::new();
        for effect in effects.drain(..) {
            match effect {
                Effect::Evict(evict) => {
                    if let Some(send) = send_or_hold(ctx, &mut budgets, evict, &mut held) {
                        inflight.push(send);
                    }
                }
                Effect::AwaitDetach { claims, limit } => {
                    let node = machine.node().to_string();
                    inflight.push(await_detach(ctx, node, claims, limit).boxed());
                }
                Effect::Surge { key, owner, budget } => {
                    let node = machine.node().to_string();
                    inflight.push(surge(ctx, node, key, owner, budget).boxed());
                }
                Effect::Force { key, uid, grace } => {
                    budgets.not_due(&key);
                    inflight.push(super::evict::force(ctx, key, uid, grace).boxed());
                }
                Effect::WatchBudget(key) => {
                    if !ctx.budgets.follow(&key) {
                        unwatched.push(key);
                    }
                }
                Effect::Emit(e) => {
                    // Gone however it went (evicted, by itself, completed):
                    // no longer due on its budget.
                    if let Event::PodGone { pod, .. } = &e {
                        budgets.not_due(pod);
                    }
                    ctx.events.emit(e);
                }
                Effect::Finish(mut outcome) => {
                    if outcome.not_ready.is_some() {
                        super::dead_node::attached_volumes(ctx, &mut outcome).await;
                    }
                    return *outcome;
                }
            }
        }
        effects = tell_at_once(ctx, &mut machine, held, unwatched);
        if !effects.is_empty() {
            continue;
        }
        if let Some(read) = reads.due_now(&ctx.clients.main, &mut machine).await {
            effects = machine.step(read, now());
            continue;
        }
        if let Some(later) = reads.periodic(&ctx.clients.main, &machine) {
            inflight.push(later.boxed());
        }
        let wake = machine.next_wakeup();
        let input = tokio::select! {
            Some(answer) = inflight.next(), if !inflight.is_empty() => answer,
            Some(change) = changes.next() => match change {
                Change::Polling(warning) => {
                    ctx.events.warn_once(warning);
                    continue;
                }
                change => Input::Pod(change),
            },
            Some(signal) = changed.recv() => match budget_input(ctx, &mut budgets, &machine, signal) {
                Some(input) => input,
                None => continue,
            },
            () = sleep_until(wake) => Input::Tick,
            _ = interrupt.changed() => Input::Interrupted,
        };
        if let Input::Answer { key, answer, .. } = &input {
            budgets.answered(key, spent(answer));
        }
        if let Input::NodeHealth(_) = &input {
            reads.answered();
        }
        note_refusing_budget(ctx, &mut machine, &input);
        effects = machine.step(input, now());
    }
}

/// Waits for the evicted pods' volumes to detach from the node.
async fn await_detach(
    ctx: &DrainContext,
    node: String,
    claims: Vec<(String, String)>,
    limit: std::time::Duration,
) -> Input {
    let (client, attachments) = (&ctx.clients.main, &ctx.attachments);
    let r = super::detach::wait(client, attachments, &ctx.events, &node, &claims, limit).await;
    Input::Detached(r)
}

/// What the machine is told at once, without waiting: evictions held
/// without asking, and budgets found forbidden to watch for another pod.
fn tell_at_once(
    ctx: &DrainContext,
    machine: &mut NodeMachine,
    held: Vec<Input>,
    unwatched: Vec<budgets::Key>,
) -> Vec<Effect> {
    held.into_iter()
        .chain(unwatched.into_iter().map(Input::BudgetUnwatched))
        .flat_map(|input| {
            note_refusing_budget(ctx, machine, &input);
            machine.step(input, now())
        })
        .collect()
}

/// The pod watch as a stream, so that `select!` dropping a `next()` it did
/// not pick never cancels a watch request halfway (the stream keeps the
/// future).
fn as_stream(watch: PodWatch) -> futures::stream::BoxStream<'static, Change> {
    futures::stream::unfold(watch, |mut w| async move {
        let change = w.next().await;
        Some((change, w))
    })
    .boxed()
}

/// An eviction the machine wants: sent now, or held without asking (its
/// answer into `held`, the budget's refusal) until the budget changes, due
/// on it meanwhile.
fn send_or_hold<'a>(
    ctx: &'a DrainContext,
    budgets: &mut NodeBudgets,
    evict: Eviction,
    held: &mut Vec<Input>,
) -> Option<futures::future::BoxFuture<'a, Input>> {
    let Eviction {
        key,
        uid,
        handled_by,
        granted,
        group,
        budget_free,
    } = evict;
    match budgets.ask(&key, granted.as_ref(), budget_free) {
        Go::Hold(budget) => {
            held.push(not_asked(key, uid, &budget));
            None
        }
        Go::Send => Some(super::evict::pod(ctx, key, uid, handled_by, group).boxed()),
    }
}

/// What a budget's signal means for this node: its numbers with the
/// retries granted to it (only as many evictions as it allows are sent,
/// across nodes), or nothing to do: a node hears of the budgets over its
/// pods and of budgets not known before the drain (budgets::tell), and a
/// change of one that holds none of this node's pods now is not this
/// node's (each running node kept every budget it heard of: 15 MB at 50
/// nodes at once on a cluster of 5,000).
fn budget_input(
    ctx: &DrainContext,
    budgets: &mut NodeBudgets,
    machine: &NodeMachine,
    signal: Signal,
) -> Option<Input> {
    match signal {
        Signal::Changed(key) if !machine.held_by_budget(&key) => None,
        Signal::Changed(key) => {
            let budget = ctx.budgets.get(&key)?;
            let grant = budgets.claim(&key, machine.retry_wanted(&key));
            Some(Input::Budget { key, budget, grant })
        }
        Signal::Forbidden(key) => Some(Input::BudgetUnwatched(key)),
    }
}

/// What an eviction's answer did with the disruption it may have held.
fn spent(answer: &Answer) -> Spent {
    match answer {
        Answer::Accepted => Spent::Disrupted,
        Answer::PdbBlocked { .. } => Spent::RefusedByBudget,
        _ => Spent::Unused,
    }
}

/// A budget's refusal is reported with its numbers as last known (listed
/// with the drain's budgets, or since watched), though it may not change
/// while the drain runs.
fn note_refusing_budget(ctx: &DrainContext, machine: &mut NodeMachine, input: &Input) {
    if let Input::Answer {
        key,
        answer: Answer::PdbBlocked { pdb, .. },
        ..
    } = input
    {
        let budget_key = (key.namespace.clone(), pdb.clone());
        if let Some(budget) = ctx.budgets.get(&budget_key) {
            machine.note_budget(budget_key, budget);
        }
    }
}

/// The answer for an eviction held without asking.
fn not_asked(key: PodKey, uid: String, budget: &budgets::Key) -> Input {
    Input::Answer {
        answer: Answer::PdbBlocked {
            pdb: budget.1.clone(),
            message: format!(
                "not asked: every disruption PodDisruptionBudget {} allows is taken by other evictions or kept for a node started earlier",
                budget.1
            ),
            api_message: super::evict::PDB_REFUSAL.into(),
            retry_after: None,
        },
        key,
        uid,
        evacuation: None,
    }
}

/// The clock, read once per input: monotonic for deadlines, wall-clock for
/// pods' timestamps. Only the I/O side reads it; the machine is told.
pub(crate) fn now() -> Now {
    Now {
        at: tokio::time::Instant::now(),
        wall: kube_conventions::time::now(),
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// `--surge` for a pod its budget refused: only a budget that allows
/// nothing even with every pod healthy needs one; others free a
/// disruption by themselves. Asked at each refusal until it surges or
/// cannot, so a budget that counted a terminating pod, or one that could
/// not be read, is looked at again.
async fn surge(
    ctx: &DrainContext,
    node: String,
    key: PodKey,
    owner: Option<(String, String)>,
    budget: budgets::Key,
) -> Input {
    let numbers = match ctx.budgets.get(&budget) {
        Some(b) => Some(b),
        None => ctx.budgets.fetch(&budget).await,
    };
    // Not read, or not (yet) a budget that allows nothing: decided again at
    // the next refusal.
    let result = if numbers.is_some_and(|b| b.never_allows()) {
        let owner = owner.as_ref().map(|(k, n)| (k.as_str(), n.as_str()));
        let client = &ctx.clients.main;
        ctx.surges.surge(client, &node, &key, owner).await
    } else {
        Ok(None)
    };
    Input::Surged { key, result }
}
