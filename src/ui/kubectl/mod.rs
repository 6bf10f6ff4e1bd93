//! kubectl drain's own lines, for the scripts that read them: when nobody
//! reads our output at a terminal (stdout is not one, no `-o`), or
//! `--lines=kubectl`, stdout carries exactly what kubectl drain prints
//! there, and stderr its warnings and errors, in the words of the minor
//! the server reports (`dialect`); `script` makes the lines from the
//! drain's events, and our report follows on stderr.

mod dialect;
mod script;

use std::io::IsTerminal;

use tokio::sync::mpsc;

pub(crate) use dialect::Dialect;
pub(crate) use script::{Config, Line, Script, Stream};

use crate::ui::formats::LinesArg;
use crate::vocabulary::events::Event;

/// Does a drain write kubectl's lines? `--lines=kubectl` always, `report`
/// never, `auto` when stdout is not a terminal and no `-o` was asked for.
pub(crate) fn wanted(lines: LinesArg, output_given: bool) -> bool {
    match lines {
        LinesArg::Kubectl => true,
        LinesArg::Report => false,
        LinesArg::Auto => !output_given && !std::io::stdout().is_terminal(),
    }
}

/// The kubectl minor whose words to use: the server's (`/version`), the
/// newest we ran when it cannot be read. A server that cannot be reached,
/// trusted or waited for is the run's error, in kubectl's words, as
/// kubectl's own first request fails: this is the run's first request,
/// and the next would meet the same server. Its retries are said as the
/// drain's are, on stderr.
pub(crate) async fn dialect(clients: &crate::client::Clients) -> Result<Dialect, kube::Error> {
    let (sink, mut told) = mpsc::unbounded_channel();
    let teller = crate::pool::retries_told::tell(clients, &sink);
    let say = tokio::spawn(async move {
        while let Some(e) = told.recv().await {
            if let Event::Warning(w) = e {
                crate::errln!("warning: {w}");
            }
        }
    });
    let version = clients.main.apiserver_version().await;
    drop(teller);
    drop(sink);
    let _ = say.await;
    let minor = match version {
        Ok(info) => {
            let digits: String = info
                .minor
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        }
        Err(e) if crate::vocabulary::api_words::said_alone(&e) => return Err(e),
        Err(_) => None,
    };
    Ok(Dialect::of(minor.unwrap_or(33)))
}

/// Writes lines as they come, each on its stream, flushed at once: a
/// script reads them while the drain runs.
pub(crate) fn write(lines: &[Line]) {
    // A closed pipe (`| head`) or a full disk must not stop the drain: it
    // is remembered, and the process exits 1 once the work is done.
    for line in lines {
        let stream = match line.stream {
            Stream::Out => crate::ui::streams::Stream::Out,
            Stream::Err => crate::ui::streams::Stream::Err,
        };
        crate::ui::streams::write(stream, format_args!("{}\n", line.text));
    }
}

/// The listener: every event's lines; the script is handed back for the
/// lines only the outcome gives.
pub(crate) async fn run(mut rx: mpsc::UnboundedReceiver<Event>, mut script: Script) -> Script {
    while let Some(e) = rx.recv().await {
        write(&script.on(&e));
    }
    script
}
