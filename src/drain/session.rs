//! A drain from start to end, as a library call: find and classify
//! (nothing changes), let the caller approve what it found, carry it out.
//! kubectl's split is the model: `pkg/drain` does the work, the command
//! only binds flags to it; here `crate::commands` binds them and
//! `crate::cli::exit` turns how the drain ended into an exit code.

use std::fmt;
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
use crate::pool::node_watch::Nodes;
use crate::pool::observers::{Observers, Summary};
use crate::pool::unattended::Unattended;
use crate::publish::Publisher;
use crate::publish::conditions::Maintenance;
use crate::vocabulary::events::Sink;
use crate::vocabulary::outcome::{DrainOutcome, DryRun};
use crate::vocabulary::warning::Warning;

/// How a drain that raised no error ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// It ran (or previewed); the outcome says node by node how it went.
    Finished(DrainOutcome),
    /// It stopped before anything changed.
    Stopped(Stopped),
}

/// Why a drain stopped before anything changed, without an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// `-l` matched no node: kubectl drain exits 0 then, and loops over
    /// pools rely on it.
    NoNodesMatch(String),
    /// The person at the terminal said no.
    Declined,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stopped::NoNodesMatch(selector) => write!(
                f,
                "No nodes match the selector {selector:?}: nothing to drain."
            ),
            Stopped::Declined => f.write_str("nothing was changed"),
        }
    }
}

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
    let publisher = Arc::new(Publisher::start(&clients.main, options.publish()));
    let display = publisher.listen(events);
    // Only a drain that changes something is told to others.
    let observers = (options.dry_run == DryRun::None).then(|| {
        let run = identity(&options);
        Arc::new(Observers::start(
            &unattended,
            Verb::Drain,
            &run,
            0,
            metrics,
            &display,
        ))
    });
    let (events, tee) = match &observers {
        Some(o) => {
            let (events, tee) = o.listen(display);
            (events, Some(tee))
        }
        None => (display, None),
    };
    let paced = Paced {
        unattended: &unattended,
        observers: observers.as_deref(),
    };
    let mut ended = {
        let _told = super::retry::tell(&clients, &events);
        prepare_and_run(
            clients,
            plan,
            options,
            events,
            interrupt,
            publisher.clone(),
            paced,
            approve,
        )
        .await
    };
    if let (Some(observers), Some(tee)) = (&observers, tee) {
        let summary = match &ended {
            Ok(Ended::Finished(o)) => Some(Ok(summary(o))),
            Ok(Ended::Stopped(_)) => None,
            Err(e) => Some(Err(e.chain())),
        };
        if let Some(summary) = summary {
            let delivered = observers.finish(tee, summary).await;
            if let Ok(Ended::Finished(outcome)) = &mut ended {
                outcome.notifications = delivered;
            }
        }
    }
    // Every sink is dropped with the drain: what is left gets recorded.
    publisher.finish().await;
    if let Ok(Ended::Finished(outcome)) = &mut ended {
        outcome.conditions_not_written = publisher.unwritten();
    }
    ended
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

/// How a drain ended, for its last notification.
fn summary(o: &DrainOutcome) -> Summary {
    let statuses = o.nodes.iter().map(|n| n.status.as_str());
    let code = crate::exit_codes::of_outcome(o);
    Summary::new(statuses, o.elapsed_ms, code, o.failed())
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
