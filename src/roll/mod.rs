//! `kubectl maintain roll`: maintain a pool node by node — lock, cordon and
//! drain, act (`--exec`, `--wait-for-reboot`), Ready again, uncordon,
//! settle, release — keeping up to `--max-parallel` nodes out at once
//! within `--max-unavailable`, zone by zone with `--by-zone`, never past
//! etcd's quorum nor the last schedulable node, resumable by rerunning the
//! same command.
//!
//! `phase` decides where each node is taken up, `lease` locks nodes
//! against a second run, `kured` keeps kured's reboots apart from ours,
//! `node` runs one node's phases, `take` chooses which node goes next,
//! past `gate` (`--announce`, `--window`, `--block-on-alerts`); `hooks`
//! waits on other operators, `holds` records what the roll waited on, and
//! `observers` tells notifications and metrics.

pub(crate) mod abort_watch;
pub(crate) mod action;
mod alerts;
mod gate;
pub(crate) mod hold_log;
mod hooks;
pub(crate) mod kured;
pub(crate) mod lease;
pub(crate) mod node;
mod node_watch;
mod observers;
pub(crate) mod outcome;
pub(crate) mod phase;
pub(crate) mod stop;
pub(crate) mod take;
mod wait;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::client::Clients;
use crate::drain::events::{Event, Sink, emit};
use crate::drain::warning::Warning;
use crate::drain::{DrainError, Options, discover};
use crate::policy::guard::MaxUnavailable;
use crate::policy::plan::Plan;
use crate::policy::pool;
use crate::publish::conditions::Maintenance;
use crate::publish::{Publish, Publisher};
use lease::Locks;
use node_watch::Nodes;
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

/// What a roll nobody watches needs (#31): who to tell, metrics, and what
/// to wait for besides the pool's room.
#[derive(Debug, Clone)]
pub(crate) struct Unattended {
    pub(crate) notify: crate::notify::NotifyOptions,
    pub(crate) metrics_addr: Option<String>,
    pub(crate) pushgateway: Option<crate::outbound::Url>,
    /// `--block-on-alerts` and `--alert-filter`.
    pub(crate) alerts: Option<(crate::outbound::Url, Option<regex::Regex>)>,
    pub(crate) alerts_every: Duration,
    pub(crate) windows: Vec<crate::policy::window::Window>,
    pub(crate) announce: Option<Duration>,
    pub(crate) draino: bool,
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
    pub(crate) started: Instant,
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
    /// Where `kubectl maintain abort` asks a Job's roll to stop.
    pub(crate) abort: abort_watch::AbortWatch,
    /// Nodes of this roll holding kured's lock (it is taken by the first).
    kured_users: tokio::sync::Mutex<KuredUsers>,
    pool: Mutex<Pool>,
    /// What the roll waited on besides pods, for the report.
    pub(crate) holds: hold_log::HoldLog,
    /// Whether the next node may start (`--announce`, `--window`, alerts).
    pub(crate) gate: gate::Gate,
    pub(crate) unattended: HookRun,
}

#[derive(Default)]
struct Pool {
    total: usize,
    done: usize,
    in_progress: BTreeSet<String>,
}

/// How many nodes in progress the pool's line names; the rest are counted.
const NAMED_IN_PROGRESS: usize = 4;

impl Pool {
    /// The pool's line: nodes done of all, and the nodes out now (the
    /// batch in progress), by name.
    fn summary(&self) -> String {
        let mut out = format!("pool: {}/{} done", self.done, self.total);
        if self.in_progress.is_empty() {
            return out + ", none in progress";
        }
        let names: Vec<&str> = self
            .in_progress
            .iter()
            .take(NAMED_IN_PROGRESS)
            .map(String::as_str)
            .collect();
        out = format!("{out}, in progress: {}", names.join(", "));
        match self.in_progress.len().saturating_sub(NAMED_IN_PROGRESS) {
            0 => out,
            more => format!("{out} and {more} more"),
        }
    }
}

impl Ctx {
    /// A node's phase on screen, with the pool's total.
    pub(crate) fn say(&self, node: &str, phase: &str, detail: String) {
        self.tell(node, phase, detail, false);
    }

    fn tell(&self, node: &str, phase: &str, detail: String, last: bool) {
        let pool = self.pool.lock().expect("pool").summary();
        emit(
            &self.events,
            Event::Phase {
                node: node.to_string(),
                phase: phase.to_string(),
                detail,
                pool,
                last,
            },
        );
    }

    /// The roll (no node) or a node's hook holds, for this reason.
    pub(crate) fn hold(&self, node: Option<&str>, what: &str, reason: &str) {
        let at = self.started.elapsed().as_millis() as u64;
        self.holds.begin(&self.events, node, what, reason, at);
    }

    pub(crate) fn hold_ended(&self, node: Option<&str>, what: &str) {
        let at = self.started.elapsed().as_millis() as u64;
        self.holds.end(&self.events, node, what, at);
    }

    fn started_node(&self, node: &str) {
        self.pool
            .lock()
            .expect("pool")
            .in_progress
            .insert(node.to_string());
    }

