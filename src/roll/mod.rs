//! `kubectl maintain roll`: maintain a pool node by node — lock, cordon and
//! drain, act (`--exec`, `--wait-for-reboot`), Ready again, uncordon,
//! settle, release — keeping up to `--max-parallel` nodes out at once
//! within `--max-unavailable`, zone by zone with `--by-zone`, never past
//! etcd's quorum nor the last schedulable node, resumable by rerunning the
//! same command.
//!
//! The pool runner (crate::pool) takes the nodes, past the room and the
//! gate, as for a drain; `take` is the roll's driver of it: `phase`
//! decides where each node is taken up, `lease` locks nodes against a
//! second run, `node` runs one node's phases, `kured` keeps kured's
//! reboots apart from ours, `hooks` waits on other operators.

pub(crate) mod action;
mod hooks;
pub(crate) mod kured;
pub(crate) mod lease;
pub(crate) mod node;
pub(crate) mod outcome;
pub(crate) mod phase;
pub(crate) mod stop;
pub(crate) mod take;
mod wait;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::client::Clients;
use crate::drain::{DrainError, Options, discover};
use crate::policy::guard::MaxUnavailable;
use crate::policy::plan::Plan;
use crate::policy::pool;
use crate::pool::node_watch::Nodes;
use crate::pool::observers::Observers;
use crate::pool::room::Room;
use crate::pool::unattended::Unattended;
use crate::pool::{Runner, Tell, abort_watch::AbortWatch};
use crate::publish::conditions::Maintenance;
use crate::publish::{Publish, Publisher};
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;
use lease::Locks;
use outcome::{NodeRoll, RollOutcome, RollStatus};
use phase::Phase;
use take::Taking;

/// What each node's action is.
#[derive(Debug, Clone)]
pub(crate) struct Action {
    pub(crate) exec: Option<String>,
    pub(crate) wait_for_reboot: bool,
    /// How long a node may take to reboot and to be Ready again.
    pub(crate) ready_timeout: Duration,
    /// How long `exec` may run before its process group is ended.
    pub(crate) timeout: Duration,
    pub(crate) wait_for_budgets: bool,
    pub(crate) soak: Option<Duration>,
}

/// What a node's hooks need of the run.
pub(crate) struct HookRun {
    pub(crate) draino: bool,
    /// This run's attempt in hook values: when it began (ms since the epoch).
    pub(crate) attempt: i64,
}

/// A roll as asked for, checked.
pub(crate) struct RollOptions {
    pub(crate) drain: Options,
    pub(crate) action: Action,
    pub(crate) max_unavailable: Option<MaxUnavailable>,
    pub(crate) lock_namespace: String,
    pub(crate) lease_duration: Duration,
    pub(crate) kured: String,
    pub(crate) fresh: bool,
    pub(crate) allow_quorum_loss: bool,
    pub(crate) allow_no_schedulable_nodes: bool,
    /// The command's identity (nodes and action), for `phase::identity`.
    pub(crate) identity: String,
    /// When this run began, milliseconds since the epoch.
    pub(crate) since: i64,
    pub(crate) unattended: Unattended,
}

/// What every node's roll shares.
pub(crate) struct Ctx {
    pub(crate) clients: Clients,
    pub(crate) plan: Plan,
    pub(crate) drain: Options,
    pub(crate) action: Action,
    pub(crate) events: Sink,
    pub(crate) interrupt: watch::Receiver<bool>,
    pub(crate) roll: String,
    /// Lines with the pool's count, and holds, timed from the roll's start.
    pub(crate) tell: Tell,
    /// Budget watches shared by every node's drain, so that nodes drained
    /// at once share each budget's disruptions.
    pub(crate) budgets: crate::drain::budgets::Broker,
    /// The VolumeAttachments every node's drain waits on, watched once.
    pub(crate) attachments: Arc<crate::drain::detach::Attachments>,
    /// Every node, watched: the next node's room, each node's waits.
    pub(crate) nodes: Nodes,
    /// Node conditions and Events, for every node's drain; the
    /// conditions are reset at each uncordon.
    pub(crate) publisher: Arc<Publisher>,
    kured: kured::Kured,
    /// Nodes of this roll holding kured's lock (it is taken by the first).
    kured_users: tokio::sync::Mutex<KuredUsers>,
    pub(crate) unattended: HookRun,
}

