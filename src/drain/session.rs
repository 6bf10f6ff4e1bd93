//! A drain from start to end, as a library call: find and classify
//! (nothing changes), let the caller approve what it found, carry it out.
//! kubectl's split is the model: `pkg/drain` does the work, the command
//! only binds flags to it; here `crate::commands` binds them and
//! `crate::cli::exit` turns how the drain ended into an exit code.

use std::sync::Arc;

use tokio::sync::watch;

use super::draining::Pace;
use super::engine::Prepared;
use super::prepare;
use super::{DrainError, Options};
use crate::client::Clients;
use crate::notify::notice::Verb;
use crate::policy::plan::Plan;
use crate::pool::Tell;
use crate::pool::abort_watch::AbortWatch;
use crate::pool::followed::{self, Followed, Followers, Run};
use crate::pool::node_watch::Nodes;
use crate::pool::observers::{Observers, Summary};
use crate::pool::unattended::Unattended;
use crate::publish::Publisher;
use crate::publish::conditions::Maintenance;
use crate::vocabulary::events::Sink;
use crate::vocabulary::outcome::{Delivered, DryRun, Ended, Stopped};
use crate::vocabulary::warning::Warning;

/// What one drain works with: the cluster, what it is asked to do, where
/// it tells what happens, and the signal that asks it to stop; who follows
/// it unattended (notifications, metrics, with `metrics` bound) and what
/// paces it (windows, alerts, `--announce`), as for a roll.
pub(crate) struct Session {
    pub(crate) clients: Clients,
    pub(crate) plan: Plan,
    pub(crate) options: Options,
    pub(crate) events: Sink,
    pub(crate) interrupt: watch::Receiver<bool>,
    pub(crate) unattended: Unattended,
    pub(crate) metrics: Option<tokio::net::TcpListener>,
}

/// Runs a validated drain. `approve` sees everything found and decided
/// before the first change, and says whether to go on.
pub(crate) async fn run(
    session: Session,
    approve: impl AsyncFnOnce(&Prepared) -> bool,
) -> Result<Ended, DrainError> {
    let Session {
        clients,
        plan,
        options,
        events,
        interrupt,
        unattended,
        metrics,
    } = session;
    // Only a drain that changes something is told to others.
    let followers = (options.dry_run == DryRun::None).then(|| Followers {
        unattended: &unattended,
        verb: Verb::Drain,
        identity: identity(&options),
        nodes: 0,
        metrics,
    });
    followed::run(
        clients,
        options.publish(),
        events,
        followers,
        async |run: Run<'_>| {
            let paced = Paced {
                unattended: &unattended,
                observers: run.observers,
            };
            prepare_and_run(
                run.clients,
                plan,
                options,
                run.events,
                interrupt,
                run.publisher,
                paced,
                approve,
            )
            .await
        },
    )
    .await
}

impl Followed for Ended {
    fn summary(&self) -> Option<Summary> {
        let Ended::Finished(o) = self else {
            return None;
        };
        let statuses = o.nodes.iter().map(|n| n.status.as_str());
        let code = crate::exit_codes::of_outcome(o);
        Some(Summary::new(statuses, o.elapsed_ms, code, o.failed()))
    }

    fn keep(&mut self, notifications: Option<Delivered>, unwritten: Vec<String>) {
        if let Ended::Finished(o) = self {
            o.notifications = notifications;
            o.conditions_not_written = unwritten;
        }
    }
}

/// What paces a drain and who follows it.
#[derive(Clone, Copy)]
struct Paced<'a> {
    unattended: &'a Unattended,
    observers: Option<&'a Observers>,
}

/// A drain's identity for notifications and metrics: the same nodes give
/// the same one.
fn identity(options: &Options) -> String {
    crate::pool::unattended::identity(&options.nodes.words(), "drain")
}

#[allow(clippy::too_many_arguments)]
async fn prepare_and_run(
    clients: Clients,
    plan: Plan,
    options: Options,
    events: Sink,
    interrupt: watch::Receiver<bool>,
    publisher: Arc<Publisher>,
    paced: Paced<'_>,
    approve: impl AsyncFnOnce(&Prepared) -> bool,
) -> Result<Ended, DrainError> {
    let client = clients.main.clone();
    let max_unavailable = options.max_unavailable.is_some();
    let mut prepared = match prepare::prepare(
        clients,
        plan,
        options,
        events.clone(),
        interrupt,
        publisher.clone(),
    )
    .await
    {
        Ok(p) => p,
        Err(DrainError::NoNodesMatch(selector)) => {
            return Ok(Ended::Stopped(Stopped::NoNodesMatch(selector)));
        }
        Err(e) => return Err(e),
    };
    let unattended = paced.unattended;
    let cordon_at_turn = unattended.gated() || max_unavailable;
    if cordon_at_turn && prepared.changes_anything() {
        let by = match (max_unavailable, unattended.gated()) {
            (true, true) => {
                "--max-unavailable and a gate (--window, --block-on-alerts, --announce)"
            }
            (true, false) => "--max-unavailable",
            _ => "--window, --block-on-alerts or --announce",
        };
        prepared.warn(Warning::CordonsAtTurn { by });
    }
    if !approve(&prepared).await {
        return Ok(Ended::Stopped(Stopped::Declined));
    }
    let names = prepared.names();
    let tell = Tell::new(events.clone(), names.len());
    if let Some(o) = paced.observers {
        o.started(&names);
    }
    let announced = unattended.announce.is_some() && prepared.changes_anything();
    if announced {
        publisher
            .maintenance_of_all(&names, Maintenance::Planned, Some(&events))
            .await;
    }
    let nodes = if max_unavailable && prepared.changes_anything() {
        Some(Nodes::start(&client, &events).await?)
    } else {
        None
    };
    let gate = unattended.gate();
    let abort = AbortWatch::from_env(&client);
    let pace = Pace {
        gate: &gate,
        abort: &abort,
        tell: &tell,
        nodes: nodes.as_ref(),
        cordon_at_turn,
    };
    let mut outcome = Box::pin(prepared.execute(pace)).await;
    if announced {
        publisher
            .maintenance_of_all(&names, Maintenance::NoLongerPlanned, Some(&events))
            .await;
    }
    if let Ok(o) = &mut outcome {
        o.holds = tell.hold_records();
    }
    Ok(Ended::Finished(outcome?))
}
