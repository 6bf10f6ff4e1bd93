//! Live progress on a terminal: one overall line, and a bar per node being
//! drained with its wave, pods gone, terminating and blocked and the time;
//! under a node's bar, on a line of its own, why a stuck pod is stuck (the
//! one fact a person needs, never cut off by the counters). Node names are
//! padded to the longest, bars coloured by state. It listens to the
//! engine's events; it never drives the work.

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
    /// `--timeout`, which the time on the bar runs against.
    timeout: Option<Duration>,
    /// How its drain ended (`drained`, `timed out`, ...), once it did.
    status: Option<crate::vocabulary::outcome::NodeStatus>,
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
        // Right after the bar's own time: "8s of 20s", the time left at a glance.
        let sep = super::glyphs::glyphs().sep;
        let of = self
            .timeout
            .map(|t| format!("of {} {sep} ", crate::duration::go(t)))
            .unwrap_or_default();
        // Blocked before terminating: a narrow terminal cuts from the end.
        format!(
            "{of}wave {} {sep} {} blocked {sep} {} terminating",
            if self.wave.is_empty() {
                "-"
            } else {
                &self.wave
            },
            self.blocked.len(),
            self.terminating.len()
        )
    }

    /// The line under the bar: the first blocked pod and why, with how
    /// many more are blocked; none once the node's drain is over.
    fn blocker(&self) -> Option<String> {
        if self.done.is_some() || self.phase.is_some() {
            return None;
        }
        let (pod, why) = self.blocked.iter().next()?;
        let more = match self.blocked.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more blocked)"),
        };
        Some(format!(
            "{} {pod}: {why}{more}",
            super::glyphs::glyphs().under
        ))
    }

    /// The bar's colour: green drained, red not drained, yellow while a
    /// pod is blocked, cyan otherwise.
    fn colour(&self) -> &'static str {
        use crate::vocabulary::outcome::NodeStatus;
        match self.status {
            Some(NodeStatus::Drained) => "green",
            Some(_) => "red",
            None if !self.blocked.is_empty() => "yellow",
            None => "cyan",
        }
    }
}

/// The widest node name the bars pad to; longer names are cut.
const NAME_WIDTH_MAX: usize = 48;

/// Names longer than this (a cloud node's
/// `ip-10-0-12-34.eu-west-1.compute.internal` is 41) get a line of their
/// own above the bar, so that 80 columns still show the counts.
const NAME_ON_ITS_OWN_LINE: usize = 24;

