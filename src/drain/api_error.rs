//! A failed request turned into the drain's error: a refused permission
//! names the verb and resource to grant, anything else keeps the request
//! it was and the API's error as its source.

use super::DrainError;

/// The drain's error for a request (`verb` on `resource`) that failed.
pub(crate) fn api_error(
    verb: &str,
    resource: &str,
    namespace: Option<&str>,
    e: kube::Error,
) -> DrainError {
    match e {
        kube::Error::Api(ref s) if s.code == 403 => DrainError::Forbidden {
            verb: verb.to_string(),
            resource: resource.to_string(),
            namespace: namespace.map(str::to_string),
            message: s.message.clone(),
        },
        error => DrainError::Api {
            request: format!("{verb} {resource}"),
            error,
        },
    }
}

/// A failed request's error in one line: the server's status and message
/// (never kube's debug structure), which server, and what to check.
pub(crate) fn words(e: &kube::Error) -> String {
    let server = crate::client::target().map_or_else(
        || "the server".to_string(),
        |t| format!("the server at {}", t.url.trim_end_matches('/')),
    );
    match e {
        kube::Error::Api(s) => {
            let reason = if s.reason.is_empty() {
                String::new()
            } else {
                format!(" {}", s.reason)
            };
            let check = match s.code {
                500..=599 | 429 => format!(
                    "; still failing after {} of retries: check the API server's health (kubectl get --raw /readyz)",
                    crate::duration::go(crate::client::retry_window())
                ),
                401 => "; check the kubeconfig's credentials".to_string(),
                _ => String::new(),
            };
            format!("{server} answered {}{reason}: {}{check}", s.code, s.message)
        }
        other => format!(
            "no answer from {server}: {}; check that the API server is reachable (kubectl cluster-info)",
            root_cause(other)
        ),
    }
}

/// The innermost reason of an error without an answer (a refused
/// connection, a certificate, a name that does not resolve), in its words.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last
}
