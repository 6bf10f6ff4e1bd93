//! Drains that change nothing: `plan` and `--dry-run=client` (each pod's
//! verdict from classification alone), `--dry-run=server` (also what the
//! eviction API answers right now, sent with `dryRun=All`), and the
//! outcome of nodes not drained because kubectl's filters refused a pod.

use std::collections::BTreeMap;

use super::budgets::{Broker, Budget};
use super::evict::{Evictor, PDB_REFUSAL};
use super::machine::{Answer, NodeMachine};
use crate::vocabulary::outcome::{Cause, NodeOutcome, NodeStatus, PodResult};
use crate::vocabulary::pod_key::PodKey;

fn refusal_message(machine: &NodeMachine) -> Option<String> {
    let refusals = machine.refusals();
    (!refusals.is_empty()).then(|| refusals.join("; "))
}

/// `plan` and `--dry-run=client`.
/// `tight`: pods a budget holds now (its status allows no disruption),
/// each shown blocked as the drain words its refusal, from what the
/// eviction would answer. `held`: pods going already and past their grace
/// period, shown blocked by what holds them (crate::drain::conclude::past_grace).
pub(crate) fn client(
    mut machine: NodeMachine,
    tight: &BTreeMap<PodKey, (String, Budget)>,
    held: &BTreeMap<PodKey, Cause>,
) -> NodeOutcome {
    let message = refusal_message(&machine);
    let mut verdicts = BTreeMap::new();
    for (key, _) in machine.to_evict() {
        if let Some(cause) = held.get(&key) {
            verdicts.insert(
                key,
                PodResult::WouldBlock {
                    cause: cause.clone(),
                },
            );
            continue;
        }
        let Some((pdb, budget)) = tight.get(&key) else {
            continue;
        };
        machine.note_budget((key.namespace.clone(), pdb.clone()), *budget);
        let answer = Answer::PdbBlocked {
            pdb: pdb.clone(),
            // kube-apiserver's words (pkg/registry/core/pod/storage/eviction.go).
            message: format!(
                "The disruption budget {pdb} needs {} healthy pods and has {} currently",
                budget.desired_healthy, budget.current_healthy
            ),
            api_message: PDB_REFUSAL.to_string(),
            retry_after: None,
        };
        if let Some(cause) = machine.refusal_cause(&key.namespace, &answer) {
            verdicts.insert(key, PodResult::WouldBlock { cause });
        }
    }
    machine.preview(verdicts, NodeStatus::DryRun, message)
}

/// `--dry-run=server`: every eviction sent with `dryRun=All`; a refusal
/// becomes the pod's `WouldBlock` verdict, and so does what holds a pod
/// past its grace period (`held`), which the API server accepts to evict.
pub(crate) async fn server(
    evictor: &Evictor,
    budgets: &Broker,
    mut machine: NodeMachine,
    held: &BTreeMap<PodKey, Cause>,
) -> NodeOutcome {
    let message = refusal_message(&machine);
    let mut verdicts = BTreeMap::new();
    for (key, uid) in machine.to_evict() {
        let answer = evictor.evict(&key, &uid, true).await;
        let mut result = verdict(budgets, &mut machine, &key, &answer).await;
        if let (PodResult::WouldEvict, Some(cause)) = (&result, held.get(&key)) {
            result = PodResult::WouldBlock {
                cause: cause.clone(),
            };
        }
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
