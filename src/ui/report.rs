//! The report at the end of a drain: what went, what stays and why, and
//! every PodDisruptionBudget that blocked, as a table or as JSON/YAML
//! (docs/report.md has the schema).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use comfy_table::{Table, presets};
use kube_conventions::count;

use crate::duration::human;
use crate::ui::formats::OutputFormat;
use crate::ui::words::dead_node::{not_within, ready_after, ready_after_taint};
use crate::vocabulary::outcome::{
    BudgetHold, Cause, Delivered, DrainOutcome, DryRun, HoldRecord, NodeOutcome, NodeStatus,
    PodResult, Prediction, Recovery,
};

pub(crate) const SCHEMA_VERSION: &str = "kubectl-maintain.io/v1alpha1";

/// A report as a document: `apiVersion`, `kind`, then the body's fields.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a, T> {
    api_version: &'static str,
    kind: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

/// A report's body as JSON or YAML, under `apiVersion` and `kind`; None
/// for the table, which each report draws its own way.
pub(crate) fn document<T: serde::Serialize>(
    kind: &'static str,
    body: &T,
    format: OutputFormat,
) -> anyhow::Result<Option<String>> {
    let doc = Document {
        api_version: SCHEMA_VERSION,
        kind,
        body,
    };
    Ok(match format {
        OutputFormat::Json => Some(serde_json::to_string_pretty(&doc)? + "\n"),
        OutputFormat::Yaml => Some(serde_saphyr::to_string(&doc)?),
        OutputFormat::Table => None,
    })
}

#[derive(serde::Serialize)]
struct Drain<'a> {
    #[serde(flatten)]
    outcome: &'a DrainOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    prediction: Option<&'a Prediction>,
}

/// A table as `kubectl get` prints one: no borders, upper-case headers,
/// columns three spaces apart.
pub(crate) fn kubectl_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING);
    t.set_header(header.to_vec());
    for c in t.column_iter_mut() {
        c.set_padding((0, 3));
    }
    t
}

pub(crate) fn render(outcome: &DrainOutcome, format: OutputFormat) -> anyhow::Result<String> {
    render_with(outcome, None, format)
}

/// The report for stdout, with the prediction's own section when it is
/// one; as a table, fitted to the terminal (super::fit).
pub(crate) fn render_with(
    outcome: &DrainOutcome,
    prediction: Option<&Prediction>,
    format: OutputFormat,
) -> anyhow::Result<String> {
    let body = Drain {
        outcome,
        prediction,
    };
    if let Some(text) = document("DrainReport", &body, format)? {
        return Ok(text);
    }
    Ok(super::fit::for_stdout(if outcome.dry_run == DryRun::None {
        summary(outcome) + &drained(outcome) + &prediction.map(prediction_table).unwrap_or_default()
    } else {
        plan_table(outcome)
    }))
}

/// The report after kubectl's lines (crate::ui::kubectl), on stderr: the
/// table and what blocks, without the `node/N drained` lines stdout had.
pub(crate) fn render_for_script(outcome: &DrainOutcome) -> String {
    super::fit::for_stderr(if outcome.dry_run == DryRun::None {
        summary(outcome)
    } else {
        plan_table(outcome)
    })
}

/// Where the displaced pods would go, after a predicted drain's summary.
fn prediction_table(p: &Prediction) -> String {
    let copy_of = p.copy_of();
    let mut out = format!(
        "\nPredicted on a copy of {copy_of} in {} (nothing was changed)",
        human(std::time::Duration::from_millis(p.computed_ms))
    );
    if let Some(h) = p.horizon_ms {
        let _ = write!(
            out,
            "; without --timeout, followed for {} of simulated time",
            human(std::time::Duration::from_millis(h))
        );
    }
    out.push_str(":\n");
    if p.replacements.is_empty() {
        out.push_str("no pod is replaced\n");
        return out + &recovery_table(&p.recovery);
    }
    let mut t = kubectl_table(&["REPLACEMENT", "FOR", "NODE"]);
    for r in &p.replacements {
        let node = match (&r.node, &r.pending) {
            (Some(n), _) => n.clone(),
            (None, Some(why)) => format!("Pending: {why}"),
            (None, None) => "Pending".into(),
        };
        t.add_row(vec![r.pod.clone(), r.owner.clone(), node]);
    }
    out + &t.to_string() + "\n" + &recovery_table(&p.recovery)
}