impl Ctx {
    /// A node's phase on screen, with the pool's count.
    pub(crate) fn say(&self, node: &str, phase: &str, detail: String) {
        self.tell.say(node, phase, detail);
    }

    /// The roll (no node) or a node's hook holds, for this reason.
    pub(crate) fn hold(&self, node: Option<&str>, what: &str, reason: &str) {
        self.tell.hold(node, what, reason);
    }

    pub(crate) fn hold_ended(&self, node: Option<&str>, what: &str) {
        self.tell.hold_ended(node, what);
    }

    /// Holds kured's lock for one more node, waiting while kured holds it.
    async fn hold_kured(&self, node: &str) -> Result<(), DrainError> {
        let mut users = self.kured_users.lock().await;
        if users.nodes == 0 {
            let mut said = false;
            loop {
                match self.kured.take().await? {
                    kured::Taking::Taken => {
                        users.taken = true;
                        break;
                    }
                    kured::Taking::Absent => {
                        users.taken = false;
                        break;
                    }
                    kured::Taking::HeldBy(by) => {
                        if !said {
                            said = true;
                            self.say(
                                node,
                                "action",
                                format!(
                                    "waiting: kured holds its reboot lock ({}); the roll goes on when kured gives it back",
                                    by.join(", ")
                                ),
                            );
                        }
                        if *self.interrupt.borrow() {
                            return Ok(());
                        }
                        tokio::time::sleep(Duration::from_secs(2)).await;
                    }
                }
            }
        }
        users.nodes += 1;
        Ok(())
    }

    async fn release_kured(&self) {
        let mut users = self.kured_users.lock().await;
        users.nodes = users.nodes.saturating_sub(1);
        // No kured DaemonSet when the lock was taken: nothing to give back
        // (one GET a node saved; the next node's take looks again).
        if users.nodes == 0
            && std::mem::take(&mut users.taken)
            && let Err(e) = self.kured.give_back().await
        {
            let warning = Warning::KuredLockNotReturned {
                error: e.to_string(),
            };
            emit(&self.events, Event::Warning(warning));
        }
    }
}

/// The roll's nodes holding kured's lock, and whether it was taken
/// (kured's DaemonSet was there when the first of them asked).
#[derive(Default)]
struct KuredUsers {
    nodes: usize,
    taken: bool,
}

/// The nodes of the roll in the order they are taken, and where each is
/// taken up.
pub(crate) struct Order {
    pub(crate) groups: Vec<Vec<(String, Phase)>>,
    /// Every selected node was done by an earlier run of this roll.
    pub(crate) all_done: bool,
}

impl Order {
    /// Every node in the order it is taken.
    pub(crate) fn names(&self) -> Vec<String> {
        self.groups
            .iter()
            .flatten()
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// Finds the nodes, and reads what their locks say of earlier runs. Makes
/// no change.
pub(crate) async fn order(
    clients: &Clients,
    options: &RollOptions,
    events: &Sink,
) -> Result<Order, DrainError> {
    let _told = crate::drain::retry::tell(clients, events);
    let nodes = discover::resolve_nodes(&clients.main, &options.drain.nodes).await?;
    let locks = Locks::new(
        &clients.main,
        &options.lock_namespace,
        options.lease_duration,
    );
    let names: Vec<String> = nodes
        .iter()
        .map(|n| n.metadata.name.clone().unwrap_or_default())
        .collect();
    let records = locks.records(&names).await?;
    let all_done = !options.fresh && phase::all_done(&records, &options.identity);
    let groups = pool::groups(&nodes, options.drain.by_zone)
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|i| {
                    let at = phase::resume(
                        records[i].as_ref(),
                        &options.identity,
                        &node::now_of(&nodes[i]),
                        options.fresh,
                        options.since,
                    );
                    (names[i].clone(), at)
                })
                .collect()
        })
        .collect();
    Ok(Order { groups, all_done })
}

/// Refusals that hold for the whole selection, checked on every node
/// before the roll changes anything: a `--deadline` shorter than a grace
/// period it would cut (`policy::guard::short_deadline`). Each node's drain
/// checks again when its turn comes.
pub(crate) async fn refusals(
    clients: &Clients,
    plan: &Plan,
    options: &RollOptions,
    events: &Sink,
) -> Result<(), DrainError> {
    let drain = &options.drain;
    if drain.deadline.is_none()
        || drain.allow_short_deadline
        || drain.dry_run != crate::vocabulary::DryRun::None
    {
        return Ok(());
    }
    let (_never, interrupt) = watch::channel(false);
    let quiet = Arc::new(Publisher::start(&clients.main, Publish::default()));
    crate::drain::prepare(
        clients.clone(),
        plan.clone(),
        drain.clone(),
        events.clone(),
        interrupt,
        quiet,
    )
    .await
    .map(drop)
}

