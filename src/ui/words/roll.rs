//! A roll's stops in words: a node left cordoned, the roll stopped.

use std::fmt;

use crate::duration::human;
use crate::pool::Stopped;
use crate::roll::stop::Blocked;

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::NotDrained { status, message } => write!(
                f,
                "not drained ({status}){}",
                message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
            Blocked::ExecNotStarted { error } => write!(f, "--exec could not start: {error}"),
            Blocked::ExecFailed { status, last_line } => write!(
                f,
                "--exec failed ({status}){}",
                last_line
                    .as_ref()
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default()
            ),
            Blocked::ExecLost { error } => write!(f, "--exec: {error}"),
            Blocked::ActionTimedOut { after } => write!(
                f,
                "--exec did not end within --action-timeout {}: it and every process it started were ended; check the command, or give it longer",
                human(*after)
            ),
            Blocked::Hook {
                point,
                annotation,
                why,
            } => write!(f, "{point} hook {annotation}: {why}"),
            Blocked::NoReboot { after } => write!(
                f,
                "did not reboot within {} (still Ready, same boot ID)",
                human(*after)
            ),
            Blocked::NotReady { after, reason } => {
                write!(f, "not Ready after {} ({reason})", human(*after))
            }
            Blocked::Down { after, down } => write!(
                f,
                "not back within --ready-timeout {}: the node is {}; {}",
                human(*after),
                super::dead_node::State(down),
                super::dead_node::NOT_BACK
            ),
        }?;
        f.write_str("; left cordoned")
    }
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stopped::CannotTakeOut { node, hold } => {
                write!(f, "node/{node} cannot be taken out: {hold}")
            }
            Stopped::TooManyBlocked { blocked, max } => write!(
                f,
                "{blocked} nodes are blocked, more than --max-blocked-nodes={max} allows"
            ),
            Stopped::Aborted { asked } => write!(f, "aborted ({asked})"),
        }
    }
}
