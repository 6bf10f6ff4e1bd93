//! Live progress on a terminal: one overall line, and a bar per node being
//! drained with its wave, pods gone, terminating and blocked, the time, and
//! why a stuck pod is stuck. It listens to the engine's events; it never
//! drives the work.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::sync::mpsc;

use crate::vocabulary::events::Event;
use crate::vocabulary::pod_key::PodKey;

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

pub(crate) async fn run(mut rx: mpsc::UnboundedReceiver<Event>) {
    // Nothing is drawn before the first event: a confirmation prompt may
    // own the terminal until then.
    let Some(first) = rx.recv().await else { return };
    let mut board = Board::new();
    board.show(first);
    while let Some(e) = rx.recv().await {
        board.show(e);
    }
    board.overall.finish();
}

/// What the bars show: the overall line, a bar per node, and the totals.
struct Board {
    multi: MultiProgress,
    overall: ProgressBar,
    style: ProgressStyle,
    bars: HashMap<String, ProgressBar>,
    nodes: BTreeMap<String, NodeState>,
    evicted: u64,
    cordoned: u64,
    forced: u64,
    api_trouble: Option<String>,
    /// A roll's total, as its last phase told it.
    pool: Option<String>,
}

impl Board {
    fn new() -> Self {
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
        Board {
            multi,
            overall,
            style,
            bars: HashMap::new(),
            nodes: BTreeMap::new(),
            evicted: 0,
            cordoned: 0,
            forced: 0,
            api_trouble: None,
            pool: None,
        }
    }

    /// One event: a line above the bars for what is told as a line, then
    /// the node's bar and the overall line.
    fn show(&mut self, e: Event) {
        let node = match &e {
            Event::Cordoned { node, .. }
            | Event::NodeStarted { node, .. }
            | Event::WaveStarted { node, .. }
            | Event::Evicted { node, .. }
            | Event::Blocked { node, .. }
            | Event::PodGone { node, .. }
            | Event::NotWaitedFor { node, .. }
            | Event::Forced { node, .. }
            | Event::WaveDone { node, .. }
            | Event::NodeDone { node, .. }
            | Event::ApiTrouble { node, .. } => node.clone(),
            Event::Warning(warning) => {
                let _ = self.multi.println(format!("warning: {warning}"));
                return;
            }
            Event::Phase { node, .. } => {
                // Also as a line: the bars show where each node is, the
                // lines what happened (a command's output among it).
                if let Some(line) = super::lines::line(&e) {
                    let _ = self.multi.println(line);
                }
                node.clone()
            }
            Event::Surge { .. } => {
                if let Some(line) = super::lines::line(&e) {
                    let _ = self.multi.println(line);
                }
                return;
            }
            Event::PodLost { node, .. } => {
                if let Some(line) = super::lines::line(&e) {
                    let _ = self.multi.println(line);
                }
                node.clone()
            }
            // The pod's line says it is blocked; each refusal is not news.
            // A roll's holds and phases are on screen as its Phase lines.
            Event::EvictionRefused { .. }
            | Event::EvictionAnswered { .. }
            | Event::Hold { .. }
            | Event::HoldEnded { .. }
            | Event::RunPhase { .. }
            | Event::NodeEnded { .. } => return,
        };
        self.apply(&node, e);
        self.draw_node(&node);
        self.draw_overall();
    }

    /// What the event changes in the node's state and the totals.
    fn apply(&mut self, node: &str, e: Event) {
        let state = self.nodes.entry(node.to_string()).or_default();
        match e {
            Event::Cordoned { .. } => self.cordoned += 1,
            Event::NodeStarted { pods, .. } => state.total = pods as u64,
            Event::WaveStarted { wave, .. } => state.wave = wave,
            Event::Evicted { pod, .. } => {
                self.evicted += 1;
                state.blocked.remove(&pod);
                state.terminating.insert(pod);
            }
            Event::Blocked {
                pod,
                cause,
                release,
                ..
            } => {
                let why = super::words::blocked(&cause, release.as_deref());
                state.blocked.insert(pod, why);
            }
            Event::Forced { pod, .. } => {
                self.forced += 1;
                state.blocked.remove(&pod);
                state.terminating.insert(pod);
            }
            Event::PodGone { pod, .. }
            | Event::NotWaitedFor { pod, .. }
            | Event::PodLost { pod, .. } => {
                state.gone += 1;
                state.blocked.remove(&pod);
                state.terminating.remove(&pod);
            }
            Event::NodeDone {
                elapsed, outcome, ..
            } => {
                let after = crate::duration::human(elapsed);
                state.done = Some(format!("{} after {after}", outcome.status));
            }
            Event::ApiTrouble { message, .. } => self.api_trouble = Some(message),
            Event::Phase {
                phase,
                detail,
                pool,
                last,
                ..
            } => {
                // The drain's own progress is the bar's until it ends.
                state.phase = (phase != "drain").then(|| match detail.as_str() {
                    "" => phase,
                    d => format!("{phase}: {d}"),
                });
                state.rolled = last;
                self.pool = Some(pool);
            }
            Event::WaveDone { .. }
            | Event::Warning(_)
            | Event::Surge { .. }
            | Event::EvictionRefused { .. }
            | Event::EvictionAnswered { .. }
            | Event::Hold { .. }
            | Event::HoldEnded { .. }
            | Event::RunPhase { .. }
            | Event::NodeEnded { .. } => {}
        }
    }

    fn draw_node(&mut self, node: &str) {
        let state = &self.nodes[node];
        let (multi, style) = (&self.multi, &self.style);
        let bar = self.bars.entry(node.to_string()).or_insert_with(|| {
            let b = multi.add(ProgressBar::new(0));
            b.set_style(style.clone());
            b.set_prefix(node.to_string());
            b.enable_steady_tick(Duration::from_millis(250));
            b
        });
        bar.set_length(state.total);
        bar.set_position(state.gone);
        bar.set_message(state.message());
        // Keep what was reached: a node that timed out is not full. A
        // roll's node goes on past its drain.
        if state.rolled || (state.done.is_some() && self.pool.is_none()) {
            bar.abandon();
        }
    }

    fn draw_overall(&self) {
        let drained = self.nodes.values().filter(|n| n.done.is_some()).count();
        let mut msg = format!(
            "{drained}/{} nodes done · {} cordoned · {} pods evicted",
            self.nodes.len(),
            self.cordoned,
            self.evicted
        );
        if self.forced > 0 {
            let _ = write!(msg, " · {} deleted at the deadline", self.forced);
        }
        if let Some(t) = &self.api_trouble {
            let _ = write!(msg, " · API failing, retrying: {t}");
        }
        if let Some(p) = &self.pool {
            let _ = write!(msg, " · {p}");
        }
        self.overall.set_message(msg);
    }
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
