//! The drain's typed reasons in words: a cause, a forced deletion, a surge,
//! a warning. The drain decides; only these files say it in English.

mod cause;
pub(crate) mod dead_node;
mod roll;
mod warning;

pub(crate) use cause::remedy;

use crate::vocabulary::outcome::Cause;

/// A blocked pod's cause, and the command that lets it go now if one does.
pub(crate) fn blocked(cause: &Cause, release: Option<&str>) -> String {
    match release {
        Some(release) => format!("{cause}; to drain it now: {release}"),
        None => cause.to_string(),
    }
}
