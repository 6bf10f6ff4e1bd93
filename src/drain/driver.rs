//! Performs what a node's state machine decides: sends its evictions (at
//! most `GLOBAL_IN_FLIGHT` across every node), watches the budgets that
//! refused, follows the node's pods, wakes it when it asked to be woken,
//! and hands every answer back to it. No decision is made here.

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use tokio::sync::broadcast::error::RecvError;

use super::engine::Engine;
use super::events::emit;
use super::evict::Answer;
use super::machine::{Effect, Input, NodeMachine, Now};
use super::outcome::NodeOutcome;
use super::pod_key::PodKey;
use super::pod_watch::{PodQuery, PodWatch, Snapshot};

/// Drains one node from its snapshot until its machine finishes.
pub(crate) async fn drain_node(
    engine: &Engine,
    mut machine: NodeMachine,
    query: PodQuery,
    snapshot: &Snapshot,
) -> NodeOutcome {
    let pods: Api<Pod> = Api::all(engine.clients.main.clone());
    let mut watch = PodWatch::resume(pods, query, snapshot, !machine.waits_for_completion());
    let mut budgets = engine.pdbs.subscribe();
    let mut interrupt = engine.interrupt.clone();
    let mut inflight = FuturesUnordered::new();
    let mut effects = if *interrupt.borrow() {
        machine.step(Input::Interrupted, Now::read())
    } else {
        machine.start(Now::read())
    };
    loop {
        for effect in effects.drain(..) {
            match effect {
                Effect::Evict { key, uid } => {
                    let launcher = snapshot
                        .pods
                        .iter()
                        .find(|p| PodKey::of(p) == key)
                        .filter(|p| super::kubevirt::vmi_name(p).is_some())
                        .cloned();
                    inflight.push(evict(engine, key, uid, launcher));
                }
                Effect::WatchBudget(key) => engine.pdbs.ensure(&key),
                Effect::Emit(e) => emit(&engine.events, e),
                Effect::Finish(outcome) => return *outcome,
            }
        }
        let wake = machine.next_wakeup();
        let input = tokio::select! {
            Some(answer) = inflight.next(), if !inflight.is_empty() => answer,
            change = watch.next() => Input::Pod(change),
            msg = budgets.recv() => match msg {
                Ok(key) => match engine.pdbs.get(&key) {
                    Some(budget) => Input::Budget { key, budget },
                    None => continue,
                },
                Err(RecvError::Lagged(_)) => Input::BudgetsLagged,
                Err(RecvError::Closed) => continue,
            },
            () = sleep_until(wake) => Input::Tick,
            _ = interrupt.changed() => Input::Interrupted,
        };
        effects = machine.step(input, Now::read());
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// One eviction, under the drain-wide limit; for a refused virt-launcher
/// pod, also whether KubeVirt is evacuating its VM.
async fn evict(engine: &Engine, key: PodKey, uid: String, launcher: Option<Pod>) -> Input {
    let answer = {
        let _permit = engine.slots.acquire().await;
        engine.evict(&key, &uid, false).await
    };
    let evacuation = match (&answer, &launcher) {
        (Answer::PdbBlocked { .. }, Some(pod)) => {
            super::kubevirt::evacuation(&engine.clients.main, pod).await
        }
        _ => None,
    };
    Input::Answer {
        key,
        uid,
        answer,
        evacuation,
    }
}
