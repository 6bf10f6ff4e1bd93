//! Exit codes: part of the interface, documented in docs/exit-codes.md,
//! and decided here only: from a drain's or a roll's outcome, from how a
//! drain stopped, from how a run handed to the cluster ended (crate::cli::exit: from the error that ended a command).

use crate::roll::outcome::{RollOutcome, RollStatus};
use crate::vocabulary::outcome::{DrainOutcome, Ended, NodeStatus, PodResult, Stopped};

/// Every selected node drained; the command did what was asked.
pub const OK: u8 = 0;
/// An API or unexpected failure.
pub const FAILURE: u8 = 1;
/// Usage error or invalid input; nothing was changed (clap uses 2 too).
pub const USAGE: u8 = 2;
/// The drain did not complete: blocked or timed out; the report says why.
pub const INCOMPLETE: u8 = 3;
/// Interrupted by Ctrl-C (SIGINT): 128 + 2, as the shell says it.
pub const INTERRUPTED: u8 = 130;
/// Stopped by SIGTERM (a cancelled CI job, `kill`): 128 + 15, as the shell
/// and kubectl say it.
pub const TERMINATED: u8 = 143;

/// Nothing to do: nothing matched the selector (as kubectl's `-l`), every
/// node was done by an earlier run, or a dry run: success.
pub(crate) const NOTHING_TO_DO: u8 = OK;
/// The operator said no at the question: nothing was changed, and what
/// was asked was not done.
pub(crate) const DECLINED: u8 = INCOMPLETE;

/// How an uncordon ends: the code of a node that could not be returned
/// (the last one told), else a node left cordoned for another run (not
/// what was asked: a runbook must not go on as if it were back), else OK.
pub(crate) fn of_uncordon(failed: Option<u8>, kept_for_another: bool) -> u8 {
    match failed {
        Some(code) => code,
        None if kept_for_another => INCOMPLETE,
        None => OK,
    }
}

/// Which signal stopped the run, once one has (crate::cli::interrupt).
static SIGNALLED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(INTERRUPTED);

/// Notes the signal that stopped the run: SIGTERM, or Ctrl-C.
pub(crate) fn signalled(sigterm: bool) {
    let code = if sigterm { TERMINATED } else { INTERRUPTED };
    SIGNALLED.store(code, std::sync::atomic::Ordering::SeqCst);
}

/// The exit code of a run a signal stopped: 130 for Ctrl-C, 143 for SIGTERM.
pub(crate) fn interrupted() -> u8 {
    SIGNALLED.load(std::sync::atomic::Ordering::SeqCst)
}

/// The exit code a drain's outcome calls for.
pub(crate) fn of_outcome(outcome: &DrainOutcome) -> u8 {
    let statuses: Vec<NodeStatus> = outcome.nodes.iter().map(|n| n.status).collect();
    if statuses.contains(&NodeStatus::Interrupted) {
        return interrupted();
    }
    if outcome.failed() {
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

/// The exit code a roll's outcome calls for: 0 every node done, 130
/// interrupted, 1 an API failure, 3 otherwise.
pub(crate) fn of_roll(outcome: &RollOutcome) -> u8 {
    let has = |s: RollStatus| outcome.nodes.iter().any(|n| n.status == s);
    if has(RollStatus::Interrupted) {
        interrupted()
    } else if outcome.failed() {
        FAILURE
    } else if has(RollStatus::Blocked) || has(RollStatus::NotStarted) {
        INCOMPLETE
    } else {
        OK
    }
}

/// The exit code of a drain that stopped before changing anything.
pub(crate) fn of_stopped(stopped: &Stopped) -> u8 {
    match stopped {
        Stopped::NoNodesMatch(_) => OK,
        Stopped::Declined => DECLINED,
    }
}

/// The exit code of a drain however it ended.
pub(crate) fn of_ended(ended: &Ended) -> u8 {
    match ended {
        Ended::Finished(outcome) => of_outcome(outcome),
        Ended::Stopped(stopped) => of_stopped(stopped),
    }
}

/// The exit code of `status -w` or `logs -f` on a run whose Job ended:
/// the run's own success or failure.
pub(crate) fn of_job(failed: bool) -> u8 {
    if failed { FAILURE } else { OK }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uncordon_fails_on_a_failed_node_and_is_incomplete_on_one_kept_cordoned() {
        assert_eq!(of_uncordon(None, false), OK);
        assert_eq!(of_uncordon(None, true), INCOMPLETE);
        assert_eq!(of_uncordon(Some(FAILURE), true), FAILURE);
        assert_eq!(of_uncordon(Some(USAGE), false), USAGE);
    }
}
