//! Exit codes: part of the interface, documented in docs/exit-codes.md,
//! and decided here only: from a drain's outcome, from how it stopped, and
//! from the error that ended it.

use std::process::ExitCode;

use crate::drain::outcome::{DrainOutcome, NodeStatus, PodResult};
use crate::drain::{DrainError, Ended, Stopped};

/// Every selected node drained; the command did what was asked.
pub const OK: u8 = 0;
/// An API or unexpected failure.
pub const FAILURE: u8 = 1;
/// Usage error or invalid input; nothing was changed (clap uses 2 too).
pub const USAGE: u8 = 2;
/// The drain did not complete: blocked or timed out; the report says why.
pub const INCOMPLETE: u8 = 3;
/// Interrupted (SIGINT).
pub const INTERRUPTED: u8 = 130;

/// An error that carries the exit code it should end the process with.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Exit {
    pub code: u8,
    pub message: String,
}

impl Exit {
    pub fn usage(message: impl Into<String>) -> Self {
        Exit {
            code: USAGE,
            message: message.into(),
        }
    }
}

impl From<DrainError> for Exit {
    fn from(e: DrainError) -> Self {
        let code = if e.is_usage() { USAGE } else { FAILURE };
        Exit {
            code,
            message: e.chain(),
        }
    }
}

/// The exit code a drain's outcome calls for.
pub(crate) fn of_outcome(outcome: &DrainOutcome) -> u8 {
    let statuses: Vec<NodeStatus> = outcome.nodes.iter().map(|n| n.status).collect();
    if statuses.contains(&NodeStatus::Interrupted) {
        return INTERRUPTED;
    }
    if statuses.contains(&NodeStatus::Failed) || !outcome.conditions_not_written.is_empty() {
        return FAILURE;
    }
    let blocked_dry_run = outcome.nodes.iter().any(|n| {
        n.status == NodeStatus::DryRun
            && (n.message.is_some()
                || n.pods
                    .iter()
                    .any(|p| matches!(p.result, PodResult::WouldBlock { .. })))
    });
    if blocked_dry_run
        || statuses.iter().any(|s| {
            matches!(
                s,
                NodeStatus::Refused | NodeStatus::TimedOut | NodeStatus::NotStarted
            )
        })
    {
        return INCOMPLETE;
    }
    OK
}

/// The exit code of a drain that stopped before changing anything.
pub(crate) fn of_stopped(stopped: &Stopped) -> u8 {
    match stopped {
        Stopped::NoNodesMatch(_) => OK,
        Stopped::Declined => INCOMPLETE,
    }
}

/// The exit code of a drain however it ended.
pub(crate) fn of_ended(ended: &Ended) -> u8 {
    match ended {
        Ended::Finished(outcome) => of_outcome(outcome),
        Ended::Stopped(stopped) => of_stopped(stopped),
    }
}

/// Maps a command's result to the process exit code, printing the error
/// chain the way kubectl prints errors.
pub fn report(result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let code = match err.downcast_ref::<Exit>() {
                Some(e) => e.code,
                None if err.is::<crate::client::BadFlag>()
                    || err.is::<crate::client::kubeconfig::ConfigError>()
                    || err.is::<crate::outbound::proxy::BadProxy>() =>
                {
                    USAGE
                }
                None => FAILURE,
            };
            let words = words(&err);
            // kubectl prints the server's refusal, a connection it could
            // not make and a context it could not find as they are,
            // without "error: ".
            if [
                "Error from server",
                "The connection to the server",
                "Unable to connect to the server",
                "Error in configuration",
            ]
            .iter()
            .any(|p| words.starts_with(p))
                || words.contains("\nUnable to connect to the server")
            {
                eprintln!("{words}");
            } else {
                eprintln!("error: {words}");
            }
            ExitCode::from(code)
        }
    }
}

/// An error and its causes in one line, as kubectl prints one; a client
/// error in the chain is said in crate::drain::api_error's words (the
/// server, its answer, what to check), never as kube's debug structure.
fn words(err: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<kube::Error>() {
            // Unreachable or untrusted: kubectl's line alone, as kubectl
            // says it whatever the request was.
            if crate::drain::api_error::said_alone(e) {
                return crate::drain::api_error::words(e);
            }
            // Its own causes are in those words already.
            parts.push(crate::drain::api_error::words(e));
            break;
        }
        parts.push(cause.to_string());
    }
    parts.join(": ")
}
