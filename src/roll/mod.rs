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

use std::time::Duration;

use tokio::sync::watch;

use crate::client::Clients;
use crate::drain::{DrainError, Options};
use crate::notify::Delivered;
use crate::notify::notice::Verb;
use crate::policy::plan::Plan;
use crate::pool::followed::{self, Followed, Followers, Run};
use crate::pool::observers::Summary;
use crate::pool::unattended::Unattended;
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
    let names = order.names();
    let unattended = options.unattended.clone();
    let followers = Followers {
        unattended: &unattended,
        verb: Verb::Roll,
        identity: options.identity.clone(),
        nodes: names.len(),
        metrics,
    };
    followed::run(
        clients,
        options.drain.publish(),
        events,
        Some(followers),
        async |run: Run<'_>| {
            if let Some(o) = run.observers {
                o.started(&names);
            }
            Box::pin(take::take_nodes(
                run.clients,
                plan,
                options,
                order,
                run.events,
                interrupt,
                &run.publisher,
            ))
            .await
        },
    )
    .await
}

impl Followed for RollOutcome {
    fn summary(&self) -> Option<Summary> {
        let statuses = self.nodes.iter().map(|n| n.status.as_str());
        let code = crate::exit_codes::of_roll(self);
        Some(Summary::new(statuses, self.elapsed_ms, code, self.failed()))
    }

    fn keep(&mut self, notifications: Option<Delivered>, unwritten: Vec<String>) {
        self.notifications = notifications;
        self.conditions_not_written = unwritten;
    }
}
