//! The route match: a request's verb, name and subresource to its handler
//! (k8s.io/apiserver's `endpoints/installer.go` registers the same table).

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
    route(shared, req).unwrap_or_else(Reply::from)
}

fn route(shared: &Arc<Shared>, req: &Request<'_>) -> Result<Reply, ApiError> {
    let t = &req.target;
    let opts = ListOptions::from_query(t.resource, req.query)?;
    let scales = super::scale::serves(t.resource);
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
