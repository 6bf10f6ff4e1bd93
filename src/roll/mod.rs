//! `kubectl maintain roll`: maintain a pool node by node — lock, cordon and
//! drain, act (`--exec`, `--wait-for-reboot`), Ready again, uncordon,
//! settle, release — keeping up to `--max-parallel` nodes out at once
//! within `--max-unavailable`, zone by zone with `--by-zone`, never past
//! etcd's quorum nor the last schedulable node, resumable by rerunning the
//! same command.
//!
//! `mod` holds what a roll is asked (its options) and runs it with its
//! observers; `order` reads the nodes and where each is taken up (`phase`)
//! before anything changes; `take` takes them through the pool runner
//! (crate::pool, past the room and the gate, as for a drain), each under
//! its lock (`lease`, held by `holder`); `ctx` is what every node's roll
//! shares; `node` runs one node's phases (`action`, `wait`, `hooks` for
//! other operators, `kured` for kured's lock), `stop` says why one stopped,
//! `outcome` what the roll ended with.

pub(crate) mod action;
mod ctx;
mod holder;
mod hooks;
pub(crate) mod kured;
pub(crate) mod lease;
pub(crate) mod node;
mod order;
pub(crate) mod outcome;
pub(crate) mod phase;
pub(crate) mod stop;
pub(crate) mod take;
mod wait;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::client::Clients;
use crate::drain::{DrainError, Options};
use crate::policy::plan::Plan;
use crate::pool::observers::Observers;
use crate::pool::unattended::Unattended;
use crate::publish::Publisher;
use crate::vocabulary::events::Sink;
pub(crate) use ctx::Ctx;
pub(crate) use order::{Order, order, refusals};
use outcome::RollOutcome;

/// `--exec`: the command, and how it is shown. A command given as
/// `env:NAME` or `file:PATH` (one that carries a credential) is shown by
/// where it comes from, never by its text, and an in-cluster run keeps it
/// in its Secret (crate::in_cluster::argv).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exec {
    pub(crate) command: String,
    pub(crate) shown: String,
}

impl Exec {
    /// `--exec`'s value: a command, or `env:NAME` / `file:PATH` holding one.
    pub(crate) fn from_flag(value: &str) -> Result<Exec, String> {
        let from = |command: String| -> Result<Exec, String> {
            if command.trim().is_empty() {
                return Err(format!("--exec {value}: the command is empty"));
            }
            Ok(Exec {
                command,
                shown: format!("the command in {value}"),
            })
        };
        if let Some(name) = value.strip_prefix("env:") {
            let command = std::env::var(name)
                .map_err(|_| format!("--exec env:{name}: the variable {name} is not set"))?;
            return from(command);
        }
        if let Some(path) = value.strip_prefix("file:") {
            let command = crate::files::read_text(std::path::Path::new(path))
                .map_err(|e| format!("--exec file:{path}: cannot be read: {e}"))?;
            return from(command);
        }
        Ok(Exec {
            command: value.to_string(),
            shown: format!("{value:?}"),
        })
    }
}

/// What each node's action is.
#[derive(Debug, Clone)]
pub(crate) struct Action {
    pub(crate) exec: Option<Exec>,
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
        take::take_nodes(clients, plan, options, order, events, interrupt, &publisher).await
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
    let statuses = o.nodes.iter().map(|n| n.status.as_str());
    let code = crate::exit_codes::of_roll(o);
    crate::pool::observers::Summary::new(statuses, o.elapsed_ms, code, o.failed())
}
