//! What stands in front of the handlers, like k8s.io/apiserver's
//! `endpoints/filters`: a failed server, a required token, injected faults
//! and refused permissions (RBAC's message, so clients can name what to
//! grant).

use std::time::Duration;

use crate::api_error::ApiError;
use crate::apiserver::request::Target;
use crate::shared::Shared;

/// Refuses every request while the server is failed, and a request without
/// the token the server requires.
pub(super) fn refuse_any(shared: &Shared, path: &str, authorization: &str) -> Option<ApiError> {
    if let Some(why) = shared.failure() {
        return Some(ApiError::new(500, "InternalError", why));
    }
    if let Some(token) = &shared.config.require_token
        // Answered without a token: the version and the health endpoints.
        && path != "/version"
        && !super::non_resource::is_health(path)
        && authorization != format!("Bearer {token}")
    {
        return Some(ApiError::new(401, "Unauthorized", "Unauthorized"));
    }
    None
}

/// Refuses a resource request with an injected fault (after the injected
/// latency), or because its verb is denied on the resource.
pub(super) async fn refuse_resource(
    shared: &Shared,
    target: &Target,
    verb: &str,
) -> Option<ApiError> {
    if let Some(e) = injected_fault(shared, verb, &target.rbac_resource()).await {
        return Some(e);
    }
    let ns = target.namespace.clone().unwrap_or_default();
    shared
        .denies(verb, &target.rbac_resource(), &ns)
        .then(|| forbidden(target, verb))
}

async fn injected_fault(shared: &Shared, verb: &str, resource: &str) -> Option<ApiError> {
    let f = shared.faults();
    if !f.any() || !f.applies_to(verb, resource) {
        return None;
    }
    if f.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(f.latency_ms)).await;
    }
    let roll = shared.roll();
    let faulted = roll < f.error500 + f.error503 + f.throttle429;
    if faulted && !shared.take_fault(f.times) {
        return None;
    }
    if roll < f.error500 {
        return Some(ApiError::new(
            500,
            "InternalError",
            "Internal error occurred: injected by the sandbox",
        ));
    }
    if roll < f.error500 + f.error503 {
        let mut e = ApiError::new(
            503,
            "ServiceUnavailable",
            "the server is currently unable to handle the request (injected by the sandbox)",
        );
        e.retry_after = Some(1);
        return Some(e);
    }
    if roll < f.error500 + f.error503 + f.throttle429 {
        let mut e = ApiError::new(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
        );
        e.retry_after = Some(1);
        return Some(e);
    }
    None
}

/// The message RBAC's authorizer gives, so clients can name what to grant.
fn forbidden(t: &Target, verb: &str) -> ApiError {
    let info = t.resource.info();
    let object = match &t.name {
        Some(n) => format!("{} \"{n}\"", info.plural),
        None => info.plural.to_string(),
    };
    let scope = match &t.namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    ApiError::new(
        403,
        "Forbidden",
        format!(
            "{object} is forbidden: User \"system:anonymous\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
            t.rbac_resource(),
            info.group
        ),
    )
    .with_details(serde_json::json!({"name": t.name.clone().unwrap_or_default(), "group": info.group, "kind": info.plural}))
}
