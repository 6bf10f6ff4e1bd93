//! What is answered before the resource routes: discovery, the OpenAPI
//! documents, the health endpoints and access reviews (`kubectl auth
//! can-i`). Discovery and /version are never faulted, so the kubectl
//! dispatcher and discovery caches behave; faults are for the requests a
//! drain makes.

use bytes::Bytes;
use http::request::Parts;
use http::{Method, Response, header};
use serde_json::Value;

use super::audit::header_str;
use super::response::{Body, full, json_response};
use super::{access_review, discovery, openapi, protobuf};
use crate::auth::{Attributes, Identity};
use crate::shared::Shared;

/// The answer, its status and size for the log; `None` for a resource
/// request.
pub(super) fn serve(
    shared: &Shared,
    parts: &Parts,
    body: &Bytes,
    identity: &Identity,
) -> Option<(Response<Body>, u16, u64)> {
    let path = parts.uri.path();
    if parts.method == Method::GET {
        return get(shared, parts, path);
    }
    if parts.method == Method::POST && access_review::is_review(path) {
        let review = if header_str(parts, header::CONTENT_TYPE).starts_with(protobuf::CONTENT_TYPE)
        {
            protobuf::decode(body).ok()
        } else {
            serde_json::from_slice::<Value>(body).ok()
        }?;
        let answer = access_review::answer(shared, identity, path, &review)?;
        let bytes = serde_json::to_vec(&answer).unwrap_or_default();
        let size = bytes.len() as u64;
        return Some((json_response(201, bytes, None, &[]), 201, size));
    }
    None
}

/// What a request not under a resource asks, for authorization: the
/// reviews are resources (`create selfsubjectaccessreviews`), the rest are
/// URLs with the method as verb (requestinfo.go); `None` for a resource
/// request.
pub(super) fn attributes(parts: &Parts) -> Option<Attributes> {
    let path = parts.uri.path();
    if let Some((group, resource)) = access_review::group_resource(path) {
        return Some(Attributes::Resource {
            verb: "create".into(),
            group: group.into(),
            resource: resource.into(),
            subresource: String::new(),
            name: String::new(),
            namespace: String::new(),
        });
    }
    if super::request::parse_target(path).is_some() {
        return None;
    }
    Some(Attributes::NonResource {
        verb: parts.method.as_str().to_lowercase(),
        path: path.to_string(),
    })
}

/// The health endpoints (`kubectl get --raw /readyz`).
pub(super) fn is_health(path: &str) -> bool {
    matches!(path, "/healthz" | "/livez" | "/readyz")
}

fn get(shared: &Shared, parts: &Parts, path: &str) -> Option<(Response<Body>, u16, u64)> {
    if let Some(doc) = discovery::discovery(shared, path) {
        let bytes = serde_json::to_vec(&doc).unwrap_or_default();
        let size = bytes.len() as u64;
        return Some((json_response(200, bytes, None, &[]), 200, size));
    }
    let accept = header_str(parts, header::ACCEPT);
    if let Some(doc) = openapi::document(path, accept, shared.config.minor()) {
        let size = doc.bytes.len() as u64;
        let response = Response::builder()
            .header(header::CONTENT_TYPE, doc.content_type)
            .body(full(doc.bytes))
            .expect("valid response");
        return Some((response, 200, size));
    }
    if is_health(path) {
        let response = Response::builder()
            .header(header::CONTENT_TYPE, "text/plain")
            .body(full("ok"))
            .expect("valid response");
        return Some((response, 200, 2));
    }
    None
}
