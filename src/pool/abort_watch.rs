//! `kubectl maintain abort`, as a roll run by a Job hears it: before it
//! takes each node it reads its own Job (named in its environment by the
//! rendered Job), and an `abort` annotation there stops it taking more;
//! the node in progress finishes. A roll run from a terminal has no Job
//! and reads nothing (Ctrl-C is its abort). The names below are the
//! contract with the Job crate::in_cluster renders and annotates.

use std::sync::atomic::{AtomicBool, Ordering};

use k8s_openapi::api::batch::v1::Job;
use kube::Api;

use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

/// The annotation `kubectl maintain abort` puts on the Job: when it was
/// asked, and by whom.
pub(crate) const ABORT: &str = "kubectl-maintain.io/abort";
/// The environment that tells a run it is a Job's, and which.
pub(crate) const JOB_ENV: &str = "KUBECTL_MAINTAIN_JOB";
pub(crate) const NAMESPACE_ENV: &str = "KUBECTL_MAINTAIN_NAMESPACE";
/// The Job's namespace when the environment does not say.
const DEFAULT_NAMESPACE: &str = "kube-system";

pub(crate) struct AbortWatch {
    job: Option<(Api<Job>, String)>,
    warned: AtomicBool,
}

impl AbortWatch {
    /// The run's own Job, when it is a Job's.
    pub(crate) fn from_env(client: &kube::Client) -> AbortWatch {
        let job = std::env::var(JOB_ENV)
            .ok()
            .filter(|j| !j.is_empty())
            .map(|name| {
                let ns = std::env::var(NAMESPACE_ENV)
                    .ok()
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
                (Api::namespaced(client.clone(), &ns), name)
            });
        AbortWatch {
            job,
            warned: AtomicBool::new(false),
        }
    }

    /// A run no Job runs: nothing to read, never aborted (Ctrl-C is its
    /// abort).
    #[cfg(test)]
    pub(crate) fn none() -> AbortWatch {
        AbortWatch {
            job: None,
            warned: AtomicBool::new(false),
        }
    }

    /// Who asked to abort and when, if someone has; a Job that cannot be
    /// read is said once, and not an abort.
    pub(crate) async fn asked(&self, events: &Sink) -> Option<String> {
        let (api, name) = self.job.as_ref()?;
        match api.get(name).await {
            Ok(job) => job.metadata.annotations.and_then(|mut a| a.remove(ABORT)),
            Err(e) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    let error =
                        crate::vocabulary::api_error::api_error("get", "jobs.batch", Some(name), e);
                    let error = error.to_string();
                    emit(events, Event::Warning(Warning::AbortUnheard { error }));
                }
                None
            }
        }
    }
}
