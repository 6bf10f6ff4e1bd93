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
/// (never kube's debug structure), and what to check.
pub(crate) fn words(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => {
            let reason = if s.reason.is_empty() {
                String::new()
            } else {
                format!(" {}", s.reason)
            };
            let check = match s.code {
                500..=599 | 429 => format!(
                    "; still failing after {} min of retries: check the API server's health (kubectl get --raw /readyz)",
                    crate::client::retry::WINDOW.as_secs() / 60
                ),
                401 => "; check the kubeconfig's credentials".to_string(),
                _ => String::new(),
            };
            format!(
                "the server answered {}{reason}: {}{check}",
                s.code, s.message
            )
        }
        other => format!("{other}; check that the API server is reachable (kubectl cluster-info)"),
    }
}