/// The pods a dead node keeps: when each would run elsewhere with the node
/// left down, and with `--node-shut-down`.
fn recovery_table(recovery: &[Recovery]) -> String {
    if recovery.is_empty() {
        return String::new();
    }
    let mut t = kubectl_table(&[
        "KEPT BY A DEAD NODE",
        "HOLDS",
        "NODE LEFT DOWN",
        "WITH --node-shut-down",
    ]);
    for r in recovery {
        let soft = r.soft_ms.map_or_else(not_within, |ms| ready_after(r, ms));
        let hard = match (r.soft_ms, r.hard_ms) {
            (Some(_), _) => "-".to_string(),
            (None, Some(ms)) => ready_after_taint(r, ms),
            (None, None) => not_within(),
        };
        t.add_row(vec![
            format!("{} (node/{})", r.pod, r.node),
            r.holds.clone(),
            soft,
            hard,
        ]);
    }
    format!(
        "\nA node whose kubelet is not running keeps these; followed on the copy's clock:\n{t}\n"
    )
}

/// A predicted drain in a few lines, for `drain --simulate` to show before
/// the real drain (and its confirmation): each node's fate, the budgets
/// that would hold it up, the replacements that would stay Pending.
#[cfg(feature = "sandbox")]
pub(crate) fn verdict(outcome: &DrainOutcome, p: &Prediction) -> String {
    let copy_of = p.copy_of();
    let mut out = format!(
        "Predicted on a copy of {copy_of} (simulated clock, computed in {}; nothing was changed):\n",
        human(std::time::Duration::from_millis(p.computed_ms))
    );
    for n in &outcome.nodes {
        let took = human(std::time::Duration::from_millis(n.elapsed_ms));
        let _ = match (&n.status, &n.message) {
            (NodeStatus::Drained, _) => writeln!(out, "  node/{}: drained in {took}", n.node),
            (status, Some(m)) => writeln!(out, "  node/{}: {status} after {took}: {m}", n.node),
            (status, None) => writeln!(out, "  node/{}: {status} after {took}", n.node),
        };
        for h in &n.budget_holds {
            let pods: Vec<String> = h.pods.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                out,
                "    PDB {} holds evictions back for {}{}: {}",
                h.budget,
                human(std::time::Duration::from_millis(h.held_ms)),
                if h.holding { ", still at the end" } else { "" },
                pods.join(", ")
            );
        }
    }
    let pending: Vec<_> = p.replacements.iter().filter(|r| r.node.is_none()).collect();
    for r in &pending {
        let _ = writeln!(
            out,
            "  {} (for {}) would stay Pending{}",
            r.pod,
            r.owner,
            r.pending
                .as_deref()
                .map(|why| format!(": {why}"))
                .unwrap_or_default()
        );
    }
    for r in &p.recovery {
        let _ = writeln!(out, "  {}", super::words::dead_node::recovery_line(r));
    }
    let placed = p.replacements.len() - pending.len();
    if placed > 0 {
        let _ = writeln!(
            out,
            "  {} would run on other nodes",
            count(placed, "replacement")
        );
    }
    out
}

