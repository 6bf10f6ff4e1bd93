//! A pod's cause in words: one line for tables, logs and Events, and what
//! the operator can do about it.

use std::fmt;

use crate::policy::classify::Refusal;
use crate::vocabulary::events::Surged;
use crate::vocabulary::outcome::{Cause, Forced, Handler};

/// One line for tables and logs.
impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line: String = match self {
            Cause::Pdb {
                name,
                disruptions_allowed,
                current_healthy,
                desired_healthy,
                ..
            } => match (current_healthy, desired_healthy) {
                (Some(c), Some(d)) => format!(
                    "PDB {name}: needs {d} healthy, has {c}, allows {}",
                    kube_conventions::count(
                        usize::try_from(disruptions_allowed.unwrap_or(0)).unwrap_or(0),
                        "disruption"
                    )
                ),
                _ => format!("PDB {name} allows no disruption"),
            },
            Cause::HandedOver {
                handler,
                operator,
                subject,
                progress,
            } => {
                let who = match (handler, operator.as_str()) {
                    (Handler::Responder, "") => "its eviction responder".to_string(),
                    (Handler::Responder, name) => format!("eviction responder {name}"),
                    (_, name) => name.to_string(),
                };
                let subject = if subject.is_empty() {
                    String::new()
                } else {
                    format!(" ({subject})")
                };
                let progress = if progress.is_empty() {
                    "at work"
                } else {
                    progress
                };
                format!("handed over to {who}{subject}: {progress}")
            }
            Cause::MultiplePdbs { .. } => {
                "more than one PDB selects the pod; the eviction API refuses it".into()
            }
            Cause::Refused { message, .. } => message.clone(),
            Cause::WaitingForCompletion { reason } => {
                format!("waiting for it to complete ({})", reason.describe())
            }
            Cause::WaitingForEarlierWave { wave } => format!("waiting for wave {wave} to finish"),
            Cause::Terminating {
                seconds,
                grace_period_seconds,
            } => match grace_period_seconds {
                Some(g) if *seconds > *g => {
                    format!("terminating for {seconds}s, past its {g}s grace period")
                }
                Some(g) => format!("terminating for {seconds}s (grace period {g}s)"),
                None => format!("terminating for {seconds}s"),
            },
            Cause::Finalizers { finalizers } => {
                format!("terminating, held by finalizers {}", finalizers.join(", "))
            }
            Cause::NamespaceTerminating { namespace } => {
                format!("namespace {namespace} is terminating")
            }
            Cause::ApiError { message } => format!("API error: {message}"),
            Cause::Forbidden { message } => format!("forbidden: {message}"),
            Cause::NotStarted => "eviction not started".into(),
            Cause::NodeNotReady { node, ready, since } => format!(
                "terminating on node/{node}, NotReady (Ready {ready}{}): its kubelet is not running, nothing stops it",
                since
                    .as_deref()
                    .map(|s| format!(" since {s}"))
                    .unwrap_or_default()
            ),
        };
        f.write_str(&line)
    }
}

/// What the operator can do about a budget's refusal, decided from its
/// numbers: one that never allows (a single replica behind
/// `minAvailable: 1`, a budget set to the replica count) waits for
/// nothing; one short of healthy pods waits on those pods.
fn budget_remedy(
    allowed: Option<i32>,
    healthy: Option<i32>,
    desired: Option<i32>,
    expected: Option<i32>,
    owner: Option<&str>,
) -> &'static str {
    match (allowed, healthy, desired, expected) {
        (Some(0), _, Some(d), Some(e)) if d >= e => match owner {
            Some("ReplicaSet") => {
                "the budget allows no disruption even with every pod healthy, so waiting will not help: rerun with --surge (its Deployment gets one more replica first), or --deadline D (deleted past it, the budget bypassed), or relax the PDB"
            }
            Some("StatefulSet") => {
                "the budget allows no disruption even with every pod healthy, so waiting will not help, and a StatefulSet cannot surge: rerun with --deadline D (deleted past it, the budget bypassed; the StatefulSet makes it again elsewhere), or scale the StatefulSet up, or relax the PDB"
            }
            _ => {
                "the budget allows no disruption even with every pod healthy, so waiting will not help: rerun with --deadline D (deleted past it, the budget bypassed), or relax the PDB"
            }
        },
        (Some(0), Some(h), Some(d), _) if h < d => {
            "the budget's pods are not all healthy: fix them, or set the PDB's unhealthyPodEvictionPolicy: AlwaysAllow so that unready pods may go; --deadline D deletes past it"
        }
        _ => {
            "the budget lets a pod go once its replacement is Ready elsewhere: wait (the drain asks again when it allows), scale the workload up, or relax the PDB"
        }
    }
}

