//! A drain run from the command line: its progress on stderr (bars on a
//! terminal, lines otherwise), Ctrl-C, and the confirmation before the
//! first change.

use crate::client::Clients;
use crate::drain::{self, DrainError, Ended, Options, Session};
use crate::policy::plan::Plan;
use crate::ui::confirm;
use crate::ui::kubectl::Script;
use crate::ui::listeners::{self, Display};

/// How a drain meets the person running it.
#[derive(Debug)]
pub(crate) struct Interaction {
    /// `--yes`: never ask before draining.
    pub(crate) assume_yes: bool,
    /// Progress as bars on a terminal or as lines, kubectl drain's lines
    /// for a script, or none (the prediction `drain --simulate` shows
    /// before the real drain).
    pub(crate) display: Display,
    /// Who follows it and what paces it, as for a roll.
    pub(crate) unattended: crate::pool::unattended::Unattended,
    /// `--metrics-addr`, bound before anything else.
    pub(crate) metrics: Option<tokio::net::TcpListener>,
}

/// Runs a validated drain with its listeners, Ctrl-C and confirmation;
/// kubectl's lines, when they are the display, come back for their end.
pub(crate) async fn drain(
    clients: Clients,
    plan: Plan,
    options: Options,
    interaction: Interaction,
) -> (Result<Ended, DrainError>, Option<Script>) {
    let (events, listeners) = listeners::start(interaction.display);
    let session = Session {
        clients,
        plan,
        options,
        events,
        interrupt: super::interrupt::on_ctrl_c(),
        unattended: interaction.unattended,
        metrics: interaction.metrics,
    };
    // Boxed: the whole drain's state would otherwise sit in every caller's.
    let ended = Box::pin(drain::run(session, async |prepared| {
        confirm::approve(prepared, interaction.assume_yes).await
    }))
    .await;
    // The engine dropped its sender: the listeners show what is left and end.
    let script = listeners.finish().await;
    (ended, script)
}