fn result_words(r: &PodResult) -> (&'static str, String) {
    match r {
        PodResult::Evicted => ("evicted", String::new()),
        PodResult::Forced { why } => ("forced", why.to_string()),
        PodResult::Completed => ("completed", String::new()),
        PodResult::GoneByItself => ("gone", String::new()),
        PodResult::Skipped { reason } => ("skip", crate::policy::classify::describe_skip(reason)),
        PodResult::WouldEvict => ("evict", String::new()),
        PodResult::WouldBlock { cause } => ("blocked", cause.to_string()),
        PodResult::Remaining {
            cause: c @ Cause::Refused { .. },
        } => ("refuse", c.to_string()),
        PodResult::Remaining {
            cause: c @ Cause::WaitingForCompletion { .. },
        } => ("wait", c.to_string()),
        PodResult::Remaining { cause } => ("remaining", cause.to_string()),
        PodResult::Lost { seconds, stuck } => (
            "lost",
            super::words::dead_node::lost_detail(*seconds, stuck),
        ),
    }
}

/// `plan` and dry runs: every pod with its wave and verdict, in wave order.
fn plan_table(outcome: &DrainOutcome) -> String {
    let wave_index = |name: &Option<String>| {
        name.as_ref()
            .and_then(|n| outcome.waves.iter().position(|w| w == n))
            .unwrap_or(usize::MAX)
    };
    let mut t = kubectl_table(&["NODE", "WAVE", "POD", "PRIORITY", "ACTION", "DETAIL"]);
    for n in &outcome.nodes {
        let mut pods: Vec<_> = n.pods.iter().collect();
        pods.sort_by_key(|p| (wave_index(&p.wave), p.pod.clone()));
        for p in pods {
            let (action, mut detail) = result_words(&p.result);
            if let Some(w) = &p.warning {
                detail = if detail.is_empty() {
                    w.clone()
                } else {
                    format!("{detail}; {w}")
                };
            }
            t.add_row([
                n.node.clone(),
                p.wave.clone().unwrap_or_else(|| "-".into()),
                p.pod.to_string(),
                p.priority.to_string(),
                action.to_string(),
                detail,
            ]);
        }
    }
    let mut out = format!("{}\n", t.trim_fmt());
    for n in &outcome.nodes {
        if let Some(m) = &n.message {
            let _ = writeln!(out, "\nnode/{} would be refused: {m}", n.node);
        }
    }
    out
}

fn summary(outcome: &DrainOutcome) -> String {
    let lost = |r: &PodResult| matches!(r, PodResult::Lost { .. });
    // Only a drain of a dead node has pods counted as gone.
    let any_lost = outcome
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .any(|p| lost(&p.result));
    let forced = |r: &PodResult| matches!(r, PodResult::Forced { .. });
    // Deleted at --deadline, budgets bypassed: never counted as evicted.
    let any_forced = outcome
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .any(|p| forced(&p.result));
    let mut header = vec!["NODE", "STATUS", "WAVES", "EVICTED", "GONE"];
    if any_forced {
        header.push("FORCED");
    }
    if any_lost {
        header.push("LOST");
    }
    header.extend(["SKIPPED", "REMAINING", "TIME"]);
    let mut t = kubectl_table(&header);
    for n in &outcome.nodes {
        let count = |f: &dyn Fn(&PodResult) -> bool| {
            n.pods.iter().filter(|p| f(&p.result)).count().to_string()
        };
        let mut row = vec![
            n.node.clone(),
            n.status.as_str().to_string(),
            n.waves
                .iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(","),
            // Pods we evicted, apart from those that went by themselves
            // (completed, or deleted by someone else) while the drain ran.
            count(&|r| matches!(r, PodResult::Evicted)),
            count(&|r| matches!(r, PodResult::Completed | PodResult::GoneByItself)),
        ];
        if any_forced {
            row.push(count(&forced));
        }
        if any_lost {
            row.push(count(&lost));
        }
        row.extend([
            count(&|r| matches!(r, PodResult::Skipped { .. })),
            count(&|r| matches!(r, PodResult::Remaining { .. })),
            human(std::time::Duration::from_millis(n.elapsed_ms)),
        ]);
        t.add_row(row);
    }
    let mut out = format!("{}\n", t.trim_fmt());
    for n in &outcome.nodes {
        if let Some(m) = &n.message
            && n.status != NodeStatus::Drained
        {
            let _ = writeln!(out, "node/{}: {m}", n.node);
        }
    }
    out.push_str(&blockers(outcome));
    out.push_str(&forced_pods(outcome));
    out.push_str(&lost_pods(outcome));
    out.push_str(&budget_holds(outcome));
    out.push_str(&left_alone(outcome));
    out.push_str(&held_and_told(
        &outcome.holds,
        outcome.notifications.as_ref(),
    ));
    out.push_str(&left_cordoned(outcome));
    out
}

