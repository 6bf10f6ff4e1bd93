//! Ctrl-C (SIGINT) or SIGTERM at the command line: once stops new
//! evictions and lets the drain report (exit 130 for Ctrl-C, 143 for
//! SIGTERM), ending a roll's running
//! action with its whole process group; twice quits at once, ending the
//! actions first.

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// Starts listening for Ctrl-C and SIGTERM; the receiver turns true at the
/// first.
pub(crate) fn on_ctrl_c() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    // Both handlers are in place when this returns, not when the task
    // first runs: a signal sent at once is the tool's to handle, never
    // the default action's, and one sent between the first and the
    // second wait is kept for the second.
    let Ok(mut signals) = Signals::listen() else {
        return rx;
    };
    tokio::spawn(async move {
        // Which signal came (`Some(true)`: SIGTERM): Ctrl-C exits 130,
        // SIGTERM 143, as the shell says them.
        //
        // Once no one is left to stop (the drain or roll ended, and with it
        // its receivers), a signal is not this one's: it is the next
        // listener's (`demo --keep-running`'s, say), never "stopping new
        // evictions" after the evictions are over.
        let first = tokio::select! {
            got = signals.next() => got,
            () = tx.closed() => None,
        };
        if let Some(sigterm) = first {
            crate::exit_codes::signalled(sigterm);
            crate::errln!("interrupted: stopping new evictions (Ctrl-C again to quit at once)");
            // A request retrying against a server that does not answer
            // fails now instead of after its retry window.
            crate::client::retry::stop();
            let _ = tx.send(true);
            if let Some(sigterm) = signals.next().await {
                crate::exit_codes::signalled(sigterm);
                crate::roll::action::end_all();
                // Leave the terminal as it was: the bars and the prompt
                // hide the cursor while they draw.
                let term = dialoguer::console::Term::stderr();
                if term.is_term() {
                    let _ = term.show_cursor();
                    crate::errln!();
                }
                std::process::exit(i32::from(crate::exit_codes::interrupted()));
            }
        }
    });
    rx
}

/// SIGINT and SIGTERM, listened for from the moment it is made: by the
/// drain and the roll (`on_ctrl_c`), and by a command that serves until
/// stopped (`sandbox`, `demo --keep-running`), made before it says it is
/// ready, so that a stop sent at once ends it cleanly, not by the
/// signal's default action.
pub(crate) struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    pub(crate) fn listen() -> std::io::Result<Self> {
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// The next of them: `true` for SIGTERM, `false` for SIGINT.
    pub(crate) async fn next(&mut self) -> Option<bool> {
        tokio::select! {
            got = self.interrupt.recv() => got.map(|()| false),
            got = self.terminate.recv() => got.map(|()| true),
        }
    }

    /// Until the first of them.
    #[cfg(feature = "sandbox")]
    pub(crate) async fn wait(mut self) {
        let _ = self.next().await;
    }
}
