//! Cordoning a node: unschedulable, the maintenance taints, and the record
//! of what changed (crate::policy::maintenance), written before anything
//! is evicted.

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::{Patch, PatchParams};

use super::{DrainError, Options};
use crate::policy::maintenance::{self, MarkSpec, TaintSpec, unschedulable};
use crate::publish::Publisher;
use crate::publish::conditions::{self, Stage};
use crate::vocabulary::api_error::api_error;

/// What cordoning a node changes besides `spec.unschedulable`, and what it
/// records for uncordon to undo.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CordonSpec<'a> {
    /// Maintenance taints (`--taint` and the plan's).
    pub(crate) taints: &'a [TaintSpec],
    /// Labels (`--exclude-from-load-balancers`).
    pub(crate) labels: &'a [(String, String)],
    /// Labels and annotations put back as they were at uncordon
    /// (`--label-during`, `--protect-from-autoscalers`).
    pub(crate) marks: &'a [MarkSpec],
    /// `--surge`: recorded so that uncordon scales back what is left.
    pub(crate) surge: bool,
    /// `--reason`.
    pub(crate) reason: Option<&'a str>,
}

impl Options {
    /// What cordoning a node for this drain changes.
    pub(crate) fn cordon_spec(&self) -> CordonSpec<'_> {
        CordonSpec {
            taints: &self.taints,
            labels: &self.labels,
            marks: &self.marks,
            surge: self.surge,
            reason: self.reason.as_deref(),
        }
    }
}

/// Cordons a node, adds the maintenance taints and writes the record of
/// what changed (crate::policy::maintenance), before anything is evicted. Retries
/// when the node changed underneath (409). Returns whether it was
/// unschedulable before this maintenance began (from the record when a drain
/// is resumed), and whether it is unschedulable already now.
pub(crate) async fn cordon(
    client: &kube::Client,
    spec: &CordonSpec<'_>,
    node: &Node,
    dry_run: bool,
) -> Result<(bool, bool), DrainError> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let api: Api<Node> = Api::all(client.clone());
    let params = PatchParams {
        dry_run,
        field_manager: Some(maintenance::FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    let now = kube_conventions::time::now_rfc3339();
    let mut current = node.clone();
    for _ in 0..5 {
        let was = maintenance::live_record(&current)
            .map_or_else(|| unschedulable(&current), |r| r.was_unschedulable);
        let now_cordoned = unschedulable(&current);
        let Some(patch) = maintenance::cordon_patch(
            &current,
            spec.taints,
            spec.labels,
            spec.marks,
            spec.surge,
            spec.reason,
            &now,
        ) else {
            return Ok((was, now_cordoned));
        };
        let patch = Patch::Merge(patch);
        match api.patch_metadata(&name, &params, &patch).await {
            Ok(_) => return Ok((was, now_cordoned)),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                current = api
                    .get(&name)
                    .await
                    .map_err(|e| api_error("get", "nodes", None, e))?;
            }
            Err(e) => return Err(api_error("patch", "nodes", None, e)),
        }
    }
    Err(DrainError::Conflict(format!(
        "node {name} kept changing while it was being cordoned"
    )))
}

/// Returns a node to service, undoing exactly what the drain changed
/// (crate::policy::maintenance), retrying when the node changed underneath.
/// What the undo still needs goes last: a surge is scaled back before the
/// node's record of it is removed, so that an uncordon that stops between
/// the two (killed, or the scale-back failed) still finds it next time.
pub(crate) async fn uncordon(
    client: &kube::Client,
    node: Node,
    publisher: &Publisher,
) -> Result<maintenance::Uncordon, DrainError> {
    let name = node.metadata.name.clone().unwrap_or_default();
    if maintenance::record_of(&node).is_some_and(|r| r.surge) {
        let undone = Box::pin(super::surge::undo_left_by(client, &name)).await;
        for left in &undone.left_as_is {
            crate::errln!("warning: {left}");
        }
        if !undone.failed.is_empty() {
            return Err(DrainError::Unfinished(format!(
                "{}; node {name} stays cordoned with its record, so that `kubectl maintain uncordon {name}` finishes it",
                undone.failed.join("; ")
            )));
        }
    }
    let api: Api<Node> = Api::all(client.clone());
    let params = PatchParams {
        field_manager: Some(maintenance::FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    let mut current = node;
    for _ in 0..5 {
        let undo = maintenance::uncordon_patch(&current);
        match api
            .patch_metadata(&name, &params, &Patch::Merge(&undo.patch))
            .await
        {
            Ok(_) => {
                if conditions::present(&current) {
                    publisher.stage(&name, Stage::Uncordoned, None).await;
                }
                return Ok(undo);
            }
            Err(kube::Error::Api(s)) if s.code == 409 => {
                current = api
                    .get(&name)
                    .await
                    .map_err(|e| api_error("get", "nodes", None, e))?;
            }
            Err(e) => return Err(api_error("patch", "nodes", None, e)),
        }
    }
    Err(DrainError::Conflict(format!(
        "node {name} kept changing while it was being uncordoned; try again"
    )))
}
