//! A failed request turned into the drain's error: a refused permission
//! names the verb and resource to grant, anything else keeps the request
//! it was and the API's error as its source (said in `super::api_words`).

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

/// The API server's message when a watch (or its list) was forbidden.
pub(crate) fn forbidden(e: &kube::runtime::watcher::Error) -> Option<String> {
    use kube::runtime::watcher::Error;
    match e {
        Error::InitialListFailed(kube::Error::Api(s))
        | Error::WatchStartFailed(kube::Error::Api(s))
        | Error::WatchFailed(kube::Error::Api(s))
            if s.code == 403 =>
        {
            Some(s.message.clone())
        }
        Error::WatchError(s) if s.code == 403 => Some(s.message.clone()),
        _ => None,
    }
}
