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
use crate::vocabulary::outcome::PodResult;
use kube_conventions::count;

/// The roll's report for stdout; as a table, fitted to its terminal.
pub(crate) fn render(outcome: &RollOutcome, format: OutputFormat) -> anyhow::Result<String> {
    Ok(document("RollReport", outcome, format)?
        .unwrap_or_else(|| super::fit::for_stdout(table(outcome))))
}

fn ms(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |m| human(Duration::from_millis(m)))
}

/// How long the node was out; a node left cordoned is still out.
fn out_of_service(n: &NodeRoll) -> String {
    let out = human(Duration::from_millis(n.out_of_service_ms));
    match n.status {
        _ if n.out_of_service_ms == 0 => "-".into(),
        RollStatus::Done | RollStatus::DoneBefore => out,
        _ => format!("{out}, still cordoned"),
    }
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
            out_of_service(n),
        ]);
    }
    let done = outcome
        .nodes
        .iter()
        .filter(|n| matches!(n.status, RollStatus::Done | RollStatus::DoneBefore))
        .count();
    // A pod deleted at --deadline is said beside "done": its budget was
    // bypassed.
    let forced = outcome
        .nodes
        .iter()
        .filter_map(|n| n.drain.as_ref())
        .flat_map(|d| &d.pods)
        .filter(|p| matches!(p.result, PodResult::Forced { .. }))
        .count();
    let forced = match forced {
        0 => String::new(),
        n => format!(
            ", {} deleted at --deadline (budgets bypassed)",
            count(n, "pod")
        ),
    };
    let mut out = format!(
        "Roll {}: {done}/{} nodes done{forced} in {}\n\n{t}\n",
        outcome.roll,
        outcome.nodes.len(),
        human(Duration::from_millis(outcome.elapsed_ms))
    );
    out.push_str(&super::report::held_and_told(
        &outcome.holds,
        outcome.notifications.as_ref(),
    ));
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
                    match &p.result {
                        PodResult::Remaining { cause } => {
                            let _ = writeln!(out, "  pod/{}: {}", p.pod, cause);
                        }
                        PodResult::Forced { why } => {
                            let _ = writeln!(
                                out,
                                "  pod/{}: deleted at --deadline, budgets bypassed ({why})",
                                p.pod
                            );
                        }
                        _ => {}
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
