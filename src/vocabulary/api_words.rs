//! A failed request in kubectl's words: the server's status and message
//! (never kube's debug structure), which server, and what to check; a
//! server that cannot be reached or trusted, or refused the credentials,
//! said alone, as kubectl does.

/// Whether the server could not be reached at all, would not be trusted,
/// refused the credentials, or took the connection and never answered:
/// kubectl then prints its line alone, whatever the request.
pub(crate) fn said_alone(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 401,
        other => {
            let cause = crate::client::failure::of(other);
            cause.is_first_contact_final()
                || matches!(cause, crate::client::failure::NoAnswer::Silent(_))
        }
    }
}

/// A request that failed for good, with the request named, except where
/// it is said alone (`said_alone`).
pub(crate) fn failed(request: &str, e: &kube::Error) -> String {
    if said_alone(e) {
        words(e)
    } else {
        format!("{request} failed: {}", words(e))
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
        // kubectl drain's words (k8s.io/kubectl pkg/cmd/util/helpers.go
        // `StandardErrorMessage`, over client-go's text for a 401 met in
        // discovery, which drain asks first).
        kube::Error::Api(s) if s.code == 401 => {
            "You must be logged in to the server (the server has asked for the client to provide credentials)".to_string()
        }
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
                _ => String::new(),
            };
            format!("{server} answered {}{reason}: {}{check}", s.code, s.message)
        }
        // No answer: kubectl's words for its cause (crate::client::failure).
        other => {
            let target = crate::client::target();
            crate::client::failure::words(
                &crate::client::failure::of(other),
                target.map_or("the server", |t| t.url.as_str()),
                target.and_then(|t| t.exec.as_ref()),
                target.and_then(|t| t.proxy.as_deref()),
            )
        }
    }
}
