//! `kubectl maintain logs [-f] [RUN]`: the log of a run handed to the
//! cluster. Without `-f`, the current pod's log. With it, the log streams
//! and goes on across the run's pods: a container restarted in its pod (a
//! SIGKILL, an out-of-memory kill) and a pod replaced by the Job controller
//! (its node's turn came) are followed in turn, each said on stderr, until
//! the Job ends: exit 0 when it completed, 1 when it failed.

use std::time::Duration;

use futures::{AsyncBufReadExt as _, TryStreamExt as _};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::LogParams;

use super::run::{self, JobState, PodRun};
use crate::cli::exit::{self, Exit};
use crate::client::Clients;
use crate::vocabulary::api_error::api_error;

/// The container the rendered Job runs.
const CONTAINER: &str = "kubectl-maintain";

/// How often the run's pods are looked at between streams.
const POLL: Duration = Duration::from_secs(1);

/// What changed between the run followed and the one to follow now.
fn change(before: &PodRun, now: &PodRun) -> Option<String> {
    if before.uid != now.uid {
        return Some(format!(
            "pod {} was replaced by pod {} (on {})",
            before.name,
            now.name,
            now.node.as_deref().unwrap_or("no node yet")
        ));
    }
    (now.restarts != before.restarts).then(|| {
        format!(
            "pod {} restarted its container (restart {})",
            now.name, now.restarts
        )
    })
}

/// Streams one container run's log to stdout; from its start, or only
/// what comes next (`tail`: a stream cut mid-run is taken up there).
async fn stream(
    api: &Api<Pod>,
    pod: &str,
    follow: bool,
    timestamps: bool,
    only_new: bool,
) -> Result<(), Exit> {
    let params = LogParams {
        container: Some(CONTAINER.to_string()),
        follow,
        timestamps,
        tail_lines: only_new.then_some(0),
        ..LogParams::default()
    };
    let reader = api
        .log_stream(pod, &params)
        .await
        .map_err(|e| Exit::from(api_error("get", "pods/log", Some(pod), e)))?;
    let mut lines = reader.lines();
    // A stream cut by the network ends the same way as one whose
    // container ended: the caller looks at the pod again.
    while let Ok(Some(line)) = lines.try_next().await {
        crate::outln!("{line}");
    }
    Ok(())
}

pub(crate) async fn logs(
    clients: &Clients,
    job: Job,
    follow: bool,
    timestamps: bool,
) -> Result<u8, Exit> {
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let name = job.metadata.name.clone().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(clients.main.clone(), &ns);
    let mut followed: Option<PodRun> = None;
    let mut said_waiting = String::new();
    loop {
        let job = run::job(clients, &ns, &name).await?;
        let state = JobState::of(&job);
        let pods: Vec<PodRun> = run::pods(clients, &job)
            .await?
            .iter()
            .map(PodRun::of)
            .collect();
        let current = pods.iter().rev().find(|p| p.has_log());
        if let Some(now) = current {
            let next = match &followed {
                None => Some(None),
                Some(before) => change(before, now).map(Some),
            };
            // The same run again: its stream was cut while it runs.
            let cut = followed.as_ref() == Some(now) && now.running;
            if let Some(why) = next.or(cut.then_some(None)) {
                if let Some(why) = why {
                    crate::errln!("--- {why}: following it");
                } else if cut {
                    // Its status may not show its end yet: look again
                    // after a while, not at once.
                    tokio::time::sleep(POLL).await;
                }
                stream(&api, &now.name, follow, timestamps, cut).await?;
                followed = Some(now.clone());
                if !follow {
                    return Ok(exit::OK);
                }
                continue;
            }
        }
        if state.ended() {
            if state == JobState::Failed {
                crate::errln!("error: run {name} failed (kubectl -n {ns} describe job {name})");
            }
            return Ok(crate::exit_codes::of_job(state == JobState::Failed));
        }
        if !follow {
            let pending = pods.last().map_or_else(
                || "the Job has no pod yet".to_string(),
                |p| format!("pod {} has not started its container yet", p.name),
            );
            crate::errln!("no log yet: {pending} (kubectl maintain logs -f waits for it)");
            return Ok(exit::FAILURE);
        }
        let waiting = pods.last().map_or_else(
            || "the Job's next pod".to_string(),
            |p| format!("pod {} to run", p.name),
        );
        if waiting != said_waiting {
            crate::errln!("--- waiting for {waiting}");
            said_waiting = waiting;
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, uid: &str, restarts: i32) -> PodRun {
        PodRun {
            name: name.into(),
            uid: uid.into(),
            node: Some("spare0".into()),
            restarts,
            running: true,
            terminated: None,
            deleting: false,
        }
    }

    #[test]
    fn a_restart_and_a_new_pod_are_each_followed_and_said() {
        let first = run("p1", "u1", 0);
        assert_eq!(change(&first, &first), None);
        assert_eq!(
            change(&first, &run("p1", "u1", 1)).as_deref(),
            Some("pod p1 restarted its container (restart 1)")
        );
        assert_eq!(
            change(&first, &run("p2", "u2", 0)).as_deref(),
            Some("pod p1 was replaced by pod p2 (on spare0)")
        );
    }
}
