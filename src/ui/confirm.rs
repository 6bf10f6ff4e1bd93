//! Asking before a drain changes anything, when a person is at a terminal:
//! which nodes, how many pods in each wave, what is left alone, and which
//! pods a PodDisruptionBudget would refuse right now. Never asked without
//! a terminal, so runbooks and CI behave like kubectl drain.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::drain::Prepared;
use crate::drain::budgets::Budget;
use crate::policy::classify::HandledBy;
use crate::vocabulary::outcome::{Cause, DrainOutcome, PodResult};
use crate::vocabulary::pod_key::PodKey;
use crate::vocabulary::warning::Warning;

/// Set (to anything) to never ask, for automation that runs under a
/// pseudo-terminal (`--yes` does the same per command).
pub(crate) const NO_CONFIRM: &str = "KUBECTL_MAINTAIN_NO_CONFIRM";

pub(crate) fn interactive() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal()
        && std::env::var_os(NO_CONFIRM).is_none()
}

/// Approves a drain found and decided: asks a person at a terminal (unless
/// `assume_yes`, or nothing would change); otherwise prints the warnings
/// it has for the operator and goes on, as kubectl drain does.
pub(crate) async fn approve(prepared: &Prepared, assume_yes: bool) -> bool {
    let confirming = prepared.changes_anything() && !assume_yes && interactive();
    if !confirming {
        for w in prepared.warnings() {
            crate::errln!("{}", super::fit::for_stderr(format!("warning: {w}")));
        }
        return typed(prepared).await;
    }
    let preview = prepared.preview();
    let tight = prepared.tight_budgets().await;
    let held = prepared.held_already();
    let handed = prepared.handed_over();
    let summary = describe(
        &preview,
        &Foreseen {
            tight: &tight,
            handed: &handed,
            held: &held,
        },
        prepared.warnings(),
        prepared.has_deadline(),
    );
    crate::err!("{}", super::fit::for_stderr(summary));
    ask("Drain now?".into()).await && typed(prepared).await
}

/// `--node-shut-down` without another proof: each node's name typed, even
/// with `--yes` (a yes is no proof that a machine is powered off).
async fn typed(prepared: &Prepared) -> bool {
    for name in prepared.names_to_type() {
        // Fitted, as the summary is: a terminal's own wrap splits words.
        let question = super::fit::for_stderr(format!(
            "node/{name} will be taken out of service: its pods are force-deleted and its volumes detached, which corrupts them if it still runs. Type its name to confirm it is powered off"
        ));
        let answer = tokio::task::spawn_blocking(move || {
            if dumb_terminal() {
                crate::err!("{question}: ");
                let mut line = String::new();
                let _ = std::io::stdin().read_line(&mut line);
                return line;
            }
            dialoguer::Input::<String>::new()
                .with_prompt(question)
                .allow_empty(true)
                .interact_text_on(&dialoguer::console::Term::stderr())
                .unwrap_or_default()
        })
        .await
        .unwrap_or_default();
        if answer.trim() != name {
            crate::errln!(
                "error: {:?} is not the node's name: node/{name} is not taken out of service",
                answer.trim()
            );
            return false;
        }
    }
    true
}

/// What the drain will meet, read before it starts.
pub(crate) struct Foreseen<'a> {
    /// Pods a budget holds now (allowing no disruption), with its name and
    /// numbers.
    pub(crate) tight: &'a BTreeMap<PodKey, (String, Budget)>,
    /// Pods whose refused eviction an operator takes over, and which.
    pub(crate) handed: &'a BTreeMap<PodKey, HandledBy>,
    /// Pods going already, past their grace period, and what holds them.
    pub(crate) held: &'a BTreeMap<PodKey, Cause>,
}