/// Runs the roll, publishing its progress (node conditions, Events), and
/// telling notifications and metrics.
pub(crate) async fn run(
    clients: Clients,
    plan: Plan,
    options: RollOptions,
    order: Order,
    events: Sink,
    interrupt: watch::Receiver<bool>,
    metrics: Option<tokio::net::TcpListener>,
) -> Result<RollOutcome, DrainError> {
    let publisher = Arc::new(Publisher::start(&clients.main, options.drain.publish()));
    let display = publisher.listen(events);
    let names = order.names();
    let observers = Arc::new(Observers::start(
        &options.unattended,
        crate::notify::notice::Verb::Roll,
        &options.identity,
        names.len(),
        metrics,
        &display,
    ));
    let (events, tee) = observers.listen(display);
    observers.started(&names);
    let outcome = {
        let _told = crate::drain::retry::tell(&clients, &events);
        take_nodes(clients, plan, options, order, events, interrupt, &publisher).await
    };
    let summary = match &outcome {
        Ok(o) => Ok(summary(o)),
        Err(e) => Err(e.chain()),
    };
    let delivered = observers.finish(tee, summary).await;
    // Every sink is dropped with the roll: what is left gets recorded.
    publisher.finish().await;
    outcome.map(|mut o| {
        o.conditions_not_written = publisher.unwritten();
        o.notifications = delivered;
        o
    })
}

/// How a roll ended, for its last notification.
fn summary(o: &RollOutcome) -> crate::pool::observers::Summary {
    let mut by = std::collections::BTreeMap::new();
    for n in &o.nodes {
        *by.entry(n.status.as_str()).or_default() += 1;
    }
    crate::pool::observers::Summary {
        by,
        elapsed: Duration::from_millis(o.elapsed_ms),
        exit_code: crate::exit_codes::of_roll(o),
        failed: o.failed(),
    }
}

/// Takes the nodes out and back in turn.
async fn take_nodes(
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
    let (mut results, groups) = done_before(&order, &ctx.tell);
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
            take::roll(&ctx, names[i].clone(), start)
        })
        .await;
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => {
            planned(&ctx, &to_take, Maintenance::NoLongerPlanned).await;
            return Err(e);
        }
    };
    results.extend(ran.results);
    returned(&ctx, &to_take, &results, ran.stopped.as_ref()).await;
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
/// (those back in service have it off already: Maintenance::Over); why the
/// roll stopped taking nodes is said.
async fn returned(
    ctx: &Ctx,
    to_take: &[String],
    results: &[(usize, NodeRoll)],
    stopped: Option<&crate::pool::Stopped>,
) {
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
    if let Some(why) = stopped {
        emit(
            &ctx.events,
            Event::Warning(Warning::RunStopped {
                verb: "roll",
                why: why.to_string(),
            }),
        );
    }
}

/// The nodes an earlier run did, as results, and the groups of the
/// others, by their index in the order.
fn done_before(order: &Order, tell: &Tell) -> (Vec<(usize, NodeRoll)>, Vec<Vec<usize>>) {
    let (mut results, mut groups, mut i) = (Vec::new(), Vec::new(), 0);
    for group in &order.groups {
        let mut taken = Vec::new();
        for (node, at) in group {
            if *at == Phase::Done {
                tell.progress.done_before();
                results.push((i, take::done_before(node, Some(Phase::Done))));
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
        max_unavailable: o.max_unavailable,
        max_blocked: o.drain.max_blocked_nodes,
        keep_quorum: !o.allow_quorum_loss,
        keep_a_schedulable_node: !o.allow_no_schedulable_nodes,
        done_stays_out: false,
    }
}

/// `MaintenancePlanned` on these nodes of the roll, or off.
async fn planned(ctx: &Ctx, names: &[String], stage: Maintenance) {
    for n in names {
        ctx.publisher.maintenance(n, stage, Some(&ctx.events)).await;
    }
}
