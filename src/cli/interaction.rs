//! A drain run from the command line: its progress on stderr (bars on a
//! terminal, lines otherwise), Ctrl-C, and the confirmation before the
//! first change.

use crate::client::Clients;
use crate::drain::{self, DrainError, Ended, Options, Session};
use crate::policy::plan::Plan;
use crate::ui::confirm;
use crate::ui::listeners::{self, Display};

/// How a drain meets the person running it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Interaction {
    /// `--yes`: never ask before draining.
    pub(crate) assume_yes: bool,
    /// Progress on stderr, as bars on a terminal or as lines; off for the
    /// prediction `drain --simulate` shows before the real drain.
    pub(crate) progress: bool,
}

/// Runs a validated drain with its listeners, Ctrl-C and confirmation.
pub(crate) async fn drain(
    clients: Clients,
    plan: Plan,
    options: Options,
    interaction: Interaction,
) -> Result<Ended, DrainError> {
    let display = if interaction.progress {
        Display::Auto
    } else {
        Display::Quiet
    };
    let (events, listeners) = listeners::start(display);
    let session = Session {
        clients,
        plan,
        options,
        events,
        interrupt: super::interrupt::on_ctrl_c(),
    };
    let ended = drain::run(session, async |prepared| {
        confirm::approve(prepared, interaction.assume_yes).await
    })
    .await;
    // The engine dropped its sender: the listeners show what is left and end.
    listeners.finish().await;
    ended
}
