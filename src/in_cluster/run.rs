//! A run handed to the cluster, as others find it: its Job (named, or the
//! newest labelled `kubectl-maintain.io/run` in the namespace), the Job's
//! state, and the pod that runs it now.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::ListParams;

use super::render::RUN_LABEL;
use crate::cli::exit::Exit;
use crate::client::Clients;
use crate::roll::lease::{PHASE, ROLL, node_of};
use crate::roll::phase::Phase;
use crate::vocabulary::api_error::api_error;

/// Where runs are submitted unless `-n` says otherwise.
pub(crate) const DEFAULT_NAMESPACE: &str = "kube-system";

pub(crate) use super::render::{ABORT, JOB_ENV};

/// Where a Job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobState {
    Running,
    Complete,
    Failed,
}

impl JobState {
    pub(crate) fn of(job: &Job) -> JobState {
        let conditions = job
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let holds = |t: &str| {
            conditions
                .iter()
                .any(|c| c.type_ == t && c.status == "True")
        };
        if holds("Complete") {
            JobState::Complete
        } else if holds("Failed") {
            JobState::Failed
        } else {
            JobState::Running
        }
    }

    pub(crate) fn ended(self) -> bool {
        self != JobState::Running
    }
}

/// The namespace of the runs: `-n`, else kube-system.
pub(crate) fn namespace(given: Option<&String>) -> String {
    given.map_or_else(|| DEFAULT_NAMESPACE.to_string(), Clone::clone)
}

/// The run's Job as it is now.
pub(crate) async fn job(clients: &Clients, ns: &str, name: &str) -> Result<Job, Exit> {
    Api::namespaced(clients.main.clone(), ns)
        .get(name)
        .await
        .map_err(|e| Exit::from(api_error("get", "jobs.batch", Some(name), e)))
}

/// A node of a roll, as its lock's Lease records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeLease {
    pub(crate) node: String,
    /// Where its roll is (crate::roll::phase); empty before it started.
    pub(crate) phase: String,
    /// Who holds the lock now.
    pub(crate) holder: Option<String>,
}

impl NodeLease {
    /// Has its roll finished on it?
    pub(crate) fn rolled(&self) -> bool {
        matches!(
            Phase::parse(&self.phase),
            Some(Phase::Done | Phase::Finished)
        )
    }
}

/// The nodes of the rolls locked in the namespace, by node.
pub(crate) async fn roll_leases(clients: &Clients, ns: &str) -> Result<Vec<NodeLease>, Exit> {
    let leases: Vec<Lease> = Api::namespaced(clients.main.clone(), ns)
        .list(&ListParams::default())
        .await
        .map_err(|e| Exit::from(api_error("list", "leases.coordination.k8s.io", None, e)))?
        .items;
    let mut nodes: Vec<NodeLease> = leases
        .into_iter()
        .filter_map(|l| {
            let annotations = l.metadata.annotations.unwrap_or_default();
            annotations.get(ROLL)?;
            Some(NodeLease {
                node: node_of(l.metadata.name.as_deref()?)?.to_string(),
                phase: annotations.get(PHASE).cloned().unwrap_or_default(),
                holder: l
                    .spec
                    .and_then(|s| s.holder_identity)
                    .filter(|h| !h.is_empty()),
            })
        })
        .collect();
    nodes.sort_by(|a, b| a.node.cmp(&b.node));
    Ok(nodes)
}

/// The run's Job: the one named, else the newest run in the namespace.
pub(crate) async fn find(clients: &Clients, ns: &str, name: Option<&str>) -> Result<Job, Exit> {
    let api: Api<Job> = Api::namespaced(clients.main.clone(), ns);
    if let Some(name) = name {
        return api
            .get_opt(name)
            .await
            .map_err(|e| Exit::from(api_error("get", "jobs.batch", Some(name), e)))?
            .ok_or_else(|| {
                Exit::usage(format!(
                    "no run {name} in namespace {ns} (kubectl -n {ns} get jobs -l {RUN_LABEL})"
                ))
            });
    }
    let jobs = api
        .list(&ListParams::default().labels(RUN_LABEL))
        .await
        .map_err(|e| Exit::from(api_error("list", "jobs.batch", None, e)))?;
    newest(jobs.items).ok_or_else(|| {
        Exit::usage(format!(
            "no run handed to the cluster in namespace {ns} (submit one with --in-cluster, or name another namespace with -n)"
        ))
    })
}

fn created(job: &Job) -> String {
    job.metadata
        .creation_timestamp
        .as_ref()
        .map(|t| t.0.to_string())
        .unwrap_or_default()
}

/// The most recently created Job.
fn newest(mut jobs: Vec<Job>) -> Option<Job> {
    jobs.sort_by_key(created);
    jobs.pop()
}

/// The Job's pods, oldest first.
pub(crate) async fn pods(clients: &Clients, job: &Job) -> Result<Vec<Pod>, Exit> {
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let name = job.metadata.name.clone().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(clients.main.clone(), &ns);
    let mut pods = api
        .list(&ListParams::default().labels(&format!("{RUN_LABEL}={name}")))
        .await
        .map_err(|e| Exit::from(api_error("list", "pods", None, e)))?
        .items;
    pods.sort_by_key(|p| {
        p.metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.to_string())
            .unwrap_or_default()
    });
    Ok(pods)
}

/// A pod's run so far: its name, node, restarts, and whether its
/// container has started (its log can be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PodRun {
    pub(crate) name: String,
    pub(crate) uid: String,
    pub(crate) node: Option<String>,
    pub(crate) restarts: i32,
    pub(crate) running: bool,
    pub(crate) terminated: Option<i32>,
    pub(crate) deleting: bool,
}

impl PodRun {
    pub(crate) fn of(pod: &Pod) -> PodRun {
        let status = pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|c| c.first());
        let state = status.and_then(|s| s.state.as_ref());
        PodRun {
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            node: pod.spec.as_ref().and_then(|s| s.node_name.clone()),
            restarts: status.map_or(0, |s| s.restart_count),
            running: state.is_some_and(|s| s.running.is_some()),
            terminated: state
                .and_then(|s| s.terminated.as_ref())
                .map(|t| t.exit_code),
            deleting: pod.metadata.deletion_timestamp.is_some(),
        }
    }

    /// Has its container a log to read (running, or ended)?
    pub(crate) fn has_log(&self) -> bool {
        self.running || self.terminated.is_some()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn job(name: &str, created: &str, condition: Option<&str>) -> Job {
        let mut j = Job::default();
        j.metadata.name = Some(name.into());
        j.metadata.creation_timestamp = Some(Time(created.parse().expect("time")));
        j.status = condition.map(|c| JobStatus {
            conditions: Some(vec![JobCondition {
                type_: c.into(),
                status: "True".into(),
                ..JobCondition::default()
            }]),
            ..JobStatus::default()
        });
        j
    }

    #[test]
    fn the_newest_run_is_found_and_its_state_read() {
        let runs = vec![
            job("b", "2026-01-02T00:00:00Z", Some("Complete")),
            job("c", "2026-01-03T00:00:00Z", None),
            job("a", "2026-01-01T00:00:00Z", Some("Failed")),
        ];
        let newest = newest(runs.clone()).expect("a run");
        assert_eq!(newest.metadata.name.as_deref(), Some("c"));
        assert_eq!(JobState::of(&newest), JobState::Running);
        assert_eq!(JobState::of(&runs[0]), JobState::Complete);
        assert_eq!(JobState::of(&runs[2]), JobState::Failed);
        assert!(JobState::Failed.ended() && !JobState::Running.ended());
    }
}
