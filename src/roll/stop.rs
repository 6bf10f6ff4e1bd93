//! Why a node's roll stopped short: plain data that `ui/words/roll.rs`
//! words for the report and the screen.

use std::time::Duration;

use crate::vocabulary::DrainError;
use crate::vocabulary::outcome::NodeStatus;

/// Why a node's roll stopped before it was done.
pub(crate) enum Stop {
    /// Left cordoned: something it needs did not happen.
    Blocked(Blocked),
    Interrupted,
    /// An error, or the lock lost to another run.
    Failed(String),
}

impl From<DrainError> for Stop {
    fn from(e: DrainError) -> Self {
        Stop::Failed(e.chain())
    }
}

/// What a node left cordoned waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// Its drain ended without draining it.
    NotDrained {
        status: NodeStatus,
        message: Option<String>,
    },
    /// `--exec` could not be started.
    ExecNotStarted { error: String },
    /// `--exec` exited with a failure: its status, its last line on stderr.
    ExecFailed {
        status: String,
        last_line: Option<String>,
    },
    /// `--exec` outlived `--action-timeout`; its process group was ended.
    ActionTimedOut { after: Duration },
    /// `--exec` could not be waited for.
    ExecLost { error: String },
    /// `--wait-for-reboot`: still Ready with the same boot ID.
    NoReboot { after: Duration },
    /// Not Ready again in time, and the last reason.
    NotReady { after: Duration, reason: String },
    /// A hook (`spec.hooks`, or a draino pre-activity) did not answer in
    /// time (`onTimeout: fail`), or answered that it failed.
    Hook {
        point: &'static str,
        annotation: String,
        /// What was awaited, and what it said (or that it timed out).
        why: String,
    },
    /// Not back in time, and its kubelet is silent: the node is down.
    Down {
        after: Duration,
        down: Box<crate::policy::node_health::NodeDown>,
    },
}
