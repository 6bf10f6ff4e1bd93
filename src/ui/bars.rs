//! Live progress on a terminal: one overall line, and a bar per node being
//! drained with its wave, pods gone, terminating and blocked, the time, and
//! why a stuck pod is stuck. It listens to the engine's events; it never
//! drives the work.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::sync::mpsc;

use crate::drain::events::Event;
use crate::drain::pod_key::PodKey;

#[derive(Default)]
struct NodeState {
    wave: String,
    total: u64,
    gone: u64,
    terminating: BTreeSet<PodKey>,
    blocked: BTreeMap<PodKey, String>,
    done: Option<String>,
    /// In a roll: the node's phase and what it waits on, once past its drain.
    phase: Option<String>,
    /// In a roll: the node's roll ended.
    rolled: bool,
}

impl NodeState {
    fn message(&self) -> String {
        if let Some(phase) = &self.phase {
            return phase.clone();
        }
        if let Some(status) = &self.done {
            return status.clone();
        }
        let mut m = format!(
            "wave {} · {} terminating · {} blocked",
            if self.wave.is_empty() {
                "-"
            } else {
                &self.wave
            },
            self.terminating.len(),
            self.blocked.len()
        );
        if let Some((pod, why)) = self.blocked.iter().next() {
            let _ = write!(m, " · {pod}: {why}");
        }
        m
    }
}

/// Whether to draw bars: stderr is a terminal and colour/cursor control is welcome.
pub(crate) fn wanted() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

#[allow(clippy::too_many_lines)] // left over: to split into one handler per event (issue #26)
pub(crate) async fn run(mut rx: mpsc::UnboundedReceiver<Event>) {
    // Nothing is drawn before the first event: a confirmation prompt may
    // own the terminal until then.
    let Some(first) = rx.recv().await else { return };
    let mut first = Some(first);
    let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    let overall = multi.add(ProgressBar::new_spinner());
    overall.set_style(
        ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}").expect("template"),
    );
    overall.enable_steady_tick(Duration::from_millis(120));
    let style = ProgressStyle::with_template(
        "  {prefix:<14} [{bar:24}] {pos:>3}/{len:<3} {elapsed:>4} {wide_msg}",
    )
    .expect("template")
    .progress_chars("=> ");
    let mut bars: HashMap<String, ProgressBar> = HashMap::new();
    let mut nodes: BTreeMap<String, NodeState> = BTreeMap::new();
    let (mut evicted, mut cordoned, mut forced) = (0u64, 0u64, 0u64);
    let mut api_trouble: Option<String> = None;
    // A roll's total, as its last phase told it.
    let mut pool: Option<String> = None;
    loop {
        let e = match first.take() {
            Some(e) => e,
            None => match rx.recv().await {
                Some(e) => e,
                None => break,
            },
        };
        let node = match &e {
            Event::Cordoned { node, .. }
            | Event::NodeStarted { node, .. }
            | Event::WaveStarted { node, .. }
            | Event::Evicted { node, .. }
            | Event::Blocked { node, .. }
            | Event::PodGone { node, .. }
            | Event::Forced { node, .. }
            | Event::WaveDone { node, .. }
            | Event::NodeDone { node, .. }
            | Event::ApiTrouble { node, .. } => Some(node.clone()),
            Event::Warning(warning) => {
                let _ = multi.println(format!("warning: {warning}"));
                None
            }
            Event::Phase { node, .. } => {
                // Also as a line: the bars show where each node is, the
                // lines what happened (a command's output among it).
                let _ = multi.println(super::lines::line(&e));
                Some(node.clone())
            }
            Event::Surge { .. } => {
                let _ = multi.println(super::lines::line(&e));
                None
            }
        };
        let Some(node) = node else { continue };
        let state = nodes.entry(node.clone()).or_default();
        match e {
            Event::Cordoned { .. } => cordoned += 1,
            Event::NodeStarted { pods, .. } => state.total = pods as u64,
            Event::WaveStarted { wave, .. } => state.wave = wave,
            Event::Evicted { pod, .. } => {
                evicted += 1;
                state.blocked.remove(&pod);
                state.terminating.insert(pod);
            }
            Event::Blocked {
                pod,
                cause,
                release,
                ..
            } => {
                state
                    .blocked
                    .insert(pod, super::words::blocked(&cause, release.as_deref()));
            }
            Event::Forced { pod, .. } => {
                forced += 1;
                state.blocked.remove(&pod);
                state.terminating.insert(pod);
            }
            Event::PodGone { pod, .. } => {
                state.gone += 1;
                state.blocked.remove(&pod);
                state.terminating.remove(&pod);
            }
            Event::NodeDone {
                status, elapsed, ..
            } => {
                state.done = Some(format!(
                    "{status} after {}",
                    crate::duration::human(elapsed)
                ));
            }
            Event::ApiTrouble { message, .. } => api_trouble = Some(message),
            Event::Phase {
                phase,
                detail,
                pool: total,
                last,
                ..
            } => {
                // The drain's own progress is the bar's until it ends.
                state.phase = (phase != "drain").then(|| match detail.as_str() {
                    "" => phase,
                    d => format!("{phase}: {d}"),
                });
                state.rolled = last;
                pool = Some(total);
            }
            Event::WaveDone { .. } | Event::Warning(_) | Event::Surge { .. } => {}
        }
        let bar = bars.entry(node.clone()).or_insert_with(|| {
            let b = multi.add(ProgressBar::new(0));
            b.set_style(style.clone());
            b.set_prefix(node.clone());
            b.enable_steady_tick(Duration::from_millis(250));
            b
        });
        bar.set_length(state.total);
        bar.set_position(state.gone);
        bar.set_message(state.message());
        // Keep what was reached: a node that timed out is not full. A
        // roll's node goes on past its drain.
        if state.rolled || (state.done.is_some() && pool.is_none()) {
            bar.abandon();
        }
        let drained = nodes.values().filter(|n| n.done.is_some()).count();
        let mut msg = format!(
            "{drained}/{} nodes done · {cordoned} cordoned · {evicted} pods evicted",
            nodes.len()
        );
        if forced > 0 {
            let _ = write!(msg, " · {forced} deleted at the deadline");
        }
        if let Some(t) = &api_trouble {
            let _ = write!(msg, " · API failing, retrying: {t}");
        }
        if let Some(p) = &pool {
            let _ = write!(msg, " · {p}");
        }
        overall.set_message(msg);
    }
    overall.finish();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rolled_node_shows_its_drain_then_its_phase() {
        let mut n = NodeState {
            wave: "user".into(),
            total: 3,
            ..NodeState::default()
        };
        assert_eq!(n.message(), "wave user · 0 terminating · 0 blocked");
        n.done = Some("drained after 2s".into());
        assert_eq!(n.message(), "drained after 2s");
        n.phase = Some("action: running \"reboot\"".into());
        assert_eq!(n.message(), "action: running \"reboot\"");
    }
}
