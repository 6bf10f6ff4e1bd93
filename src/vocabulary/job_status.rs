//! How a node's job in a run ended (crate::pool): the words the runner,
//! notifications, metrics and a roll's report share, decided once here
//! rather than as strings in each of them. A drain's node maps its own
//! status onto these (crate::drain::draining); a roll's node is one.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum JobStatus {
    /// Its job finished: drained (in a roll: acted on, Ready, returned to
    /// service).
    Done,
    /// Done by an earlier run of this roll: skipped.
    DoneBefore,
    /// Could not be drained (refused, timed out), acted on, or did not come
    /// back: left cordoned.
    Blocked,
    /// Not started: the run stopped first (`--max-blocked-nodes`, a guard,
    /// an abort).
    NotStarted,
    Interrupted,
    /// An API failure the run could not retry.
    Failed,
}

impl JobStatus {
    /// Its status in words: a metric's label, a notification's reason, a
    /// roll report's column.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            JobStatus::Done => "done",
            JobStatus::DoneBefore => "done before",
            JobStatus::Blocked => "blocked",
            JobStatus::NotStarted => "not started",
            JobStatus::Interrupted => "interrupted",
            JobStatus::Failed => "failed",
        }
    }

    /// It counts as done for the run's count (`pool: 3/20 done`).
    pub(crate) fn done(self) -> bool {
        self == JobStatus::Done
    }

    /// It counts against `--max-blocked-nodes` (and is told as blocked).
    pub(crate) fn blocked(self) -> bool {
        matches!(self, JobStatus::Blocked | JobStatus::Failed)
    }
}
