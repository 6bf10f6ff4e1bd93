//! Drains that change nothing: `plan` and `--dry-run=client` (each pod's
//! verdict from classification alone), `--dry-run=server` (also what the
//! eviction API answers right now, sent with `dryRun=All`), and the
//! outcome of nodes not drained because kubectl's filters refused a pod.

use std::collections::BTreeMap;

use super::budgets::Broker;
use super::evict::{Answer, Evictor};
use super::machine::NodeMachine;
use crate::vocabulary::outcome::{NodeOutcome, NodeStatus, PodResult};
use crate::vocabulary::pod_key::PodKey;

fn refusal_message(machine: &NodeMachine) -> Option<String> {
    let refusals = machine.refusals();
    (!refusals.is_empty()).then(|| refusals.join("; "))
}

/// `plan` and `--dry-run=client`.
pub(crate) fn client(machine: NodeMachine) -> NodeOutcome {
    let message = refusal_message(&machine);
    machine.preview(BTreeMap::new(), NodeStatus::DryRun, message)
}

/// `--dry-run=server`: every eviction sent with `dryRun=All`; a refusal
/// becomes the pod's `WouldBlock` verdict.
pub(crate) async fn server(
    evictor: &Evictor,
    budgets: &Broker,
    mut machine: NodeMachine,
) -> NodeOutcome {
    let message = refusal_message(&machine);
    let mut verdicts = BTreeMap::new();
    for (key, uid) in machine.to_evict() {
        let answer = evictor.evict(&key, &uid, true).await;
        let result = verdict(budgets, &mut machine, &key, &answer).await;
        verdicts.insert(key, result);
    }
    machine.preview(verdicts, NodeStatus::DryRun, message)
}

/// What a dry-run answer means for the pod, read as a real drain reads
/// it, with the refusing budget's numbers fetched once.
async fn verdict(
    budgets: &Broker,
    machine: &mut NodeMachine,
    key: &PodKey,
    answer: &Answer,
) -> PodResult {
    if let Answer::PdbBlocked { pdb, .. } = answer {
        let budget_key = (key.namespace.clone(), pdb.clone());
        if let Some(budget) = budgets.fetch(&budget_key).await {
            machine.note_budget(budget_key, budget);
        }
    }
    match machine.refusal_cause(&key.namespace, answer) {
        Some(cause) => PodResult::WouldBlock { cause },
        None => PodResult::WouldEvict,
    }
}

/// A node not drained because kubectl's filters refuse pods on it (or, with
/// `--all-or-nothing`, on another selected node): nothing was evicted.
pub(crate) fn refused(machine: NodeMachine) -> NodeOutcome {
    let message = match refusal_message(&machine) {
        Some(m) => format!("cannot drain: {m}"),
        None => "not drained: kubectl's filters refuse pods on another selected node".into(),
    };
    machine.preview(BTreeMap::new(), NodeStatus::Refused, Some(message))
}
