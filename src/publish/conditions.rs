//! The node conditions others read to follow a drain (KEP-5683 "Node
//! Lifecycle Conditions", alpha in Kubernetes 1.37): `DrainInProgress` is
//! True from just before a node's drain starts until it ends, `Drained`
//! True once it completed (False when a new drain begins), both False after
//! `uncordon`. Written with a strategic merge patch on `nodes/status`
//! carrying only those two conditions (NodeCondition is a merge list keyed
//! by `type`), so the kubelet's own conditions are never touched. Optional:
//! a refused write warns once and the drain goes on; `--node-conditions=false`
//! turns them off.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use k8s_openapi::api::core::v1::Node;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::policy::maintenance::FIELD_MANAGER;
pub(crate) use crate::policy::maintenance::{
    DRAIN_IN_PROGRESS, DRAINED, MAINTENANCE_IN_PROGRESS, MAINTENANCE_PLANNED,
};
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

/// Where a node is in a roll's maintenance, as KEP-5683's other two
/// conditions tell it: `MaintenancePlanned` True on every node a roll will
/// take, from its start (or `--announce` before its first drain) until the
/// node is back or the roll ends; `MaintenanceInProgress` True from just
/// before its cordon until its uncordon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Maintenance {
    Planned,
    InProgress,
    /// Returned to service: neither.
    Over,
    /// The roll ended without taking it (or left it cordoned): no longer
    /// planned; `MaintenanceInProgress` is left as it is.
    NoLongerPlanned,
    /// Returned to service while another run still plans it
    /// (crate::publish::planners): `MaintenanceInProgress` False,
    /// `MaintenancePlanned` True.
    ReturnedStillPlanned,
}

/// One condition as the patches write it.
fn condition(kind: &str, status: &str, reason: &str, message: &str, now: &str) -> Value {
    json!({
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now,
        "lastHeartbeatTime": now,
    })
}

/// The status patch for a maintenance stage: only the conditions it changes.
pub(crate) fn maintenance_patch(stage: Maintenance, now: &str) -> Value {
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        condition(kind, status, reason, message, now)
    };
    let conditions = match stage {
        Maintenance::Planned => vec![condition(
            MAINTENANCE_PLANNED,
            "True",
            "RollPlanned",
            "a kubectl maintain roll will take this node",
        )],
        Maintenance::InProgress => vec![
            condition(
                MAINTENANCE_PLANNED,
                "True",
                "RollPlanned",
                "a kubectl maintain roll will take this node",
            ),
            condition(
                MAINTENANCE_IN_PROGRESS,
                "True",
                "RollInProgress",
                "kubectl maintain is maintaining the node",
            ),
        ],
        Maintenance::Over => vec![
            condition(
                MAINTENANCE_PLANNED,
                "False",
                "MaintenanceCompleted",
                "kubectl maintain returned the node to service",
            ),
            condition(
                MAINTENANCE_IN_PROGRESS,
                "False",
                "MaintenanceCompleted",
                "kubectl maintain returned the node to service",
            ),
        ],
        Maintenance::NoLongerPlanned => vec![condition(
            MAINTENANCE_PLANNED,
            "False",
            "RollEnded",
            "the kubectl maintain roll that planned it ended",
        )],
        Maintenance::ReturnedStillPlanned => vec![
            condition(
                MAINTENANCE_PLANNED,
                "True",
                "PlannedByAnotherRun",
                "another kubectl maintain run still plans this node",
            ),
            condition(
                MAINTENANCE_IN_PROGRESS,
                "False",
                "MaintenanceCompleted",
                "kubectl maintain returned the node to service",
            ),
        ],
    };
    json!({"status": {"conditions": conditions}})
}

/// Where a node's drain is, as the conditions tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Started,
    Drained,
    /// Ended without draining the node (timed out, refused, failed, interrupted).
    NotDrained,
    Uncordoned,
}

