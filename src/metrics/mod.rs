//! Prometheus metrics of a roll, with the official `prometheus-client`
//! crate: served on `--metrics-addr` while the run lasts (`serve`), pushed
//! to `--pushgateway` at each node's end and at the run's end (`push`).
//! Every series is fed from the roll's events; docs/metrics.md lists them
//! with a Grafana-ready query each.

pub(crate) mod push;
pub(crate) mod serve;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::vocabulary::events::Event;
use crate::vocabulary::job_status::JobStatus;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodePhase {
    node: String,
    phase: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct State {
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Code {
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Budget {
    budget: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CauseLabel {
    cause: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct What {
    what: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Run {
    run: String,
}

/// The states `kubectl_maintain_nodes` counts.
const STATES: [&str; 4] = ["pending", "in_progress", "done", "blocked"];

/// What the series are made from, besides the series themselves.
#[derive(Default)]
struct Seen {
    /// Each node's phase now.
    phase: BTreeMap<String, String>,
    /// Each held pod (node, pod) and its cause.
    blocked: BTreeMap<(String, String), String>,
    /// The roll's holds now (node or "", what).
    holds: BTreeMap<(String, String), String>,
}

/// A roll's metrics.
pub(crate) struct Metrics {
    registry: Registry,
    node_phase: Family<NodePhase, Gauge>,
    nodes: Family<State, Gauge>,
    evictions: Family<Code, Counter>,
    pods_drained: Family<Reason, Counter>,
    budget_holds: Family<Budget, Counter>,
    blocked_pods: Family<CauseLabel, Gauge>,
    holds: Family<What, Gauge>,
    drain_seconds: Histogram,
    out_of_service_seconds: Histogram,
    start_time: Gauge<f64, AtomicU64>,
    end_time: Gauge<f64, AtomicU64>,
    seen: Mutex<Seen>,
}

fn seconds_now() -> f64 {
    kube_conventions::time::now().as_millisecond() as f64 / 1000.0
}

impl Metrics {
    /// The metrics of a run of `total` nodes, started now.
    pub(crate) fn new(run: &str, total: usize) -> Metrics {
        let mut m = Metrics {
            registry: Registry::with_prefix("kubectl_maintain"),
            node_phase: Family::default(),
            nodes: Family::default(),
            evictions: Family::default(),
            pods_drained: Family::default(),
            budget_holds: Family::default(),
            blocked_pods: Family::default(),
            holds: Family::default(),
            // 1 s to about 9 h.
            drain_seconds: Histogram::new(exponential_buckets(1.0, 2.0, 16)),
            out_of_service_seconds: Histogram::new(exponential_buckets(1.0, 2.0, 16)),
            start_time: Gauge::default(),
            end_time: Gauge::default(),
            seen: Mutex::new(Seen::default()),
        };
        let info: Family<Run, Gauge> = Family::default();
        info.get_or_create(&Run { run: run.into() }).set(1);
        m.registry.register(
            "run_info",
            "The run's identity (the same command is the same run; it resumes a roll)",
            info,
        );
        m.registry.register(
            "node_phase",
            "1 for the phase each node of the run is in (or the result it ended with)",
            m.node_phase.clone(),
        );
        m.registry.register(
            "nodes",
            "Nodes of the run by state: pending, in_progress, done, blocked",
            m.nodes.clone(),
        );
        m.registry.register(
            "evictions",
            "Answers to evictions, by HTTP code",
            m.evictions.clone(),
        );
        m.registry.register("pods_drained", "Pods gone from drained nodes, by how: evicted, forced (--deadline), completed, goneByItself, lost (dead node)", m.pods_drained.clone());
        m.registry.register(
            "budget_holds",
            "PodDisruptionBudgets that held up a node's drain, by budget (namespace/name)",
            m.budget_holds.clone(),
        );
        m.registry.register(
            "blocked_pods",
            "Pods that cannot go yet, by cause",
            m.blocked_pods.clone(),
        );
        m.registry.register(
            "holds",
            "What the run waits on besides pods: alerts, window, announce, hook (1 while it holds)",
            m.holds.clone(),
        );
        m.registry.register(
            "node_drain_duration_seconds",
            "How long each node's drain took",
            m.drain_seconds.clone(),
        );
        m.registry.register(
            "node_out_of_service_duration_seconds",
            "How long each node a roll put back in service was out, cordon to uncordon",
            m.out_of_service_seconds.clone(),
        );
        m.registry.register(
            "run_start_time_seconds",
            "When the run started, seconds since the epoch",
            m.start_time.clone(),
        );
        m.registry.register(
            "run_end_time_seconds",
            "When the run ended, seconds since the epoch (0 while it runs)",
            m.end_time.clone(),
        );
        m.start_time.set(seconds_now());
        for s in STATES {
            m.nodes.get_or_create(&State { state: s.into() }).set(0);
        }
        m.nodes
            .get_or_create(&State {
                state: "pending".into(),
            })
            .set(total as i64);
        for what in ["alerts", "window", "announce", "hook"] {
            m.holds.get_or_create(&What { what: what.into() }).set(0);
        }
        m
    }

    /// The text exposition of every series.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String does not fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// The run's nodes are known: all pending.
    pub(crate) fn planned(&self, total: usize) {
        self.nodes
            .get_or_create(&State {
                state: "pending".into(),
            })
            .set(total as i64);
    }

    pub(crate) fn ended(&self) {
        self.end_time.set(seconds_now());
    }

    fn state(&self, s: &str, by: i64) {
        self.nodes
            .get_or_create(&State { state: s.into() })
            .inc_by(by);
    }

    /// One event of the roll.
    pub(crate) fn observe(&self, e: &Event) {
        let mut seen = self.seen.lock().expect("metrics");
        match e {
            Event::RunPhase { node, phase } => {
                let before = seen.phase.insert(node.clone(), (*phase).to_string());
                self.set_phase(node, before.as_deref(), phase);
                if before.is_none() {
                    self.state("pending", -1);
                    self.state("in_progress", 1);
                }
            }
            Event::NodeEnded {
                node,
                status,
                out_of_service_ms,
                ..
            } => {
                if let Some(ms) = out_of_service_ms {
                    self.out_of_service_seconds.observe(*ms as f64 / 1000.0);
                }
                let before = seen.phase.insert(node.clone(), status.as_str().to_string());
                self.set_phase(node, before.as_deref(), status.as_str());
                self.state(
                    if before.is_some() {
                        "in_progress"
                    } else {
                        "pending"
                    },
                    -1,
                );
                match status {
                    JobStatus::Done | JobStatus::DoneBefore => self.state("done", 1),
                    JobStatus::Blocked | JobStatus::Failed => self.state("blocked", 1),
                    // Interrupted or not started: still to do.
                    JobStatus::Interrupted | JobStatus::NotStarted => self.state("pending", 1),
                }
            }
            Event::EvictionAnswered { code, .. } => {
                self.evictions
                    .get_or_create(&Code {
                        code: (*code).into(),
                    })
                    .inc();
            }
            Event::Blocked {
                node, pod, cause, ..
            } => {
                let kind = cause.kind().to_string();
                let key = (node.clone(), pod.to_string());
                if let Some(old) = seen.blocked.insert(key, kind.clone()) {
                    self.blocked_pods
                        .get_or_create(&CauseLabel { cause: old })
                        .dec();
                }
                self.blocked_pods
                    .get_or_create(&CauseLabel { cause: kind })
                    .inc();
            }
            Event::Evicted { node, pod }
            | Event::PodGone { node, pod }
            | Event::Forced { node, pod, .. }
            | Event::PodLost { node, pod, .. }
            | Event::NotWaitedFor { node, pod, .. } => {
                if let Some(cause) = seen.blocked.remove(&(node.clone(), pod.to_string())) {
                    self.blocked_pods.get_or_create(&CauseLabel { cause }).dec();
                }
            }
            Event::NodeDone {
                node,
                elapsed,
                outcome,
            } => self.node_done(&mut seen, node, *elapsed, outcome),
            Event::Hold { node, what, .. } => {
                let kind = hold_kind(what);
                let key = (node.clone().unwrap_or_default(), what.clone());
                if seen.holds.insert(key, kind.clone()).is_none() {
                    self.holds.get_or_create(&What { what: kind }).inc();
                }
            }
            Event::HoldEnded { node, what } => {
                let key = (node.clone().unwrap_or_default(), what.clone());
                if let Some(kind) = seen.holds.remove(&key) {
                    self.holds.get_or_create(&What { what: kind }).dec();
                }
            }
            _ => {}
        }
    }

    /// A node's drain ended: its holds are over; its time, pods and budgets.
    fn node_done(
        &self,
        seen: &mut Seen,
        node: &str,
        elapsed: std::time::Duration,
        outcome: &crate::vocabulary::outcome::NodeOutcome,
    ) {
        let held: Vec<(String, String)> = seen
            .blocked
            .keys()
            .filter(|(n, _)| n == node)
            .cloned()
            .collect();
        for key in held {
            if let Some(cause) = seen.blocked.remove(&key) {
                self.blocked_pods.get_or_create(&CauseLabel { cause }).dec();
            }
        }
        self.drain_seconds.observe(elapsed.as_secs_f64());
        for p in &outcome.pods {
            use crate::vocabulary::outcome::PodResult;
            // The pods the drain took off the node.
            if matches!(
                p.result,
                PodResult::Evicted
                    | PodResult::Forced { .. }
                    | PodResult::Completed
                    | PodResult::GoneByItself
                    | PodResult::Lost { .. }
            ) {
                self.pods_drained
                    .get_or_create(&Reason {
                        reason: p.result.state().to_string(),
                    })
                    .inc();
            }
        }
        for b in &outcome.budget_holds {
            self.budget_holds
                .get_or_create(&Budget {
                    budget: b.budget.clone(),
                })
                .inc();
        }
    }

    fn set_phase(&self, node: &str, before: Option<&str>, now: &str) {
        if let Some(before) = before {
            self.node_phase.remove(&NodePhase {
                node: node.into(),
                phase: before.into(),
            });
        }
        self.node_phase
            .get_or_create(&NodePhase {
                node: node.into(),
                phase: now.into(),
            })
            .set(1);
    }
}

/// A hold's kind: `alerts`, `window`, `announce`, or `hook` for every
/// hook annotation.
fn hold_kind(what: &str) -> String {
    match what {
        "alerts" | "window" | "announce" => what.to_string(),
        _ => "hook".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    }

    #[test]
    fn the_series_follow_the_roll() {
        let m = Metrics::new("abc", 2);
        let t = m.encode();
        assert_eq!(
            value(&t, "kubectl_maintain_nodes{state=\"pending\"}"),
            Some(2.0)
        );
        assert_eq!(
            value(&t, "kubectl_maintain_run_info{run=\"abc\"}"),
            Some(1.0)
        );
        m.observe(&Event::RunPhase {
            node: "r1".into(),
            phase: "drain",
        });
        m.observe(&Event::EvictionAnswered {
            node: "r1".into(),
            code: "429",
        });
        m.observe(&Event::Hold {
            node: Some("r1".into()),
            what: "rook.io/pre-drain".into(),
            reason: "waiting".into(),
        });
        m.observe(&Event::Hold {
            node: None,
            what: "announce".into(),
            reason: "announced".into(),
        });
        let t = m.encode();
        assert_eq!(
            value(&t, "kubectl_maintain_holds{what=\"announce\"}"),
            Some(1.0)
        );
        assert_eq!(
            value(
                &t,
                "kubectl_maintain_node_phase{node=\"r1\",phase=\"drain\"}"
            ),
            Some(1.0)
        );
        assert_eq!(
            value(&t, "kubectl_maintain_nodes{state=\"in_progress\"}"),
            Some(1.0)
        );
        assert_eq!(
            value(&t, "kubectl_maintain_evictions_total{code=\"429\"}"),
            Some(1.0)
        );
        assert_eq!(
            value(&t, "kubectl_maintain_holds{what=\"hook\"}"),
            Some(1.0)
        );
        m.observe(&Event::NodeEnded {
            node: "r1".into(),
            status: JobStatus::Done,
            message: None,
            out_of_service_ms: Some(0),
        });
        let t = m.encode();
        assert_eq!(
            value(
                &t,
                "kubectl_maintain_node_phase{node=\"r1\",phase=\"drain\"}"
            ),
            None
        );
        assert_eq!(
            value(
                &t,
                "kubectl_maintain_node_phase{node=\"r1\",phase=\"done\"}"
            ),
            Some(1.0)
        );
        assert_eq!(
            value(&t, "kubectl_maintain_nodes{state=\"done\"}"),
            Some(1.0)
        );
        assert_eq!(
            value(&t, "kubectl_maintain_nodes{state=\"in_progress\"}"),
            Some(0.0)
        );
        assert_eq!(
            value(&t, "kubectl_maintain_nodes{state=\"pending\"}"),
            Some(1.0)
        );
    }
}
