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
    /// Pods something else took over (KubeVirt, an operator, a
    /// responder): under the bar when nothing is blocked, never counted
    /// as blocked.
    handed_over: BTreeMap<PodKey, String>,
    done: Option<String>,
    /// `--timeout`, which the time on the bar runs against.
    timeout: Option<Duration>,
    /// How its drain ended (`drained`, `timed out`, ...), once it did.
    status: Option<crate::vocabulary::outcome::NodeStatus>,
    /// In a roll: the node's phase and what it waits on, once past its drain.
    phase: Option<String>,
    /// In a roll: the node's roll ended.
    rolled: bool,
    /// Its drain started: its pods are counted on a bar. Before, the node
    /// is only counted (its pods among the run's, as planned).
    started: bool,
    /// Counted from the run's plan (a drain's node) before it started.
    planned: bool,
    /// Its drain just started: a drain's row times it from now.
    restarted: bool,
}

impl NodeState {
    /// The pod is neither blocked nor handed over any more.
    fn unhold(&mut self, pod: &PodKey) {
        self.blocked.remove(pod);
        self.handed_over.remove(pod);
    }

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
    /// many more are blocked; else the first pod handed over and who has
    /// it; none once the node's drain is over.
    fn blocker(&self) -> Option<String> {
        if self.done.is_some() || self.phase.is_some() {
            return None;
        }
        let (held, what) = if self.blocked.is_empty() {
            (&self.handed_over, "handed over")
        } else {
            (&self.blocked, "blocked")
        };
        let (pod, why) = held.iter().next()?;
        let more = match held.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more {what})"),
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

/// The narrowest name column (`NODE`, short names).
const NAME_WIDTH_MIN: usize = 8;

/// The widest node name the bars pad to; longer names are cut.
const NAME_WIDTH_MAX: usize = 48;

/// Names longer than this (a cloud node's
/// `ip-10-0-12-34.eu-west-1.compute.internal` is 41) get a row of their
/// own above the bar, cut to the terminal's width, so that 80 columns
/// still show the counts.
const NAME_ON_ITS_OWN_LINE: usize = 24;

/// A row of the frame, styled before it is added to it: a bar made with
/// indicatif's own target (stderr) draws itself there, outside the
/// frame, at its first change, and one added unstyled is drawn for a
/// moment in the default style (a full-width bar).
fn row(style: ProgressStyle) -> ProgressBar {
    ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden()).with_style(style)
}

/// A node's name on a row of its own, cut to the terminal's width (not
/// padded to it: a row's padding outlives a resize in indicatif's cache).
fn name_row(name: &str, terminal: usize) -> ProgressBar {
    row(ProgressStyle::with_template("  {msg:.bold}").expect("template"))
        .with_message(cut_name(name, terminal))
}

fn cut_name(name: &str, terminal: usize) -> String {
    name.chars()
        .take(terminal.saturating_sub(2).max(1))
        .collect()
}

/// `b` added to the frame by `add`, then drawn there: a row that never
/// changes again is drawn only when told.
fn shown(b: ProgressBar, add: impl FnOnce(ProgressBar) -> ProgressBar) -> ProgressBar {
    let b = add(b);
    b.tick();
    b
}

/// A node's row: its name, then a bar of its pods gone, or, for a node with
/// none to move (not started yet, refused before anything moved, nothing
/// on it), no bar at all: an empty bar reads as a full one (`0/0`).
/// `name_width` none: the name is on a row of its own above.
fn bar_style(name_width: Option<usize>, colour: &str, counted: bool) -> ProgressStyle {
    let bar = if counted {
        format!("[{{bar:20.{colour}}}] {{pos:>3}}/{{len:<3}} ")
    } else {
        String::new()
    };
    let template = match name_width {
        None => format!("    {bar}{{elapsed:>4}} {{wide_msg}}"),
        Some(w) => format!("  {{prefix:<{w}}} {bar}{{elapsed:>4}} {{wide_msg}}"),
    };
    ProgressStyle::with_template(&template)
        .expect("template")
        .progress_chars("=> ")
}

