//! The route match: a request's verb, name and subresource to its handler
//! (k8s.io/apiserver's `endpoints/installer.go` registers the same table).
//! A write's answer is shaped as its reader asked, as a read's is: the
//! create, update and patch handlers (k8s.io/apiserver
//! `endpoints/handlers/{create,update,patch}.go`) all end in
//! `transformResponseObject` (`response.go`), so `Accept:
//! ...;as=PartialObjectMetadata` gets the written object's metadata alone,
//! and a Status (an eviction's) is sent as it is.

use std::sync::Arc;

use serde_json::json;

use super::handlers::watch::WatchRequest;
use super::handlers::{create, delete, get, list, log, patch, scale, update};
use super::query::ListOptions;
use super::reply::Reply;
use super::request::Request;
use crate::api_error::ApiError;
use crate::resources::Resource;
use crate::shared::Shared;

/// Answers a resource request; an error is its Status.
pub(crate) fn handle(shared: &Arc<Shared>, req: &Request<'_>) -> Reply {
    let reply = route(shared, req).unwrap_or_else(Reply::from);
    let write = matches!(req.method.as_str(), "POST" | "PUT" | "PATCH");
    match reply {
        Reply::Json { status, body }
            if write
                && (200..300).contains(&status)
                && body["kind"] != "Status"
                && super::meta::wanted(req.accept) =>
        {
            Reply::Json {
                status,
                body: super::meta::partial(&body),
            }
        }
        other => other,
    }
}

fn route(shared: &Arc<Shared>, req: &Request<'_>) -> Result<Reply, ApiError> {
    let t = &req.target;
    let opts = ListOptions::from_query(t.resource, req.query)?;
    let scales = t.resource.scalable();
    let pods = t.resource == Resource::Pods;
    match (
        req.method.as_str(),
        t.name.is_some(),
        t.subresource.as_deref(),
    ) {
        ("GET", false, None) if opts.watch => Ok(Reply::Watch(WatchRequest::of(req, opts))),
        ("GET", false, None) => list::list(shared, req, &opts),
        ("GET", true, None | Some("status")) => get::get(shared, req, &opts),
        ("GET", true, Some("scale")) if scales => scale::get(shared, req),
        ("GET", true, Some("log")) if pods => log::log(shared, req),
        ("POST", false, None) => create::create(shared, req, &opts),
        ("POST", true, Some("eviction")) if pods => create::eviction(shared, req, &opts),
        ("PUT", true, None | Some("status")) => update::update(shared, req, &opts),
        ("PATCH", true, None | Some("status")) => patch::patch(shared, req, &opts),
        ("PUT" | "PATCH", true, Some("scale")) if scales => scale::write_scale(shared, req, &opts),
        ("DELETE", true, None) => delete::delete(shared, req),
        ("DELETE", false, None) => delete::collection(shared, req, &opts),
        (_, _, Some(sub)) => {
            Err(ApiError::path_not_found().with_details(json!({"subresource": sub})))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}