/// What a run waited on besides pods, and what its notifications came to
/// (a drain's and a roll's report alike).
pub(crate) fn held_and_told(holds: &[HoldRecord], told: Option<&Delivered>) -> String {
    let mut out = String::new();
    if !holds.is_empty() {
        out.push_str("\nHeld:\n");
        for h in holds {
            let _ = writeln!(
                out,
                "  {}{} for {}{}: {}",
                h.node
                    .as_deref()
                    .map(|n| format!("node/{n} "))
                    .unwrap_or_default(),
                h.what,
                human(std::time::Duration::from_millis(h.lasted_ms)),
                if h.standing {
                    " (still holding at the end)"
                } else {
                    ""
                },
                h.reason
            );
        }
    }
    if let Some(d) = told {
        let _ = writeln!(
            out,
            "\nNotifications: {} sent, {} not delivered",
            d.sent, d.failed
        );
        for f in &d.failures {
            let _ = writeln!(out, "  {f}");
        }
    }
    out
}

/// Pods `--deadline` deleted, budgets bypassed: each named, with what
/// held it and the budget it bypassed.
fn forced_pods(outcome: &DrainOutcome) -> String {
    let mut out = String::new();
    for n in &outcome.nodes {
        for p in &n.pods {
            if let PodResult::Forced { why } = &p.result {
                let _ = writeln!(out, "* {} on {}: {why}", p.pod, n.node);
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("\nDeleted at --deadline, PodDisruptionBudgets bypassed:\n{out}")
}

/// The one line a person needs at the end: which nodes this drain leaves
/// cordoned, and the command that returns them to service.
fn left_cordoned(outcome: &DrainOutcome) -> String {
    let nodes: Vec<&str> = outcome
        .nodes
        .iter()
        .filter(|n| !n.was_cordoned && !n.not_cordoned)
        .map(|n| n.node.as_str())
        .collect();
    if nodes.is_empty() {
        return String::new();
    }
    let drained = outcome
        .nodes
        .iter()
        .filter(|n| n.status == NodeStatus::Drained)
        .count();
    let of = outcome.nodes.len();
    let them = if nodes.len() == 1 { "it" } else { "them" };
    format!(
        "\n{drained} of {of} drained; left cordoned: {}. `kubectl maintain uncordon {}` returns {them} to service.\n",
        nodes.join(", "),
        nodes.join(" ")
    )
}

/// kubectl drain's last words, so `grep drained` on the report keeps working.
fn drained(outcome: &DrainOutcome) -> String {
    let drained: Vec<String> = outcome
        .nodes
        .iter()
        .filter(|n| n.status == NodeStatus::Drained)
        .map(|n| format!("node/{} drained\n", n.node))
        .collect();
    if drained.is_empty() {
        return String::new();
    }
    format!("\n{}", drained.concat())
}

/// Every budget that refused evictions, node by node: how long it held
/// them back and which pods, whether the drain got past it or not.
fn budget_holds(outcome: &DrainOutcome) -> String {
    let mut t = kubectl_table(&["PDB", "NODE", "HELD", "STILL HOLDING", "PODS"]);
    let mut any = false;
    for n in &outcome.nodes {
        for h in &n.budget_holds {
            any = true;
            let pods: Vec<String> = h.pods.iter().map(ToString::to_string).collect();
            t.add_row([
                h.budget.clone(),
                n.node.clone(),
                human(std::time::Duration::from_millis(h.held_ms)),
                holding_words(n, h).to_string(),
                pods.join(", "),
            ]);
        }
    }
    if !any {
        return String::new();
    }
    format!(
        "\nDisruption budgets that held evictions back:\n{}\n",
        t.trim_fmt()
    )
}

/// Whether a budget still held pods when the node's drain ended; a hold
/// `--deadline` ended by deleting its pods says so.
fn holding_words(n: &NodeOutcome, h: &BudgetHold) -> &'static str {
    let bypassed = h.pods.iter().any(|k| {
        n.pods
            .iter()
            .any(|p| p.pod == *k && matches!(p.result, PodResult::Forced { .. }))
    });
    match (h.holding, bypassed) {
        (true, _) => "yes",
        (false, true) => "bypassed at --deadline",
        (false, false) => "no",
    }
}

/// Pods that stay on their node by design (DaemonSet, static, rules), by reason.
fn left_alone(outcome: &DrainOutcome) -> String {
    let mut groups: BTreeMap<String, OnNodes> = BTreeMap::new();
    for n in &outcome.nodes {
        for p in &n.pods {
            if let PodResult::Skipped { reason } = &p.result {
                groups
                    .entry(crate::policy::classify::describe_skip(reason))
                    .or_default()
                    .push((p.pod.to_string(), &n.node));
            }
        }
    }
    if groups.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nLeft on the node by design:\n");
    for (reason, pods) in groups {
        let _ = writeln!(
            out,
            "* {reason} ({}): {}",
            count(pods.len(), "pod"),
            on_nodes(&pods)
        );
    }
    out
}

/// Pods, each with its node's name.
type OnNodes<'a> = Vec<(String, &'a str)>;

/// Pods and their nodes, each node named once after its pods (`a, b on
/// n1; c on n2`): a cloud's node names are 40 to 63 characters long, and
/// said after every pod they filled the report.
fn on_nodes(pods: &[(String, &str)]) -> String {
    let mut out = String::new();
    for (i, (pod, node)) in pods.iter().enumerate() {
        out.push_str(pod);
        match pods.get(i + 1) {
            Some((_, next)) if next == node => out.push_str(", "),
            Some(_) => {
                let _ = write!(out, " on {node}; ");
            }
            None => {
                let _ = write!(out, " on {node}");
            }
        }
    }
    out
}

/// Pods counted as gone on a dead node that still hold something: what,
/// and what helps.
fn lost_pods(outcome: &DrainOutcome) -> String {
    let mut out = String::new();
    for n in &outcome.nodes {
        for p in &n.pods {
            if let PodResult::Lost { seconds, stuck } = &p.result
                && !stuck.is_empty()
            {
                let _ = writeln!(
                    out,
                    "* {} on {}: {}",
                    p.pod,
                    n.node,
                    super::words::dead_node::lost_detail(*seconds, stuck)
                );
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("\nCounted as gone, still held on a node whose kubelet is not running:\n{out}")
}

/// Pods still there, grouped by cause with the largest group first, then
/// each blocking PDB once.
fn blockers(outcome: &DrainOutcome) -> String {
    let mut groups: BTreeMap<String, (OnNodes, &'static str, bool)> = BTreeMap::new();
    let mut pdbs: BTreeMap<String, (&Cause, usize)> = BTreeMap::new();
    for n in &outcome.nodes {
        for p in &n.pods {
            let PodResult::Remaining { cause } = &p.result else {
                continue;
            };
            let kind = match cause {
                Cause::Pdb { name, message, .. } => {
                    let ns = &p.pod.namespace;
                    let e = pdbs.entry(format!("{ns}/{name}")).or_insert((cause, 0));
                    e.1 += 1;
                    // A budget's 403 (its cause typed since 1.37) is named;
                    // the usual 429's numbers are in the table below.
                    if message.is_empty() || message.starts_with("The disruption budget ") {
                        format!("blocked by PodDisruptionBudget {ns}/{name}")
                    } else {
                        format!("blocked by PodDisruptionBudget {ns}/{name} ({message})")
                    }
                }
                other => other.to_string(),
            };
            let entry = groups.entry(kind).or_insert_with(|| {
                (
                    Vec::new(),
                    super::words::remedy(cause, p.owner.as_deref()),
                    cause.is_consequence(),
                )
            });
            entry.0.push((p.pod.to_string(), &n.node));
        }
    }
    if groups.is_empty() {
        return String::new();
    }
    // Causes first, largest group first; what only follows from another
    // cause (a wave or an eviction that never started) after them.
    let mut ordered: Vec<_> = groups.into_iter().collect();
    ordered.sort_by_key(|(k, (pods, _, consequence))| {
        (*consequence, std::cmp::Reverse(pods.len()), k.clone())
    });
    let mut out = String::from("\nWhat blocks the drain:\n");
    for (cause, (pods, remedy, _)) in ordered {
        let _ = writeln!(
            out,
            "* {cause} ({}): {}",
            count(pods.len(), "pod"),
            on_nodes(&pods)
        );
        let _ = writeln!(out, "  what to do: {remedy}");
    }
    if !pdbs.is_empty() {
        let mut t = kubectl_table(&[
            "PDB",
            "ALLOWED",
            "HEALTHY",
            "DESIRED",
            "EXPECTED",
            "PODS BLOCKED",
        ]);
        for (name, (cause, n)) in pdbs {
            if let Cause::Pdb {
                disruptions_allowed,
                current_healthy,
                desired_healthy,
                expected_pods,
                ..
            } = cause
            {
                let f = |v: &Option<i32>| v.map_or_else(|| "?".into(), |v| v.to_string());
                t.add_row([
                    name,
                    f(disruptions_allowed),
                    f(current_healthy),
                    f(desired_healthy),
                    f(expected_pods),
                    n.to_string(),
                ]);
            }
        }
        let _ = write!(out, "\n{}\n", t.trim_fmt());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_named_once_after_its_pods() {
        let n1 = "gke-prod-pool-1-3f9a1c2d-x7k2";
        let pods = [
            ("shop/a".to_string(), n1),
            ("shop/b".to_string(), n1),
            ("shop/c".to_string(), "n2"),
        ];
        assert_eq!(
            on_nodes(&pods),
            format!("shop/a, shop/b on {n1}; shop/c on n2")
        );
        assert_eq!(on_nodes(&pods[2..]), "shop/c on n2");
        assert_eq!(on_nodes(&[]), "");
    }
    use crate::policy::classify::Refusal;
    use crate::vocabulary::outcome::NodeStatus;
    use crate::vocabulary::outcome::fixtures::{drain, node, remaining};

    /// The report leads with what holds the drain, not with what follows
    /// from it: four pods never started after a refusal come after it.
    #[test]
    fn blockers_lead_with_the_cause_not_its_consequence() {
        let refusal = Refusal::Unmanaged;
        let message = refusal.kubectl_message();
        let mut pods = vec![remaining(
            "default",
            "bare",
            Cause::Refused { refusal, message },
        )];
        for i in 0..4 {
            pods.push(remaining("apps", &format!("web-{i}"), Cause::NotStarted));
        }
        pods.push(remaining(
            "apps",
            "late",
            Cause::WaitingForEarlierWave {
                wave: "user".into(),
            },
        ));
        let text = blockers(&drain(vec![node("n1", NodeStatus::Refused, pods)]));
        let items: Vec<&str> = text.lines().filter(|l| l.starts_with("* ")).collect();
        assert_eq!(items.len(), 3, "{text}");
        assert!(items[0].contains("declare no controller"), "{text}");
        assert!(
            items[1].starts_with("* eviction not started (4 pods)"),
            "{text}"
        );
        assert!(items[2].starts_with("* waiting for wave user"), "{text}");
    }
}
