//! `kubectl maintain abort [RUN]`: a run handed to the cluster stops after
//! the node in progress, and its Job goes.
//!
//! A roll is asked through its Job (the `kubectl-maintain.io/abort`
//! annotation, read before it takes each node: crate::pool::abort_watch): it
//! finishes the node in progress (drained, acted on, uncordoned) and ends.
//! Once its pod has stopped, the Job is deleted (its pods with it). A drain
//! has no next node: its Job is deleted at once, and its pod's SIGTERM
//! stops new evictions (what is left stays cordoned, as after Ctrl-C).
//! Either way what is left is said: the nodes not rolled, and those still
//! cordoned, which `kubectl maintain uncordon` returns to service.

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PropagationPolicy};
use serde_json::json;

use super::run::{self, ABORT, JobState, PodRun};
use crate::cli::exit::{self, Exit};
use crate::client::Clients;
use crate::vocabulary::api_error::api_error;

const POLL: Duration = Duration::from_secs(1);

/// Has the run's pod stopped since the abort was asked (`before`: its pod
/// then)?
fn stopped(before: Option<&PodRun>, now: Option<&PodRun>) -> bool {
    match (before, now) {
        (_, None) => true,
        (Some(b), Some(n)) if b.uid != n.uid => true,
        (Some(b), Some(n)) => n.restarts > b.restarts || n.terminated.is_some() || n.deleting,
        (None, Some(n)) => n.terminated.is_some(),
    }
}

pub(crate) async fn abort(clients: &Clients, job: Job, who: &str) -> Result<u8, Exit> {
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let name = job.metadata.name.clone().unwrap_or_default();
    let jobs: Api<Job> = Api::namespaced(clients.main.clone(), &ns);
    let is_roll = name.starts_with("kubectl-maintain-roll-");
    let before = run::pods(clients, &job).await?.last().map(PodRun::of);
    if is_roll && !JobState::of(&job).ended() {
        let asked = format!("{} by {who}", kube_conventions::time::now_rfc3339());
        let patch = json!({"metadata": {"annotations": {ABORT: asked}}});
        jobs.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| Exit::from(api_error("patch", "jobs.batch", Some(&name), e)))?;
        crate::errln!(
            "abort asked of run {name}: it takes no more nodes, and ends once the node in progress is done"
        );
        let mut said = String::new();
        loop {
            let job = run::job(clients, &ns, &name).await?;
            let now = run::pods(clients, &job).await?.last().map(PodRun::of);
            if JobState::of(&job).ended() || stopped(before.as_ref(), now.as_ref()) {
                break;
            }
            let progress = in_progress(clients, &ns).await?;
            let line = if progress.is_empty() {
                "waiting for the run to end (no node in progress)".to_string()
            } else {
                format!("waiting for the node in progress: {}", progress.join(", "))
            };
            if line != said {
                crate::errln!("{line}");
                said = line;
            }
            tokio::time::sleep(POLL).await;
        }
    }
    let background = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    match jobs.delete(&name, &background).await {
        Ok(_) => crate::errln!("job.batch/{name} deleted"),
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => {
            return Err(Exit::from(api_error(
                "delete",
                "jobs.batch",
                Some(&name),
                e,
            )));
        }
    }
    left(clients, &ns).await?;
    Ok(exit::OK)
}

/// The nodes whose roll is under way: `node (phase)`.
async fn in_progress(clients: &Clients, ns: &str) -> Result<Vec<String>, Exit> {
    Ok(run::roll_leases(clients, ns)
        .await?
        .into_iter()
        .filter(|l| l.holder.is_some() && !l.rolled())
        .map(|l| format!("{} ({})", l.node, l.phase))
        .collect())
}

/// Says what the run leaves: nodes not rolled, nodes still cordoned.
async fn left(clients: &Clients, ns: &str) -> Result<(), Exit> {
    let leases = run::roll_leases(clients, ns).await?;
    let rolled: Vec<&str> = leases
        .iter()
        .filter(|l| l.rolled())
        .map(|l| l.node.as_str())
        .collect();
    let nodes = Api::<Node>::all(clients.main.clone())
        .list(&ListParams::default())
        .await
        .map_err(|e| Exit::from(api_error("list", "nodes", None, e)))?
        .items;
    let ours: Vec<String> = nodes
        .iter()
        .filter(|n| crate::policy::maintenance::record_of(n).is_some())
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    crate::errln!(
        "rolled: {}",
        if rolled.is_empty() {
            "none".to_string()
        } else {
            rolled.join(", ")
        }
    );
    if ours.is_empty() {
        crate::errln!("no node is left cordoned by kubectl maintain");
    } else {
        crate::errln!(
            "left cordoned: {} (kubectl maintain uncordon {} returns them to service; a rerun of the roll takes them up)",
            ours.join(", "),
            ours.join(" ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(uid: &str, restarts: i32, terminated: Option<i32>) -> PodRun {
        PodRun {
            name: "p".into(),
            uid: uid.into(),
            node: None,
            restarts,
            running: terminated.is_none(),
            terminated,
            deleting: false,
        }
    }

    #[test]
    fn the_run_has_stopped_once_its_pod_ended_restarted_or_was_replaced() {
        let running = pod("u", 0, None);
        assert!(!stopped(Some(&running), Some(&running)));
        assert!(stopped(Some(&running), Some(&pod("u", 0, Some(3)))));
        assert!(stopped(Some(&running), Some(&pod("u", 1, None))));
        assert!(stopped(Some(&running), Some(&pod("v", 0, None))));
        assert!(stopped(Some(&running), None));
    }
}