impl NodeState {
    /// Its drain has pods to count on a bar.
    fn counted(&self) -> bool {
        self.started && self.total > 0
    }
}

/// The columns of a bar's row besides the name and the message: the
/// indent, the bar, its count and the time.
const ROW_WITHOUT_NAME: usize = 2 + 1 + 22 + 8 + 5;

/// The columns a bar's row takes before its message: the indent and the
/// name's column (`column`), the bar and its count when `counted`, the time.
fn before_message(column: Option<usize>, counted: bool) -> usize {
    let name = column.map_or(4, |w| 2 + w + 1);
    let bar = if counted {
        1 + 20 + 2 + 3 + 1 + 3 + 1
    } else {
        0
    };
    name + bar + 4 + 1
}

/// The bar's message in `room` columns, whole counters only: the last
/// ones (`· 0 terminating`) dropped rather than cut mid-word; the first
/// is always kept (cut by the bar if it must be).
fn whole_counters(message: &str, room: usize) -> String {
    let sep = format!(" {} ", super::glyphs::glyphs().sep);
    let mut parts = message.split(sep.as_str());
    let mut fitted = parts.next().unwrap_or_default().to_string();
    for part in parts {
        if fitted.chars().count() + sep.chars().count() + part.chars().count() > room {
            break;
        }
        fitted.push_str(&sep);
        fitted.push_str(part);
    }
    fitted
}

/// The names' column, or none when names go on rows of their own: a name
/// longer than [`NAME_ON_ITS_OWN_LINE`], or a terminal too narrow for the
/// column, the bar and a few words of its message.
fn name_column(longest: usize, terminal: usize) -> Option<usize> {
    (longest <= NAME_ON_ITS_OWN_LINE && longest + ROW_WITHOUT_NAME + 16 <= terminal)
        .then_some(longest)
}

/// A blocker's line under its bar (4 columns in), on as many rows as the
/// terminal needs.
fn blocker_rows(line: &str, terminal: usize) -> String {
    super::fit::frame_rows(line, terminal.saturating_sub(4), terminal, 4)
}

/// The terminal's width in columns.
fn terminal_width() -> usize {
    usize::from(dialoguer::console::Term::stderr().size().1)
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
    let frame = super::frame::Frame::stderr();
    let mut board = Board::new(&frame);
    board.show(first);
    // A resize is seen within a quarter of a second, events or not.
    let mut look = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            e = rx.recv() => match e {
                Some(e) => board.show(e),
                None => break,
            },
            _ = look.tick() => {
                board.refit();
            }
        }
    }
    board.end();
    drop(board);
    frame.end();
}

/// What the bars show: the overall line, a bar per node, and the totals.
struct Board {
    multi: MultiProgress,
    overall: ProgressBar,
    bars: HashMap<String, ProgressBar>,
    /// The line under each node's bar, while it has one.
    blockers: HashMap<String, ProgressBar>,
    /// The row above each node's bar with its name, when names go on
    /// rows of their own.
    names: HashMap<String, ProgressBar>,
    /// The terminal's width the rows were last fitted to, and the name
    /// column the bars were last laid out with.
    fitted_to: Option<usize>,
    laid_out: Option<usize>,
    /// The longest node name so far (the bars' name column).
    name_width: usize,
    /// The name column, colour and whether it has pods to count, each bar
    /// was last styled with: a style is parsed from its template, so it is
    /// set only when one changes, not at every event.
    styled: HashMap<String, (Option<usize>, &'static str, bool)>,
    nodes: BTreeMap<String, NodeState>,
    evicted: u64,
    cordoned: u64,
    forced: u64,
    api_trouble: Option<String>,
    /// A roll's total, as its last phase told it.
    pool: Option<String>,
}

impl Board {
    fn new(frame: &super::frame::Frame) -> Self {
        // indicatif's own rate for a terminal: 20 frames a second.
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(frame.clone()), 20);
        let multi = MultiProgress::with_draw_target(target);
        let overall = multi.add(row(ProgressStyle::with_template(
            "{spinner} {elapsed_precise} {msg}",
        )
        .expect("template")
        .tick_chars(super::glyphs::glyphs().spinner)));
        overall.enable_steady_tick(Duration::from_millis(120));
        Board {
            multi,
            overall,
            bars: HashMap::new(),
            blockers: HashMap::new(),
            names: HashMap::new(),
            fitted_to: None,
            laid_out: name_column(NAME_WIDTH_MIN, terminal_width()),
            name_width: NAME_WIDTH_MIN,
            styled: HashMap::new(),
            nodes: BTreeMap::new(),
            evicted: 0,
            cordoned: 0,
            forced: 0,
            api_trouble: None,
            pool: None,
        }
    }

