//! Plain progress lines on stderr, one timestamped line per event, for
//! runbooks, CI logs and pipes.

use tokio::sync::mpsc;

use crate::client::Clients;
use crate::pool::retries_told::RetriesTold;
use crate::vocabulary::events::{Event, Sink};
use kube_conventions::count;

use crate::duration::human;

/// An event's line; `None` for what is told by another line (each refusal
/// of a pod already said to be blocked).
pub(crate) fn line(e: &Event) -> Option<String> {
    Some(match e {
        Event::Cordoned {
            node,
            already: true,
        } => format!("node/{node} already cordoned"),
        Event::Cordoned {
            node,
            already: false,
        } => format!("node/{node} cordoned"),
        // A roll's holds and phases are on screen as its Phase lines.
        Event::EvictionRefused { .. }
        | Event::EvictionAnswered { .. }
        | Event::Hold { .. }
        | Event::HoldEnded { .. }
        | Event::RunPhase { .. }
        | Event::Planned { .. }
        | Event::NodeEnded { .. } => return None,
        Event::NotWaitedFor { node, pod, seconds } => format!(
            "node/{node} pod/{pod} terminating longer than --skip-wait-for-delete-timeout ({seconds}s): not waited for"
        ),
        Event::PodLost {
            node,
            pod,
            seconds,
            timeout,
        } => super::words::dead_node::lost_line(node, &pod.to_string(), *seconds, *timeout),
        Event::NodeStarted { node, pods, .. } => {
            format!(
                "node/{node} draining: {} to evict or wait for",
                count(*pods, "pod")
            )
        }
        Event::WaveStarted { node, wave, pods } => {
            format!("node/{node} wave {wave} started: {}", count(*pods, "pod"))
        }
        Event::Evicted { node, pod } => format!("node/{node} pod/{pod} evicted"),
        Event::Blocked {
            node,
            pod,
            cause,
            release,
            ..
        } => format!(
            "node/{node} pod/{pod} {}: {}",
            // Something works on moving it: progress, not a refusal.
            if cause.is_progress() {
                "waiting"
            } else {
                "blocked"
            },
            super::words::blocked(cause, release.as_deref())
        ),
        Event::PodGone { node, pod } => format!("node/{node} pod/{pod} gone"),
        Event::Surge { node, pod, surged } => format!("node/{node} pod/{pod} {surged}"),
        Event::Forced {
            node,
            pod,
            why,
            grace,
        } => format!(
            "node/{node} pod/{pod} deleted at the deadline, budgets bypassed ({grace}s to stop): {why}"
        ),
        Event::WaveDone {
            node,
            wave,
            elapsed,
        } => format!("node/{node} wave {wave} done in {}", human(*elapsed)),
        Event::NodeDone {
            node,
            elapsed,
            outcome,
        } => format!("node/{node} {} after {}", outcome.status, human(*elapsed)),
        Event::ApiTrouble { node, message } => {
            format!("node/{node} API request failed, retrying: {message}")
        }
        Event::Warning(warning) => format!("warning: {warning}"),
        Event::Phase {
            node,
            phase,
            detail,
            pool,
            ..
        } => {
            let detail = if detail.is_empty() {
                String::new()
            } else {
                format!(": {detail}")
            };
            format!(
                "node/{node} {phase}{detail} {} {pool}",
                super::glyphs::glyphs().sep
            )
        }
    })
}

/// The client's retries told on stderr as lines, for as long as this
/// lives: for commands without a drain's listeners (uncordon, status).
pub(crate) struct RetryLines {
    _told: RetriesTold,
    /// The sender the teller's weak one needs alive.
    _sink: Sink,
}

pub(crate) fn retries(clients: &Clients) -> RetryLines {
    let (sink, rx) = mpsc::unbounded_channel();
    tokio::spawn(run(rx));
    RetryLines {
        _told: crate::pool::retries_told::tell(clients, &sink),
        _sink: sink,
    }
}

pub(crate) async fn run(mut rx: mpsc::UnboundedReceiver<Event>) {
    // Asked once: a pipe stays a pipe, a terminal's width is read a line.
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    while let Some(e) = rx.recv().await {
        let ts = kube_conventions::time::now_rfc3339_micros();
        // Milliseconds are enough for people.
        let ts = format!("{}Z", &ts[..ts.len().saturating_sub(4)]);
        if let Some(line) = line(&e) {
            // On a terminal (NO_COLOR, TERM=dumb: no bars), wrapped to it;
            // in a pipe, whole, as a script reads it.
            let line = format!("{ts} {line}");
            let line = if terminal {
                super::fit::for_stderr(line)
            } else {
                line
            };
            crate::errln!("{line}");
        }
    }
}
