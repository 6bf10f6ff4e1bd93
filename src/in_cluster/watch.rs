//! `kubectl maintain status -w`: a run handed to the cluster, followed
//! from any terminal, read only from the cluster: its Job and pod (where it
//! runs, its restarts, an abort asked), each node's Lease (the roll's phase
//! and who holds it), the node's cordon and `DrainInProgress` condition
//! (what its drain does now), and the last `DrainBlocked` Event (what holds
//! it). A new view is printed when something changed, until the Job ends:
//! exit 0 when it completed, 1 when it failed.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Node};
use kube::Api;
use kube::api::ListParams;

use super::run::{self, ABORT, JobState, PodRun};
use crate::cli::exit::Exit;
use crate::client::Clients;
use crate::policy::maintenance::DRAIN_IN_PROGRESS;
use crate::publish::node_events::BLOCKED;
use crate::roll::phase::Phase;
use crate::vocabulary::api_error::api_error;

const POLL: Duration = Duration::from_secs(2);

/// One node of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeRow {
    pub(crate) node: String,
    pub(crate) phase: String,
    /// Its roll has finished on it.
    pub(crate) done: bool,
    pub(crate) holder: Option<String>,
    pub(crate) cordoned: bool,
    /// The `DrainInProgress` condition's message while it is True.
    pub(crate) doing: Option<String>,
    /// The last `DrainBlocked` Event's message.
    pub(crate) blocker: Option<String>,
}

/// The run as the cluster shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    pub(crate) run: String,
    pub(crate) namespace: String,
    pub(crate) state: JobState,
    pub(crate) abort: Option<String>,
    pub(crate) pod: Option<PodRun>,
    pub(crate) nodes: Vec<NodeRow>,
}

/// The view as text: the run's line, then one line per node.
pub(crate) fn render(v: &View) -> String {
    use std::fmt::Write as _;
    let state = match v.state {
        JobState::Running => "running",
        JobState::Complete => "complete",
        JobState::Failed => "failed",
    };
    let mut out = format!("run {} in {}: {state}", v.run, v.namespace);
    match &v.pod {
        Some(p) => {
            let node = p.node.as_deref().unwrap_or("no node yet");
            let _ = write!(out, "; pod {} on {node}", p.name);
            if p.restarts > 0 {
                let _ = write!(out, ", {} restarts", p.restarts);
            }
            if p.deleting {
                out.push_str(", being deleted");
            }
        }
        None if !v.state.ended() => out.push_str("; no pod yet"),
        None => {}
    }
    if let Some(a) = &v.abort {
        let _ = write!(out, "; abort asked ({a})");
    }
    let done = v.nodes.iter().filter(|n| n.done).count();
    let _ = writeln!(out, "\nnodes: {done}/{} done", v.nodes.len());
    for n in &v.nodes {
        let _ = write!(out, "  node/{} {}", n.node, n.phase);
        if n.cordoned {
            out.push_str(", cordoned");
        }
        if let Some(h) = &n.holder {
            let _ = write!(out, ", locked by {h}");
        }
        if let Some(d) = &n.doing {
            let _ = write!(out, ": {d}");
        }
        if let Some(b) = &n.blocker {
            let _ = write!(out, "; blocked: {b}");
        }
        out.push('\n');
    }
    out
}

/// Reads the run from the cluster.
async fn look(clients: &Clients, ns: &str, name: &str) -> Result<View, Exit> {
    let client = &clients.main;
    let job = run::job(clients, ns, name).await?;
    let pods = run::pods(clients, &job).await?;
    let leases = run::roll_leases(clients, ns).await?;
    let nodes: BTreeMap<String, Node> = Api::<Node>::all(client.clone())
        .list(&ListParams::default())
        .await
        .map_err(|e| Exit::from(api_error("list", "nodes", None, e)))?
        .items
        .into_iter()
        .map(|n| (n.metadata.name.clone().unwrap_or_default(), n))
        .collect();
    let blocked: Vec<Event> = Api::namespaced(client.clone(), "default")
        .list(&ListParams::default().fields(&format!("reason={BLOCKED}")))
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    let rows = leases
        .into_iter()
        .map(|lease| {
            let n = nodes.get(&lease.node);
            let doing = n
                .and_then(|n| n.status.as_ref()?.conditions.as_ref())
                .and_then(|cs| {
                    cs.iter()
                        .find(|c| c.type_ == DRAIN_IN_PROGRESS && c.status == "True")
                })
                .and_then(|c| c.message.clone());
            // Only while the roll has not finished: an old hold is history.
            let blocker = blocked
                .iter()
                .filter(|e| e.involved_object.name.as_deref() == Some(lease.node.as_str()))
                .max_by_key(|e| e.last_timestamp.as_ref().map(|t| t.0))
                .and_then(|e| e.message.clone())
                .filter(|_| lease.phase != Phase::Finished.as_str());
            let phase = if lease.phase.is_empty() {
                "pending".to_string()
            } else {
                lease.phase.clone()
            };
            NodeRow {
                cordoned: n
                    .and_then(|n| n.spec.as_ref()?.unschedulable)
                    .unwrap_or(false),
                done: lease.rolled(),
                node: lease.node,
                phase,
                holder: lease.holder,
                doing,
                blocker,
            }
        })
        .collect();
    Ok(View {
        run: name.to_string(),
        namespace: ns.to_string(),
        state: JobState::of(&job),
        abort: job
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(ABORT).cloned()),
        pod: pods.last().map(PodRun::of),
        nodes: rows,
    })
}

/// Prints the run whenever it changes; once without `watch`.
pub(crate) async fn watch(clients: &Clients, job: &Job, watch: bool) -> Result<u8, Exit> {
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let name = job.metadata.name.clone().unwrap_or_default();
    let mut last = String::new();
    loop {
        let view = look(clients, &ns, &name).await?;
        let text = render(&view);
        if text != last {
            if !last.is_empty() {
                crate::outln!();
            }
            crate::out!("{text}");
            last = text;
        }
        if !watch || view.state.ended() {
            return Ok(crate::exit_codes::of_job(view.state == JobState::Failed));
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_says_the_run_its_pod_and_each_node() {
        let v = View {
            run: "kubectl-maintain-roll-1".into(),
            namespace: "kube-system".into(),
            state: JobState::Running,
            abort: None,
            pod: Some(PodRun {
                name: "p".into(),
                uid: "u".into(),
                node: Some("spare0".into()),
                restarts: 1,
                running: true,
                terminated: None,
                deleting: false,
            }),
            nodes: vec![
                NodeRow {
                    node: "r1".into(),
                    phase: "finished".into(),
                    done: true,
                    holder: None,
                    cordoned: false,
                    doing: None,
                    blocker: None,
                },
                NodeRow {
                    node: "r2".into(),
                    phase: "draining".into(),
                    done: false,
                    holder: Some("kubectl-maintain/p/7".into()),
                    cordoned: true,
                    doing: Some("1 pod left".into()),
                    blocker: Some("pdb/shop/db allows no disruption".into()),
                },
            ],
        };
        assert_eq!(
            render(&v),
            "run kubectl-maintain-roll-1 in kube-system: running; pod p on spare0, 1 restarts\n\
             nodes: 1/2 done\n  node/r1 finished\n  node/r2 draining, cordoned, locked by kubectl-maintain/p/7: 1 pod left; blocked: pdb/shop/db allows no disruption\n"
        );
    }
}
