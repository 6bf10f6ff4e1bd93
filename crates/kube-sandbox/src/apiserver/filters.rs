//! What stands in front of the handlers, like k8s.io/apiserver's
//! `endpoints/filters`: a failed server, injected faults
//! and refused permissions (crate::auth decides, with RBAC's message, so
//! clients can name what to grant).

use std::time::Duration;

use crate::api_error::ApiError;
use crate::apiserver::request::Target;
use crate::auth::{self, Attributes, Identity};
use crate::shared::Shared;

/// Refuses every request while the server is failed.
pub(super) fn refuse_any(shared: &Shared) -> Option<ApiError> {
    shared
        .failure()
        .map(|why| ApiError::new(500, "InternalError", why))
}

/// Refuses a resource request with an injected fault (after the injected
/// latency), or because its identity may not make it.
pub(super) async fn refuse_resource(
    shared: &Shared,
    identity: &Identity,
    target: &Target,
    verb: &str,
    query: &[(String, String)],
) -> Option<ApiError> {
    if let Some(e) = injected_fault(shared, verb, &target.rbac_resource()).await {
        return Some(e);
    }
    refuse(shared, identity, &attributes(target, verb, query))
}

/// Refuses what the identity may not do, with RBAC's message.
pub(super) fn refuse(shared: &Shared, identity: &Identity, attrs: &Attributes) -> Option<ApiError> {
    let decision = auth::authorize(shared, identity, attrs);
    (!decision.allowed).then(|| auth::forbidden(identity, attrs, &decision.reason))
}

/// What a resource request asks, as requestinfo.go reads it: a list or
/// watch selecting `metadata.name` names that object.
fn attributes(t: &Target, verb: &str, query: &[(String, String)]) -> Attributes {
    let info = t.resource.info();
    let selected = || {
        query
            .iter()
            .find(|(k, _)| k == "fieldSelector")
            .and_then(|(_, v)| {
                v.split(',')
                    .find_map(|term| term.strip_prefix("metadata.name="))
                    .map(|n| n.trim_start_matches('=').to_string())
            })
    };
    let name = match &t.name {
        Some(n) => n.clone(),
        None if matches!(verb, "list" | "watch") => selected().unwrap_or_default(),
        None => String::new(),
    };
    Attributes::Resource {
        verb: verb.to_string(),
        group: info.group.to_string(),
        resource: info.plural.to_string(),
        subresource: t.subresource.clone().unwrap_or_default(),
        name,
        namespace: t.namespace.clone().unwrap_or_default(),
    }
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
