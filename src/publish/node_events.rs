//! Kubernetes Events on each Node, so others can follow a maintenance
//! through the API (`kubectl get events`, `kubectl describe node`).
//! Events are optional: a refused create warns once and the drain goes on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Event as K8sEvent;
use kube::api::PostParams;
use serde_json::json;
use tokio::sync::mpsc;

use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::NodeStatus;

use super::blocked_news::Holds;

pub(crate) const STARTED: &str = "MaintenanceStarted";
pub(crate) const WAVE_STARTED: &str = "DrainWaveStarted";
pub(crate) const BLOCKED: &str = "DrainBlocked";
pub(crate) const DRAINED: &str = "Drained";
pub(crate) const FORCED: &str = "PodDeletedAtDeadline";
pub(crate) const NOT_DRAINED: &str = "DrainNotCompleted";
pub(crate) const UNCORDONED: &str = "MaintenanceEnded";
const COMPONENT: &str = "kubectl-maintain";

pub(crate) struct Recorder {
    client: kube::Client,
    warned: AtomicBool,
    /// Creating events was forbidden: no further attempt.
    forbidden: AtomicBool,
}

impl Recorder {
    pub(crate) fn new(client: kube::Client) -> Self {
        Recorder {
            client,
            warned: AtomicBool::new(false),
            forbidden: AtomicBool::new(false),
        }
    }

    /// Records one event on a node (node events live in `default`, as the kubelet's do).
    pub(crate) async fn node_event(&self, node: &str, kind: &str, reason: &str, message: &str) {
        if self.forbidden.load(Ordering::Relaxed) {
            return;
        }
        let now = kube_conventions::time::now_rfc3339();
        let event: K8sEvent = serde_json::from_value(json!({
            "metadata": {"generateName": format!("{node}."), "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": node},
            "reason": reason,
            "message": message,
            "type": kind,
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }))
        .expect("a valid Event");
        let created = crate::client::metadata_answers::create(
            &self.client,
            "default",
            &PostParams::default(),
            &event,
        )
        .await;
        let Err(e) = created else {
            return;
        };
        if matches!(&e, kube::Error::Api(s) if s.code == 403) {
            self.forbidden.store(true, Ordering::Relaxed);
        }
        if !self.warned.swap(true, Ordering::Relaxed) {
            let why = match &e {
                kube::Error::Api(s) if s.code == 403 => {
                    format!(
                        "{}; grant create on events in namespace default to record them",
                        s.message
                    )
                }
                other => other.to_string(),
            };
            crate::errln!("warning: cannot record Kubernetes events (the drain goes on): {why}");
        }
    }
}

/// Records the engine's events that matter to others; holds of pods are
/// told once they last (`holds`).
pub(crate) async fn run(
    recorder: Arc<Recorder>,
    mut rx: mpsc::UnboundedReceiver<Event>,
    reason: Option<String>,
) {
    let mut holds = Holds::default();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let e = tokio::select! {
            e = rx.recv() => match e {
                Some(e) => e,
                None => break,
            },
            _ = tick.tick() => {
                tell(&recorder, holds.due(Instant::now())).await;
                continue;
            }
        };
        match e {
            Event::Cordoned {
                node,
                already: false,
            } => {
                let why = reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                recorder
                    .node_event(
                        &node,
                        "Normal",
                        STARTED,
                        &format!("Cordoned by kubectl maintain for maintenance{why}"),
                    )
                    .await;
            }
            Event::WaveStarted { node, wave, pods } => {
                recorder
                    .node_event(
                        &node,
                        "Normal",
                        WAVE_STARTED,
                        &format!(
                            "Wave {wave} started: {}",
                            kube_conventions::count(pods, "pod")
                        ),
                    )
                    .await;
            }
            Event::Blocked {
                node,
                pod,
                cause,
                budget,
                release,
            } => {
                let cause = crate::ui::words::blocked(&cause, release.as_deref());
                holds.held(node, &pod, &cause, budget.as_deref(), Instant::now());
            }
            Event::Evicted { pod, .. } | Event::PodGone { pod, .. } => holds.released(&pod),
            Event::Forced {
                node,
                pod,
                why,
                grace,
            } => {
                holds.released(&pod);
                let message = format!(
                    "Pod {pod} deleted at the drain's --deadline, PodDisruptionBudgets bypassed ({grace}s grace period): {why}"
                );
                recorder
                    .node_event(&node, "Warning", FORCED, &message)
                    .await;
            }
            Event::NodeDone { node, outcome, .. } if outcome.status == NodeStatus::Drained => {
                holds.forget(&node);
                recorder
                    .node_event(&node, "Normal", DRAINED, "Drained by kubectl maintain")
                    .await;
            }
            Event::NodeDone { node, outcome, .. } => {
                tell(&recorder, holds.ended(&node)).await;
                recorder
                    .node_event(
                        &node,
                        "Warning",
                        NOT_DRAINED,
                        &format!("Drain ended: {}", outcome.status),
                    )
                    .await;
            }
            _ => {}
        }
    }
}

async fn tell(recorder: &Recorder, due: Vec<(String, String)>) {
    for (node, message) in due {
        recorder
            .node_event(&node, "Warning", BLOCKED, &message)
            .await;
    }
}
