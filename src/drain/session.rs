//! A drain from start to end, as a library call: find and classify
//! (nothing changes), let the caller approve what it found, carry it out.
//! kubectl's split is the model: `pkg/drain` does the work, the command
//! only binds flags to it; here `crate::commands` binds them and
//! `crate::cli::exit` turns how the drain ended into an exit code.

use std::fmt;
use std::sync::Arc;

use tokio::sync::watch;

use super::engine::{self, Prepared};
use super::events::Sink;
use super::outcome::DrainOutcome;
use super::{DrainError, Options};
use crate::client::Clients;
use crate::policy::plan::Plan;
use crate::publish::{Publish, Publisher};

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
/// it tells what happens, and the signal that asks it to stop.
pub(crate) struct Session {
    pub(crate) clients: Clients,
    pub(crate) plan: Plan,
    pub(crate) options: Options,
    pub(crate) events: Sink,
    pub(crate) interrupt: watch::Receiver<bool>,
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
    } = session;
    let publisher = Arc::new(Publisher::start(&clients.main, Publish::of(&options)));
    let events = publisher.listen(events);
    let _told = super::retry::tell(&clients, &events);
    let mut ended = prepare_and_run(
        clients,
        plan,
        options,
        events,
        interrupt,
        publisher.clone(),
        approve,
    )
    .await;
    // Every sink is dropped with the drain: what is left gets recorded.
    publisher.finish().await;
    if let Ok(Ended::Finished(outcome)) = &mut ended {
        outcome.conditions_not_written = publisher.unwritten();
    }
    ended
}

async fn prepare_and_run(
    clients: Clients,
    plan: Plan,
    options: Options,
    events: Sink,
    interrupt: watch::Receiver<bool>,
    publisher: Arc<Publisher>,
    approve: impl AsyncFnOnce(&Prepared) -> bool,
) -> Result<Ended, DrainError> {
    let prepared = match engine::prepare(clients, plan, options, events, interrupt, publisher).await
    {
        Ok(p) => p,
        Err(DrainError::NoNodesMatch(selector)) => {
            return Ok(Ended::Stopped(Stopped::NoNodesMatch(selector)));
        }
        Err(e) => return Err(e),
    };
    if !approve(&prepared).await {
        return Ok(Ended::Stopped(Stopped::Declined));
    }
    Ok(Ended::Finished(prepared.execute().await?))
}
