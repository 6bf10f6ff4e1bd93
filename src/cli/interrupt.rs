//! Ctrl-C (SIGINT) or SIGTERM at the command line: once stops new
//! evictions and lets the drain report (exit 130), ending a roll's running
//! action with its whole process group; twice quits at once, ending the
//! actions first.

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use super::exit;

/// Starts listening for Ctrl-C and SIGTERM; the receiver turns true at the
/// first.
pub(crate) fn on_ctrl_c() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            return;
        };
        let mut asked = async || {
            tokio::select! {
                got = tokio::signal::ctrl_c() => got.is_ok(),
                got = term.recv() => got.is_some(),
            }
        };
        if asked().await {
            eprintln!("interrupted: stopping new evictions (Ctrl-C again to quit at once)");
            // A request retrying against a server that does not answer
            // fails now instead of after its retry window.
            crate::client::retry::stop();
            let _ = tx.send(true);
            if asked().await {
                crate::roll::action::end_all();
                // Leave the terminal as it was: the bars and the prompt
                // hide the cursor while they draw.
                let term = dialoguer::console::Term::stderr();
                if term.is_term() {
                    let _ = term.show_cursor();
                    eprintln!();
                }
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        }
    });
    rx
}