/// What the drain is about to do, for a person to read.
pub(crate) fn describe(
    preview: &DrainOutcome,
    foreseen: &Foreseen<'_>,
    warnings: &[Warning],
    deadline: bool,
) -> String {
    let evicted: std::collections::BTreeSet<&PodKey> = preview
        .nodes
        .iter()
        .flat_map(|n| &n.pods)
        .filter(|p| matches!(p.result, PodResult::WouldEvict))
        .map(|p| &p.pod)
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "This will cordon and drain {} node(s):",
        preview.nodes.len()
    );
    for n in &preview.nodes {
        let mut waves: Vec<(String, usize)> = Vec::new();
        let mut left = 0;
        for p in &n.pods {
            match (&p.result, &p.wave) {
                (PodResult::WouldEvict | PodResult::Remaining { .. }, Some(w)) => {
                    match waves.iter_mut().find(|(name, _)| name == w) {
                        Some((_, c)) => *c += 1,
                        None => waves.push((w.clone(), 1)),
                    }
                }
                _ => left += 1,
            }
        }
        let waves: Vec<String> = waves.iter().map(|(w, c)| format!("{w}: {c}")).collect();
        let _ = writeln!(
            out,
            "  {}{}: {} {} {left} left alone",
            n.node,
            if n.was_cordoned {
                " (already cordoned)"
            } else {
                ""
            },
            if waves.is_empty() {
                "nothing to evict".to_string()
            } else {
                waves.join(", ")
            },
            super::glyphs::glyphs().sep
        );
        if let Some(refusal) = &n.message {
            let _ = writeln!(out, "    will be cordoned but not drained: {refusal}");
        }
    }
    budget_refusals(&mut out, foreseen, deadline);
    let held: Vec<_> = foreseen
        .held
        .iter()
        .filter(|(pod, _)| evicted.contains(pod))
        .collect();
    if !held.is_empty() {
        let _ = writeln!(
            out,
            "Already terminating, past their grace period (the drain waits for each until --timeout):"
        );
        for (pod, cause) in held {
            let _ = writeln!(out, "  {pod}: {cause}");
        }
    }
    for w in warnings {
        let _ = writeln!(out, "Warning: {w}");
    }
    out
}

/// The pods a budget refuses right now, and apart from them those whose
/// refusal hands them to their operator.
fn budget_refusals(out: &mut String, foreseen: &Foreseen<'_>, deadline: bool) {
    // A budget's refusal that hands the pod to its operator (KubeVirt's
    // own budget, Strimzi's) is how the move starts, not a block: said
    // apart, as the drain will say it.
    let (handed, tight): (Vec<_>, Vec<_>) = foreseen
        .tight
        .iter()
        .partition(|(pod, _)| foreseen.handed.contains_key(*pod));
    if !tight.is_empty() {
        let wait = if deadline {
            "the drain will wait for it, and delete each still held at --deadline"
        } else {
            "the drain will wait for it"
        };
        let _ = writeln!(
            out,
            "A PodDisruptionBudget refuses these evictions right now ({wait}):"
        );
        for (pod, (pdb, b)) in tight {
            // A budget short of healthy pods frees nothing by waiting on
            // the drain's own replacements: said so.
            let unhealthy = if b.current_healthy < b.desired_healthy {
                ", unhealthy"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {pod} (PDB {pdb}: {} healthy, {} needed{unhealthy})",
                b.current_healthy, b.desired_healthy
            );
        }
    }
    if !handed.is_empty() {
        let _ = writeln!(
            out,
            "Evicting these hands each to its operator, which moves it (the drain will wait for it):"
        );
        for (pod, _) in handed {
            let by = match &foreseen.handed[pod] {
                HandledBy::KubeVirt { vmi } => {
                    format!("KubeVirt migrates VMI {}/{vmi}", pod.namespace)
                }
                HandledBy::Strimzi { cluster } => {
                    format!("the Strimzi Cluster Operator rolls it, Kafka cluster {cluster}")
                }
            };
            let _ = writeln!(out, "  {pod}: {by}");
        }
    }
}

/// Asks on the terminal; `false` unless the answer is yes. A terminal that
/// takes no control sequences (`TERM=dumb`, as Emacs' shell and some CI
/// consoles are) is asked in plain text and read a line.
pub(crate) async fn ask(question: String) -> bool {
    tokio::task::spawn_blocking(move || {
        if dumb_terminal() {
            crate::err!("{question} [y/N] ");
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
            return matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes");
        }
        dialoguer::Confirm::new()
            .with_prompt(question)
            .default(false)
            .interact_on(&dialoguer::console::Term::stderr())
            .unwrap_or(false)
    })
    .await
    .unwrap_or(false)
}

/// `TERM=dumb` (or no TERM): no cursor movement, no colour.
pub(crate) fn dumb_terminal() -> bool {
    std::env::var("TERM").map_or(true, |t| t.is_empty() || t == "dumb")
}
