//! The report at the end of a roll: every node with its result, each
//! phase's time and how long it was out of service, then what blocked the
//! nodes that were not done; or the same as JSON/YAML (docs/report.md).
//! Also the order a roll would take, for `--dry-run` and the confirmation.

use std::fmt::Write as _;
use std::time::Duration;

use crate::duration::human;
use crate::roll::outcome::{NodeRoll, RollOutcome, RollStatus};
use crate::roll::phase::Phase;
use crate::ui::formats::OutputFormat;
use crate::ui::report::{document, kubectl_table};

pub(crate) fn render(outcome: &RollOutcome, format: OutputFormat) -> anyhow::Result<String> {
    Ok(document("RollReport", outcome, format)?.unwrap_or_else(|| table(outcome)))
}

fn ms(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |m| human(Duration::from_millis(m)))
}

fn table(outcome: &RollOutcome) -> String {
    let mut t = kubectl_table(&[
        "NODE",
        "RESULT",
        "DRAIN",
        "ACTION",
        "READY",
        "SETTLE",
        "OUT OF SERVICE",
    ]);
    for n in &outcome.nodes {
        let result = match n.resumed_from {
            Some(p) if n.status != RollStatus::DoneBefore => {
                format!("{} (resumed at {p})", n.status.as_str())
            }
            _ => n.status.as_str().to_string(),
        };
        t.add_row(vec![
            n.node.clone(),
            result,
            ms(n.took(Phase::Drain)),
            ms(n.took(Phase::Action)),
            ms(n.took(Phase::WaitReady)),
            ms(n.took(Phase::Settle)),
            if n.out_of_service_ms > 0 {
                human(Duration::from_millis(n.out_of_service_ms))
            } else {
                "-".into()
            },
        ]);
    }
    let done = outcome
        .nodes
        .iter()
        .filter(|n| matches!(n.status, RollStatus::Done | RollStatus::DoneBefore))
        .count();
    let mut out = format!(
        "Roll {}: {done}/{} nodes done in {}\n\n{t}\n",
        outcome.roll,
        outcome.nodes.len(),
        human(Duration::from_millis(outcome.elapsed_ms))
    );
    if !outcome.holds.is_empty() {
        out.push_str("\nHeld:\n");
        for h in &outcome.holds {
            let _ = writeln!(
                out,
                "  {}{} for {}{}: {}",
                h.node
                    .as_deref()
                    .map(|n| format!("node/{n} "))
                    .unwrap_or_default(),
                h.what,
                human(Duration::from_millis(h.lasted_ms)),
                if h.standing {
                    " (still holding at the end)"
                } else {
                    ""
                },
                h.reason
            );
        }
    }
    if let Some(d) = &outcome.notifications {
        let _ = writeln!(
            out,
            "\nNotifications: {} sent, {} not delivered",
            d.sent, d.failed
        );
        for f in &d.failures {
            let _ = writeln!(out, "  {f}");
        }
    }
    let troubled: Vec<&NodeRoll> = outcome
        .nodes
        .iter()
        .filter(|n| n.message.is_some())
        .collect();
    if !troubled.is_empty() {
        out.push('\n');
        for n in troubled {
            let _ = writeln!(
                out,
                "node/{}: {}",
                n.node,
                n.message.as_deref().unwrap_or_default()
            );
            if let Some(d) = &n.drain {
                for p in &d.pods {
                    if let crate::vocabulary::outcome::PodResult::Remaining { cause } = &p.result {
                        let _ = writeln!(out, "  pod/{}: {}", p.pod, cause);
                    }
                }
            }
        }
    }
    out
}

/// The order a roll takes the nodes in: each zone (or the whole selection)
/// in turn, up to `width` at a time, with where an earlier run left each.
pub(crate) fn order(groups: &[Vec<(String, Phase)>], width: usize, by_zone: bool) -> String {
    let mut out = String::new();
    let mut batch = 0;
    for (z, group) in groups.iter().enumerate() {
        if by_zone {
            let _ = writeln!(out, "zone {}:", z + 1);
        }
        let todo: Vec<&(String, Phase)> = group.iter().filter(|(_, p)| *p != Phase::Done).collect();
        for chunk in todo.chunks(width.max(1)) {
            batch += 1;
            let names: Vec<String> = chunk
                .iter()
                .map(|(n, p)| match p {
                    Phase::Drain => n.clone(),
                    p => format!("{n} (resumes at {p})"),
                })
                .collect();
            let _ = writeln!(out, "  batch {batch}: {}", names.join(", "));
        }
        for (n, _) in group.iter().filter(|(_, p)| *p == Phase::Done) {
            let _ = writeln!(out, "  {n}: done by an earlier run of this roll, skipped");
        }
    }
    out
}