/// The status patch for a stage: both conditions, with CamelCase reasons.
pub(crate) fn patch(stage: Stage, now: &str) -> Value {
    let (in_progress, drained, reason, message) = match stage {
        Stage::Started => (
            "True",
            "False",
            "DrainStarted",
            "kubectl maintain is draining the node",
        ),
        Stage::Drained => (
            "False",
            "True",
            "DrainCompleted",
            "kubectl maintain drained the node",
        ),
        Stage::NotDrained => (
            "False",
            "False",
            "DrainNotCompleted",
            "kubectl maintain's drain ended before the node was empty",
        ),
        Stage::Uncordoned => (
            "False",
            "False",
            "Uncordoned",
            "kubectl maintain returned the node to service",
        ),
    };
    let condition = |kind: &str, status: &str| condition(kind, status, reason, message, now);
    json!({"status": {"conditions": [
        condition(DRAIN_IN_PROGRESS, in_progress),
        condition(DRAINED, drained),
    ]}})
}

/// Does the node carry either condition (so that uncordon has something to reset)?
pub(crate) fn present(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == DRAIN_IN_PROGRESS || c.type_ == DRAINED)
        })
}

/// Writes the conditions, or does nothing when they are turned off or
/// were refused once.
pub(crate) struct Writer {
    client: kube::Client,
    enabled: bool,
    /// This run among the node's planners (crate::publish::planners).
    id: String,
    /// Nodes this run's claim is on.
    claimed: Mutex<BTreeSet<String>>,
    refused: AtomicBool,
    /// Nodes whose last write failed (after the client's retries): what
    /// they show may be stale, and followers read it.
    unwritten: Mutex<BTreeSet<String>>,
}

impl Writer {
    pub(crate) fn new(client: kube::Client, enabled: bool) -> Self {
        Writer {
            client,
            enabled,
            id: super::planners::own_id(),
            claimed: Mutex::new(BTreeSet::new()),
            refused: AtomicBool::new(false),
            unwritten: Mutex::new(BTreeSet::new()),
        }
    }

    /// Writes a stage's conditions on a node. A refusal is a warning, given
    /// once (to `events` when there is a drain to tell, else on stderr).
    pub(crate) async fn write(&self, node: &str, stage: Stage, events: Option<&Sink>) {
        let body = patch(stage, &kube_conventions::time::now_rfc3339());
        self.write_patch(node, body, events).await;
    }

    /// Writes a roll's maintenance conditions on a node, as `write`.
    pub(crate) async fn write_maintenance(
        &self,
        node: &str,
        stage: Maintenance,
        events: Option<&Sink>,
    ) {
        if !self.enabled || self.refused.load(Ordering::Relaxed) {
            return;
        }
        // `MaintenancePlanned` is shared: False only when no other run
        // still plans the node.
        let plans = matches!(stage, Maintenance::Planned | Maintenance::InProgress);
        let claimed = self.claimed.lock().expect("claimed").contains(node);
        // Taking a node this run already planned changes no claim.
        let others = if plans && claimed {
            false
        } else {
            self.claim(node, plans).await
        };
        let stage = match (stage, others) {
            (Maintenance::NoLongerPlanned, true) => return,
            (Maintenance::Over, true) => Maintenance::ReturnedStillPlanned,
            (stage, _) => stage,
        };
        let body = maintenance_patch(stage, &kube_conventions::time::now_rfc3339());
        self.write_patch(node, body, events).await;
    }