/// What the operator can do about a cause; `owner` is the pod's
/// controller's kind, when it has one.
pub(crate) fn remedy(cause: &Cause, owner: Option<&str>) -> &'static str {
    match cause {
        Cause::Pdb {
            disruptions_allowed,
            current_healthy,
            desired_healthy,
            expected_pods,
            ..
        } => budget_remedy(
            *disruptions_allowed,
            *current_healthy,
            *desired_healthy,
            *expected_pods,
            owner,
        ),
        Cause::HandedOver { handler, .. } => match handler {
            Handler::Kubevirt => {
                "KubeVirt is moving the VM: give it time (--timeout), or check its VirtualMachineInstanceMigration"
            }
            Handler::Strimzi => {
                "the operator moves the pod when that is safe (for Kafka, once its topics stay in sync): give it time (--timeout), or read the operator's log; relaxing the budget would bypass it"
            }
            Handler::Responder => {
                "the pod's eviction responder decides when it goes: give it time (--timeout), or read its Eviction (kubectl get evictions -n NS -o yaml); --eviction-api=eviction skips responders"
            }
        },
        Cause::MultiplePdbs { .. } => "make exactly one PDB select these pods",
        Cause::Refused { refusal, .. } => match refusal {
            Refusal::DaemonSet => {
                "rerun with --ignore-daemonsets, or add a DaemonSet wave to the plan"
            }
            Refusal::DaemonSetMissing(_) => "rerun with --force to delete the orphaned pod",
            Refusal::LocalStorage => {
                "rerun with --delete-emptydir-data if the emptyDir data may be lost"
            }
            Refusal::Unmanaged => "rerun with --force, or add a skip rule for the pod",
        },
        Cause::WaitingForCompletion { reason } => reason.release(),
        Cause::WaitingForEarlierWave { .. } => "resolve what blocks the earlier wave",
        Cause::Terminating { .. } => "check the pod's preStop hooks and the kubelet on the node",
        Cause::Finalizers { .. } => "find the controller that owns the finalizers",
        Cause::NamespaceTerminating { .. } => {
            "check what holds the namespace's deletion (kubectl get namespace NS -o yaml: status.conditions)"
        }
        Cause::ApiError { .. } => "check the API server's health and rerun; the drain resumes",
        Cause::Forbidden { .. } => {
            "grant the named verb and resource to the user running the drain"
        }
        Cause::NotStarted => {
            "rerun the drain once what stopped it is fixed (the node's line above says what)"
        }
        Cause::NodeNotReady { .. } => super::dead_node::REMEDY,
    }
}

/// Why `--deadline` deleted a pod.
impl fmt::Display for Forced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Forced::Held(cause) => write!(f, "still held at the deadline: {cause}"),
            Forced::Waiting(reason) => write!(
                f,
                "still held at the deadline by {}",
                Cause::WaitingForCompletion {
                    reason: reason.clone()
                }
            ),
            Forced::NotEvictedYet => f.write_str("not evicted yet at the deadline"),
        }
    }
}

/// What `--surge` did for a pod's workload.
impl fmt::Display for Surged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Surged::Scaling {
                namespace,
                deployment,
            } => write!(
                f,
                "surging Deployment {namespace}/{deployment}: one more replica, so that its budget lets this pod go"
            ),
            Surged::Not { why } => write!(f, "not surged: {why}"),
        }
    }
}