    /// The run ended: a node never started is counted as not started (it
    /// will not start now), the tickers stop and the last frame is drawn.
    fn end(&mut self) {
        use crate::vocabulary::outcome::NodeStatus;
        for state in self.nodes.values_mut() {
            if state.status.is_none() && !state.started {
                state.status = Some(NodeStatus::NotStarted);
            }
        }
        for bar in self.bars.values() {
            bar.disable_steady_tick();
        }
        // Rows that are not finished leave the frame when dropped: the
        // names stay above their bars.
        for above in self.names.values() {
            above.abandon();
        }
        self.overall.disable_steady_tick();
        self.draw_overall();
        self.overall.finish();
    }

    /// One event: a line above the bars for what is told as a line, then
    /// the node's bar and the overall line.
    fn show(&mut self, e: Event) {
        let node = match &e {
            Event::Planned { node, pods } => {
                let state = self.nodes.entry(node.clone()).or_default();
                state.planned = true;
                if !state.started {
                    state.total = *pods as u64;
                }
                self.draw_overall();
                return;
            }
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
            Event::Phase { node, phase, .. } => {
                // Also as a line: the bars show where each node is, the
                // lines what happened (a command's output among it).
                if let Some(line) = super::lines::line(&e) {
                    let _ = self.multi.println(super::fit::for_stderr(line));
                }
                // A node waiting for its turn has no row yet: the line says
                // why it waits, and the overall line counts it.
                if phase == "waiting" && !self.bars.contains_key(node) {
                    self.draw_overall();
                    return;
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
                // What it waited for (a free slot) is over, and a drain's
                // row times its drain from now.
                state.phase = None;
                state.restarted = true;
                state.started = true;
                state.total = pods as u64;
                state.timeout = timeout;
            }
            Event::WaveStarted { wave, .. } => state.wave = wave,
            Event::Evicted { pod, .. } => {
                self.evicted += 1;
                state.unhold(&pod);
                state.terminating.insert(pod);
            }
            Event::Blocked {
                pod,
                cause,
                release,
                ..
            } => {
                let why = super::words::blocked(&cause, release.as_deref());
                state.unhold(&pod);
                if cause.is_progress() {
                    state.handed_over.insert(pod, why);
                } else {
                    state.blocked.insert(pod, why);
                }
            }
            Event::Forced { pod, .. } => {
                self.forced += 1;
                state.unhold(&pod);
                state.terminating.insert(pod);
            }
            Event::PodGone { pod, .. }
            | Event::NotWaitedFor { pod, .. }
            | Event::PodLost { pod, .. } => {
                state.gone += 1;
                state.unhold(&pod);
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
                // A roll's count of nodes; a drain's are the board's own.
                if phase != "waiting" || self.pool.is_some() {
                    self.pool = Some(pool);
                }
                // The drain's own progress is the bar's until it ends.
                state.phase = (phase != "drain").then(|| match detail.as_str() {
                    "" => phase,
                    d => format!("{phase}: {d}"),
                });
                state.rolled = last;
            }
            Event::WaveDone { .. }
            | Event::Warning(_)
            | Event::Surge { .. }
            | Event::EvictionRefused { .. }
            | Event::EvictionAnswered { .. }
            | Event::Hold { .. }
            | Event::HoldEnded { .. }
            | Event::RunPhase { .. }
            | Event::Planned { .. }
            | Event::NodeEnded { .. } => {}
        }
    }

    /// After a resize, the rows fitted to the old width are fitted again.
    /// The terminal's width.
    fn refit(&mut self) -> usize {
        let terminal = terminal_width();
        if self.fitted_to.replace(terminal) == Some(terminal) {
            return terminal;
        }
        for (name, above) in &self.names {
            above.set_message(cut_name(name, terminal));
        }
        for (name, under) in &self.blockers {
            if let Some(line) = self.nodes[name].blocker() {
                under.set_message(blocker_rows(&line, terminal));
            }
        }
        self.lay_out(terminal);
        // A bar whose node ended is drawn only when told: told again, it
        // is drawn at the new width (a running one is at its next tick).
        for bar in self.bars.values().filter(|b| b.is_finished()) {
            bar.set_message(bar.message());
        }
        self.draw_overall();
        terminal
    }

    /// Every bar's layout (a name column, or names on rows of their own),
    /// laid out again only when a longer name or another width changes it.
    fn lay_out(&mut self, terminal: usize) -> Option<usize> {
        let column = name_column(self.name_width, terminal);
        if std::mem::replace(&mut self.laid_out, column) == column {
            return column;
        }
        for (name, bar) in &self.bars {
            let state = &self.nodes[name];
            let style = (column, state.colour(), state.counted());
            if self.styled.get(name) != Some(&style) {
                bar.set_style(bar_style(style.0, style.1, style.2));
                self.styled.insert(name.clone(), style);
            }
            match (column, self.names.contains_key(name)) {
                (None, false) => {
                    let above = shown(name_row(name, terminal), |b| {
                        self.multi.insert_before(bar, b)
                    });
                    self.names.insert(name.clone(), above);
                }
                (Some(_), true) => {
                    if let Some(above) = self.names.remove(name) {
                        self.multi.remove(&above);
                    }
                }
                _ => {}
            }
        }
        column
    }

    fn draw_node(&mut self, node: &str) {
        let terminal = self.refit();
        self.name_width = self
            .name_width
            .max(node.chars().count().min(NAME_WIDTH_MAX));
        let column = self.lay_out(terminal);
        let state = &self.nodes[node];
        let multi = &self.multi;
        let style = (column, state.colour(), state.counted());
        let names = &mut self.names;
        let bar = self.bars.entry(node.to_string()).or_insert_with(|| {
            let b = row(bar_style(style.0, style.1, style.2));
            b.set_prefix(node.chars().take(NAME_WIDTH_MAX).collect::<String>());
            if column.is_none() {
                names.insert(
                    node.to_string(),
                    shown(name_row(node, terminal), |b| multi.add(b)),
                );
            }
            let b = multi.add(b);
            b.enable_steady_tick(Duration::from_millis(250));
            b
        });
        if self.styled.get(node) != Some(&style) {
            bar.set_style(bar_style(style.0, style.1, style.2));
            self.styled.insert(node.to_string(), style);
        }
        if std::mem::take(&mut self.nodes.get_mut(node).expect("applied").restarted)
            && self.pool.is_none()
        {
            bar.reset_elapsed();
        }
        let state = &self.nodes[node];
        // The blocker in full, on as many rows as the terminal needs. Each
        // change draws a frame: a blocker comes before the bar counts it,
        // and goes after the bar stops counting it, so that no frame shows
        // a blocked pod without its line.
        let blocker = state.blocker().map(|line| blocker_rows(&line, terminal));
        let room = terminal.saturating_sub(before_message(column, state.counted()));
        let update_bar = || {
            bar.set_length(state.total);
            bar.set_position(state.gone);
            bar.set_message(whole_counters(&state.message(), room));
        };
        if blocker.is_none() {
            update_bar();
        }
        let appears = blocker.is_some();
        match (blocker, self.blockers.get(node)) {
            (Some(line), Some(under)) => under.set_message(line),
            (Some(line), None) => {
                let under =
                    row(ProgressStyle::with_template("    {msg:.yellow}").expect("template"))
                        .with_message(line);
                let under = shown(under, |b| multi.insert_after(bar, b));
                self.blockers.insert(node.to_string(), under);
            }
            (None, Some(_)) => {
                if let Some(under) = self.blockers.remove(node) {
                    under.finish_and_clear();
                }
            }
            (None, None) => {}
        }
        if appears {
            update_bar();
        }
        // Keep what was reached: a node that timed out is not full. A
        // roll's node goes on past its drain.
        if state.rolled || (state.done.is_some() && self.pool.is_none()) {
            bar.abandon();
            if let Some(above) = self.names.get(node) {
                above.abandon();
            }
        }
    }

    /// The overall line: nodes by state and pods gone of all, the same
    /// counts the report's table gives at the end.
    fn draw_overall(&self) {
        let mut by: BTreeMap<&str, usize> = BTreeMap::new();
        for n in self.nodes.values() {
            let state = match n.status {
                Some(s) => s.as_str(),
                // Its turn to come (counted from the plan), or named on
                // screen before it (a roll's waiting node).
                None if !n.started && n.planned => "waiting",
                None if !n.started => continue,
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
        // After the spinner and the time (11 columns), on as many rows as
        // the terminal needs.
        let width = terminal_width();
        let msg = super::fit::frame_rows(&msg, width.saturating_sub(11), width, 4);
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

    #[test]
    fn a_bars_counters_are_dropped_whole_rather_than_cut() {
        let sep = crate::ui::glyphs::glyphs().sep;
        let message = format!("of 30s {sep} wave user {sep} 0 blocked {sep} 0 terminating");
        assert_eq!(whole_counters(&message, 80), message);
        assert_eq!(
            whole_counters(&message, 40),
            format!("of 30s {sep} wave user {sep} 0 blocked")
        );
        assert_eq!(whole_counters(&message, 3), "of 30s", "the first kept");
        // A long cloud name on its own row, 80 columns: the bar leaves 40.
        assert_eq!(before_message(None, true), 40);
    }

    /// A pod something else moves is not counted blocked and does not turn
    /// the bar yellow; it is named under the bar while nothing is blocked.
    #[test]
    fn a_handed_over_pod_is_named_under_the_bar_but_not_counted_blocked() {
        let key = |name: &str| PodKey {
            namespace: "vms".into(),
            name: name.into(),
        };
        let mut n = NodeState {
            wave: "user".into(),
            ..NodeState::default()
        };
        n.handed_over
            .insert(key("launcher"), "handed over to KubeVirt".into());
        let g = crate::ui::glyphs::glyphs();
        assert_eq!(
            n.message(),
            format!("wave user {} 0 blocked {} 0 terminating", g.sep, g.sep)
        );
        assert_eq!(n.colour(), "cyan");
        assert_eq!(
            n.blocker().as_deref(),
            Some(format!("{} vms/launcher: handed over to KubeVirt", g.under).as_str())
        );
        n.blocked
            .insert(key("db"), "PDB db allows no disruption".into());
        assert_eq!(n.colour(), "yellow");
        assert_eq!(
            n.blocker().as_deref(),
            Some(format!("{} vms/db: PDB db allows no disruption", g.under).as_str())
        );
        n.unhold(&key("db"));
        n.unhold(&key("launcher"));
        assert_eq!(n.blocker(), None);
    }
}
