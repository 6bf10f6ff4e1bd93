//! Ctrl-C at the command line: once stops new evictions and lets the
//! drain report (exit 130); twice quits at once.

use tokio::sync::watch;

use super::exit;

/// Starts listening for Ctrl-C; the receiver turns true at the first.
pub(crate) fn on_ctrl_c() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("interrupted: stopping new evictions (Ctrl-C again to quit at once)");
            let _ = tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
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