    pub(crate) fn finished(&self, out: &NodeRoll) {
        {
            let mut p = self.pool.lock().expect("pool");
            p.in_progress.remove(&out.node);
            if out.status == RollStatus::Done {
                p.done += 1;
            }
        }
        let detail = out.message.clone().unwrap_or_default();
        self.tell(&out.node, out.status.as_str(), detail, true);
        emit(
            &self.events,
            Event::RollEnded {
                node: out.node.clone(),
                status: out.status.as_str(),
                message: out.message.clone(),
                out_of_service_ms: out.out_of_service_ms,
            },
        );
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
        || drain.dry_run != crate::drain::DryRun::None
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

/// Binds `--metrics-addr` before anything else: a taken address stops the
/// roll before it changes anything.
pub(crate) async fn bind_metrics(
    options: &RollOptions,
) -> Result<Option<tokio::net::TcpListener>, String> {
    match &options.unattended.metrics_addr {
        Some(addr) => crate::metrics::serve::bind(addr).await.map(Some),
        None => Ok(None),
    }
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
    let publisher = Arc::new(Publisher::start(&clients.main, Publish::of(&options.drain)));
    let display = publisher.listen(events);
    let names = order.names();
    let observers = Arc::new(observers::Observers::start(
        &options.unattended,
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
    let delivered = observers.finish(tee, &outcome).await;
    // Every sink is dropped with the roll: what is left gets recorded.
    publisher.finish().await;
    outcome.map(|mut o| {
        o.conditions_not_written = publisher.unwritten();
        o.notifications = delivered;
        o
    })
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
    let started = Instant::now();
    let locks = Locks::new(
        &clients.main,
        &options.lock_namespace,
        options.lease_duration,
    );
    let total = order.groups.iter().map(Vec::len).sum();
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
        abort: abort_watch::AbortWatch::from_env(&clients.main),
        publisher: publisher.clone(),
        clients,
        plan,
        drain: options.drain.clone(),
        action: options.action.clone(),
        events,
        interrupt: interrupt.clone(),
        roll: options.identity.clone(),
        started,
        kured_users: tokio::sync::Mutex::default(),
        pool: Mutex::new(Pool {
            total,
            ..Pool::default()
        }),
        holds: hold_log::HoldLog::default(),
        gate: gate_of(&options.unattended),
        unattended: HookRun {
            draino: options.unattended.draino,
            attempt: options.since,
        },
    };
    let names = order.names();
    // Planned on the nodes this run will take (not those an earlier run did).
    let to_take: Vec<String> = order
        .groups
        .iter()
        .flatten()
        .filter(|(_, at)| *at != Phase::Done)
        .map(|(n, _)| n.clone())
        .collect();
    planned(&ctx, &to_take, Maintenance::Planned).await;
    let mut taking = Taking::new(&ctx, &options, &locks);
    for group in order.groups {
        if let Err(e) = taking.group(group, &interrupt).await {
            planned(&ctx, &to_take, Maintenance::NoLongerPlanned).await;
            return Err(e);
        }
    }
    // Those back in service have it off already (Maintenance::Over).
    let left: Vec<String> = to_take
        .into_iter()
        .filter(|n| {
            taking
                .results
                .get(n)
                .is_none_or(|r| r.status != RollStatus::Done)
        })
        .collect();
    planned(&ctx, &left, Maintenance::NoLongerPlanned).await;
    let Taking {
        mut results,
        stopped,
        ..
    } = taking;
    if let Some(why) = &stopped {
        emit(
            &ctx.events,
            Event::Warning(Warning::RollStopped {
                why: why.to_string(),
            }),
        );
    }
    let nodes: Vec<NodeRoll> = names.iter().filter_map(|n| results.remove(n)).collect();
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let outcome = RollOutcome {
        roll: options.identity.clone(),
        elapsed_ms,
        nodes,
        conditions_not_written: Vec::new(),
        holds: ctx.holds.records(elapsed_ms),
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

/// The gate of the next node, from the flags.
fn gate_of(u: &Unattended) -> gate::Gate {
    gate::Gate {
        windows: u.windows.clone(),
        alerts: u
            .alerts
            .as_ref()
            .map(|(url, filter)| alerts::Alerts::new(url, filter.clone())),
        alerts_every: u.alerts_every,
        announced_until: u.announce.map(|d| {
            kube_conventions::time::now()
                .checked_add(jiff::SignedDuration::try_from(d).unwrap_or_default())
                .unwrap_or_else(|_| kube_conventions::time::now())
        }),
        alerts_seen: std::sync::Mutex::new(None),
    }
}

/// `MaintenancePlanned` on these nodes of the roll, or off.
async fn planned(ctx: &Ctx, names: &[String], stage: Maintenance) {
    for n in names {
        ctx.publisher.maintenance(n, stage, Some(&ctx.events)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(done: usize, total: usize, in_progress: &[&str]) -> String {
        Pool {
            total,
            done,
            in_progress: in_progress.iter().map(|n| (*n).to_string()).collect(),
        }
        .summary()
    }

    #[test]
    fn the_pool_line_names_the_nodes_out_now() {
        assert_eq!(pool(0, 3, &[]), "pool: 0/3 done, none in progress");
        assert_eq!(
            pool(3, 20, &["n5", "n4"]),
            "pool: 3/20 done, in progress: n4, n5"
        );
        assert_eq!(
            pool(0, 20, &["a", "b", "c", "d", "e", "f"]),
            "pool: 0/20 done, in progress: a, b, c, d and 2 more"
        );
    }
}
