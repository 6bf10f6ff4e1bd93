//! Building a node's outcome from where each pod stands when its drain
//! ends: gone, blocked and why, still terminating, or never reached.
//! Pure: the clock is passed in.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use crate::policy::classify::{WaitReason, priority};
use crate::policy::node_health::NodeDown;
use crate::vocabulary::outcome::{Cause, PodOutcome, PodResult};
use crate::vocabulary::pod_key::PodKey;

/// Where a pod the drain evicts or waits for stands at the end.
#[derive(Debug, Clone)]
pub(crate) enum Standing {
    Done(PodResult),
    Blocked(Cause),
    Waiting(WaitReason),
    /// Evicted (or deleted before), still terminating.
    Terminating,
    /// Never sent an eviction.
    NotStarted,
}

/// One pod the drain was responsible for, as it ended.
pub(crate) struct Ended<'a> {
    pub(crate) key: &'a PodKey,
    pub(crate) pod: &'a Pod,
    pub(crate) wave: usize,
    pub(crate) standing: Standing,
    pub(crate) warning: Option<String>,
}

/// What the report says of each pod. `waves` are the plan's wave names;
/// pods of waves after the earliest unfinished one wait for that wave.
pub(crate) fn pod_outcomes(
    ended: Vec<Ended<'_>>,
    waves: &[String],
    terminating_namespaces: &BTreeSet<String>,
    down: Option<(&str, &NodeDown)>,
    now: Timestamp,
) -> Vec<PodOutcome> {
    let running = ended
        .iter()
        .filter(|e| !matches!(e.standing, Standing::Done(_)))
        .map(|e| e.wave)
        .min();
    ended
        .into_iter()
        .map(|e| {
            let result = match e.standing {
                Standing::Done(r) => r,
                _ if running.is_some_and(|r| r < e.wave) => PodResult::Remaining {
                    cause: Cause::WaitingForEarlierWave {
                        wave: running
                            .and_then(|r| waves.get(r))
                            .cloned()
                            .unwrap_or_default(),
                    },
                },
                Standing::Blocked(cause) => PodResult::Remaining { cause },
                Standing::Waiting(reason) => PodResult::Remaining {
                    cause: Cause::WaitingForCompletion { reason },
                },
                Standing::Terminating if terminating_namespaces.contains(&e.key.namespace) => {
                    PodResult::Remaining {
                        cause: Cause::NamespaceTerminating {
                            namespace: e.key.namespace.clone(),
                        },
                    }
                }
                // Without a kubelet nothing stops it: that is the cause,
                // not its grace period.
                Standing::Terminating if let Some((node, d)) = down => PodResult::Remaining {
                    cause: Cause::NodeNotReady {
                        node: node.to_string(),
                        ready: d.ready.clone(),
                        since: d.since.clone(),
                    },
                },
                Standing::Terminating => PodResult::Remaining {
                    cause: terminating_cause(e.pod, now),
                },
                Standing::NotStarted => PodResult::Remaining {
                    cause: Cause::NotStarted,
                },
            };
            PodOutcome {
                pod: e.key.clone(),
                priority: priority(e.pod),
                owner: crate::policy::classify::controller_kind(e.pod).map(|(k, _)| k.to_string()),
                wave: waves.get(e.wave).cloned(),
                result,
                warning: e.warning,
            }
        })
        .collect()
}

/// Why an evicted pod is still there: its grace period, or finalizers
/// holding it past the grace period.
pub(crate) fn terminating_cause(pod: &Pod, now: Timestamp) -> Cause {
    let grace = pod.metadata.deletion_grace_period_seconds;
    // deletionTimestamp is when the grace period ends.
    let deadline = pod
        .metadata
        .deletion_timestamp
        .as_ref()
        .map(|t| t.0.as_second());
    let seconds = match (deadline, grace) {
        (Some(d), Some(g)) => now.as_second() - (d - g),
        _ => 0,
    };
    let finalizers = pod.metadata.finalizers.clone().unwrap_or_default();
    let past = deadline.is_some_and(|d| now.as_second() > d);
    if past && !finalizers.is_empty() {
        return Cause::Finalizers { finalizers };
    }
    Cause::Terminating {
        seconds,
        grace_period_seconds: grace,
    }
}

/// A pod already going and past its grace period: the drain will wait for
/// it until `--timeout`, held by its finalizers or by a kubelet that has
/// not confirmed it stopped (`plan` and the question say so first).
pub(crate) fn past_grace(pod: &Pod, now: Timestamp) -> Option<Cause> {
    let end = pod.metadata.deletion_timestamp.as_ref()?.0.as_second();
    (now.as_second() > end).then(|| terminating_cause(pod, now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(v: serde_json::Value) -> Pod {
        serde_json::from_value(v).expect("pod")
    }

    #[test]
    fn pods_behind_an_unfinished_wave_wait_for_it() {
        let key = |n: &str| PodKey::new("ns", n);
        let (a, b) = (key("a"), key("b"));
        let p = pod(json!({"metadata": {"name": "x"}}));
        let waves = vec!["user".to_string(), "critical".to_string()];
        let out = pod_outcomes(
            vec![
                Ended {
                    key: &a,
                    pod: &p,
                    wave: 0,
                    standing: Standing::NotStarted,
                    warning: None,
                },
                Ended {
                    key: &b,
                    pod: &p,
                    wave: 1,
                    standing: Standing::NotStarted,
                    warning: None,
                },
            ],
            &waves,
            &BTreeSet::new(),
            None,
            Timestamp::now(),
        );
        assert_eq!(
            out[1].result,
            PodResult::Remaining {
                cause: Cause::WaitingForEarlierWave {
                    wave: "user".into()
                }
            }
        );
        assert_eq!(
            out[0].result,
            PodResult::Remaining {
                cause: Cause::NotStarted
            }
        );
    }

    #[test]
    fn finalizers_hold_a_pod_past_its_grace_period() {
        let now: Timestamp = "2026-11-23T10:00:30Z".parse().unwrap();
        let held = pod(json!({"metadata": {"name": "x",
            "deletionTimestamp": "2026-11-23T10:00:10Z", "deletionGracePeriodSeconds": 10,
            "finalizers": ["example.com/backup"]}}));
        assert_eq!(
            terminating_cause(&held, now),
            Cause::Finalizers {
                finalizers: vec!["example.com/backup".into()]
            }
        );
        let going = pod(json!({"metadata": {"name": "x",
            "deletionTimestamp": "2026-11-23T10:00:40Z", "deletionGracePeriodSeconds": 30}}));
        assert_eq!(
            terminating_cause(&going, now),
            Cause::Terminating {
                seconds: 20,
                grace_period_seconds: Some(30)
            }
        );
    }
}