    /// Adds (`plans`) or removes this run's claim on the node
    /// (crate::publish::planners); whether another run still plans it. A
    /// node that cannot be written counts as planned by no one else (the
    /// condition is written as before).
    async fn claim(&self, node: &str, plans: bool) -> bool {
        let api: kube::Api<Node> = kube::Api::all(self.client.clone());
        let now = kube_conventions::time::now().as_second();
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PatchParams::default()
        };
        let patch = super::planners::patch(&self.id, plans, now);
        {
            let mut claimed = self.claimed.lock().expect("claimed");
            if plans {
                claimed.insert(node.to_string());
            } else {
                claimed.remove(node);
            }
        }
        match api
            .patch_metadata(node, &params, &Patch::Merge(&patch))
            .await
        {
            Ok(written) => super::planners::others(
                &written.metadata.annotations.unwrap_or_default(),
                &self.id,
                now,
            ),
            Err(_) => false,
        }
    }

    async fn write_patch(&self, node: &str, body: Value, events: Option<&Sink>) {
        if !self.enabled || self.refused.load(Ordering::Relaxed) {
            return;
        }
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..PatchParams::default()
        };
        let patch = Patch::Strategic(body);
        let written = crate::client::metadata_answers::patch_status::<Node, _>(
            &self.client,
            node,
            &params,
            &patch,
        )
        .await;
        let Err(e) = written else {
            self.unwritten_now().remove(node);
            return;
        };
        let forbidden = matches!(&e, kube::Error::Api(s) if s.code == 403);
        if !forbidden {
            self.unwritten_now().insert(node.to_string());
        }
        if forbidden && self.refused.swap(true, Ordering::Relaxed) {
            return;
        }
        let error = match &e {
            kube::Error::Api(s) if s.code == 403 => s.message.clone(),
            other => crate::vocabulary::api_words::words(other),
        };
        let warning = Warning::ConditionsNotWritten {
            node: node.to_string(),
            error,
            forbidden,
        };
        match events {
            Some(sink) => emit(sink, Event::Warning(warning)),
            None => crate::errln!("warning: {warning}"),
        }
    }
}

impl Writer {
    /// The nodes whose conditions' last write failed: they may show a stage
    /// that is over, so the command must not end with success.
    pub(crate) fn unwritten(&self) -> Vec<String> {
        self.unwritten_now().iter().cloned().collect()
    }

    fn unwritten_now(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.unwritten
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statuses(stage: Stage) -> (String, String, String) {
        let p = patch(stage, "t");
        let c = &p["status"]["conditions"];
        assert_eq!(c[0]["type"], DRAIN_IN_PROGRESS);
        assert_eq!(c[1]["type"], DRAINED);
        (
            c[0]["status"].as_str().unwrap().into(),
            c[1]["status"].as_str().unwrap().into(),
            c[0]["reason"].as_str().unwrap().into(),
        )
    }

    #[test]
    fn each_stage_sets_both_conditions() {
        let s = |a: &str, b: &str, r: &str| (a.to_string(), b.to_string(), r.to_string());
        assert_eq!(statuses(Stage::Started), s("True", "False", "DrainStarted"));
        assert_eq!(
            statuses(Stage::Drained),
            s("False", "True", "DrainCompleted")
        );
        assert_eq!(
            statuses(Stage::NotDrained),
            s("False", "False", "DrainNotCompleted")
        );
        assert_eq!(
            statuses(Stage::Uncordoned),
            s("False", "False", "Uncordoned")
        );
        // Only these two: the patch carries nothing else of the status.
        let p = patch(Stage::Started, "t");
        assert_eq!(p["status"].as_object().unwrap().len(), 1);
        assert_eq!(p["status"]["conditions"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn maintenance_stages_write_only_what_they_change() {
        let of = |stage| {
            let p = maintenance_patch(stage, "t");
            p["status"]["conditions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    format!(
                        "{}={}",
                        c["type"].as_str().unwrap(),
                        c["status"].as_str().unwrap()
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(of(Maintenance::Planned), ["MaintenancePlanned=True"]);
        assert_eq!(
            of(Maintenance::InProgress),
            ["MaintenancePlanned=True", "MaintenanceInProgress=True"]
        );
        assert_eq!(
            of(Maintenance::Over),
            ["MaintenancePlanned=False", "MaintenanceInProgress=False"]
        );
        assert_eq!(
            of(Maintenance::NoLongerPlanned),
            ["MaintenancePlanned=False"]
        );
    }
}