/// A node's row: its name, then a bar of its pods gone, or, for a node with
/// none to move (not started yet, refused before anything moved, nothing
/// on it), no bar at all: an empty bar reads as a full one (`0/0`).
fn bar_style(name_width: usize, colour: &str, counted: bool) -> ProgressStyle {
    let bar = if counted {
        format!("[{{bar:20.{colour}}}] {{pos:>3}}/{{len:<3}} ")
    } else {
        String::new()
    };
    let template = if name_width > NAME_ON_ITS_OWN_LINE {
        format!("  {{prefix:.bold}}\n    {bar}{{elapsed:>4}} {{wide_msg}}")
    } else {
        format!("  {{prefix:<{name_width}}} {bar}{{elapsed:>4}} {{wide_msg}}")
    };
    ProgressStyle::with_template(&template)
        .expect("template")
        .progress_chars("=> ")
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
    bars: HashMap<String, ProgressBar>,
    /// The line under each node's bar, while it has one.
    blockers: HashMap<String, ProgressBar>,
    /// The longest node name so far (the bars' name column).
    name_width: usize,
    /// The name column, colour and whether it has pods to count, each bar
    /// was last styled with: a style is parsed from its template, so it is
    /// set only when one changes, not at every event.
    styled: HashMap<String, (usize, &'static str, bool)>,
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
            ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                .expect("template")
                .tick_chars(super::glyphs::glyphs().spinner),
        );
        overall.enable_steady_tick(Duration::from_millis(120));
        Board {
            multi,
            overall,
            bars: HashMap::new(),
            blockers: HashMap::new(),
            name_width: 8,
            styled: HashMap::new(),
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
                let _ = self
                    .multi
                    .println(super::fit::for_stderr(format!("warning: {warning}")));
                return;
            }
            Event::Phase { node, .. } => {
                // Also as a line: the bars show where each node is, the
                // lines what happened (a command's output among it).
                if let Some(line) = super::lines::line(&e) {
                    let _ = self.multi.println(super::fit::for_stderr(line));
                }
                node.clone()
            }
            Event::Surge { .. } => {
                if let Some(line) = super::lines::line(&e) {
                    let _ = self.multi.println(super::fit::for_stderr(line));
                }
                return;
            }
            Event::PodLost { node, .. } => {
                if let Some(line) = super::lines::line(&e) {
                    let _ = self.multi.println(super::fit::for_stderr(line));
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
            Event::NodeStarted { pods, timeout, .. } => {
                state.total = pods as u64;
                state.timeout = timeout;
            }
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
                state.status = Some(outcome.status);
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
        let width = node.chars().count().min(NAME_WIDTH_MAX);
        if width > self.name_width {
            // A longer name: every bar's column grows to it.
            self.name_width = width;
            for (name, bar) in &self.bars {
                let state = &self.nodes[name];
                let (colour, counted) = (state.colour(), state.total > 0);
                bar.set_style(bar_style(width, colour, counted));
                self.styled.insert(name.clone(), (width, colour, counted));
            }
        }
        let state = &self.nodes[node];
        let (multi, width) = (&self.multi, self.name_width);
        let style = (width, state.colour(), state.total > 0);
        let bar = self.bars.entry(node.to_string()).or_insert_with(|| {
            // Styled before it is added: indicatif's default style, a
            // full-width bar, was drawn for a moment at each node's start.
            let b = ProgressBar::new(0).with_style(bar_style(style.0, style.1, style.2));
            b.set_prefix(node.chars().take(NAME_WIDTH_MAX).collect::<String>());
            let b = multi.add(b);
            b.enable_steady_tick(Duration::from_millis(250));
            b
        });
        if self.styled.get(node) != Some(&style) {
            bar.set_style(bar_style(style.0, style.1, style.2));
            self.styled.insert(node.to_string(), style);
        }
        bar.set_length(state.total);
        bar.set_position(state.gone);
        bar.set_message(state.message());
        match (state.blocker(), self.blockers.get(node)) {
            (Some(line), Some(under)) => under.set_message(line),
            (Some(line), None) => {
                let under = multi.insert_after(bar, ProgressBar::new_spinner());
                under.set_style(
                    ProgressStyle::with_template("    {wide_msg:.yellow}").expect("template"),
                );
                under.set_message(line);
                self.blockers.insert(node.to_string(), under);
            }
            (None, Some(_)) => {
                if let Some(under) = self.blockers.remove(node) {
                    under.finish_and_clear();
                }
            }
            (None, None) => {}
        }
        // Keep what was reached: a node that timed out is not full. A
        // roll's node goes on past its drain.
        if state.rolled || (state.done.is_some() && self.pool.is_none()) {
            bar.abandon();
        }
    }

    /// The overall line: nodes by state and pods gone of all, the same
    /// counts the report's table gives at the end.
    fn draw_overall(&self) {
        let mut by: BTreeMap<&str, usize> = BTreeMap::new();
        for n in self.nodes.values() {
            let state = match n.status {
                Some(s) => s.as_str(),
                // Named on screen, not started yet (a roll's waiting node).
                None if n.total == 0 => continue,
                None => "in progress",
            };
            *by.entry(state).or_default() += 1;
        }
        let nodes: Vec<String> = by.iter().map(|(s, n)| format!("{n} {s}")).collect();
        let (gone, total): (u64, u64) = self
            .nodes
            .values()
            .fold((0, 0), |(g, t), n| (g + n.gone, t + n.total));
        let sep = super::glyphs::glyphs().sep;
        // A roll's own count (pool: done of all) says where the nodes are.
        let nodes = match (&self.pool, nodes.is_empty()) {
            (Some(pool), _) => pool.clone(),
            (None, true) => "nodes: none started".to_string(),
            (None, false) => format!(
                "nodes: {} {sep} {} cordoned",
                nodes.join(", "),
                self.cordoned
            ),
        };
        let mut msg = format!(
            "{nodes} {sep} pods gone {gone}/{total} ({} evicted",
            self.evicted
        );
        if self.forced > 0 {
            let _ = write!(msg, ", {} deleted at --deadline", self.forced);
        }
        msg.push(')');
        if let Some(t) = &self.api_trouble {
            let _ = write!(msg, " {sep} API failing, retrying: {t}");
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
        let sep = crate::ui::glyphs::glyphs().sep;
        assert_eq!(
            n.message(),
            format!("wave user {sep} 0 blocked {sep} 0 terminating")
        );
        // Under --timeout, the bar's time reads "8s of 20s".
        n.timeout = Some(Duration::from_secs(20));
        assert_eq!(
            n.message(),
            format!("of 20s {sep} wave user {sep} 0 blocked {sep} 0 terminating")
        );
        n.done = Some("drained after 2s".into());
        assert_eq!(n.message(), "drained after 2s");
        n.phase = Some("action: running \"reboot\"".into());
        assert_eq!(n.message(), "action: running \"reboot\"");
    }
}
