//! Retries on screen. The client retries every request itself
//! (crate::client::retry); a run tells its listeners of each retry as it
//! is made: the first failed try at once, then at least every 10 s (the
//! backoff's longest wait) while the request is retried.

use tokio::sync::broadcast::error::RecvError;

use crate::client::Clients;
use crate::client::retry::{Answer, Retried};
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

/// Tells `events` of the client's retries until dropped.
pub(crate) struct RetriesTold(tokio::task::JoinHandle<()>);

impl Drop for RetriesTold {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts telling `events` of the retries `clients` make. It holds no
/// sender of `events`, so that the listeners still see the events end when
/// the run drops its own.
pub(crate) fn tell(clients: &Clients, events: &Sink) -> RetriesTold {
    let mut retries = clients.retries();
    let events = events.downgrade();
    RetriesTold(tokio::spawn(async move {
        loop {
            match retries.recv().await {
                Ok(r) => {
                    let Some(events) = events.upgrade() else {
                        return;
                    };
                    emit(&events, Event::Warning(warning(&r)));
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    }))
}

fn warning(r: &Retried) -> Warning {
    if let Answer::Silent(waited) = r.answer {
        return Warning::NoAnswerYet {
            what: format!("{} {}", r.method, resource_of(&r.path)),
            seconds: waited.as_secs(),
        };
    }
    Warning::Retrying {
        what: format!("{} {}", r.method, resource_of(&r.path)),
        error: match r.answer {
            Answer::Status(code) => format!("answered {code}"),
            Answer::Unanswered | Answer::Silent(_) => "no answer".to_string(),
        },
        try_of: r.try_of,
    }
}

/// The resource a request path names, without the object's name:
/// `/api/v1/namespaces/apps/pods/web-1` is `pods`, `/apis/coordination.k8s.io/v1/namespaces/x/leases/n1` is `leases`.
fn resource_of(path: &str) -> String {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (["api", _, rest @ ..] | ["apis", _, _, rest @ ..]) = segs.as_slice() else {
        return path.to_string();
    };
    let rest = match rest {
        ["namespaces", _, r @ ..] if !r.is_empty() => r,
        r => r,
    };
    match rest {
        [plural] | [plural, _] => (*plural).to_string(),
        [plural, _, sub, ..] => format!("{plural}/{sub}"),
        [] => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::resource_of;

    #[test]
    fn paths_name_their_resource() {
        assert_eq!(resource_of("/api/v1/nodes"), "nodes");
        assert_eq!(resource_of("/api/v1/nodes/n1"), "nodes");
        assert_eq!(resource_of("/api/v1/namespaces/apps/pods"), "pods");
        assert_eq!(resource_of("/api/v1/namespaces/apps/pods/web-1"), "pods");
        assert_eq!(
            resource_of("/apis/apps/v1/namespaces/apps/deployments/web/scale"),
            "deployments/scale"
        );
        assert_eq!(
            resource_of("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/n1"),
            "leases"
        );
        assert_eq!(resource_of("/api/v1/namespaces"), "namespaces");
        assert_eq!(resource_of("/api/v1/namespaces/apps"), "namespaces");
    }
}
