//! PUT of an object or its status: the whole object replaced, its
//! resourceVersion a precondition.

use std::sync::Arc;

use serde_json::json;

use super::rest::{split_status, write};
use crate::api_error::ApiError;
use crate::apiserver::query::ListOptions;
use crate::apiserver::reply::Reply;
use crate::apiserver::request::Request;
use crate::shared::Shared;

pub(in crate::apiserver) fn update(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    opts: &ListOptions,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let mut body = req.object_body(opts.field_validation)?;
    body["metadata"]["name"] = json!(t.key().1);
    if let Some(ns) = &t.namespace {
        body["metadata"]["namespace"] = json!(ns);
    }
    let mut store = shared.store();
    let old = req.existing(&store)?;
    let mut new = split_status(&old, body, t.subresource.is_some());
    req.track(Some(&old), &mut new, None);
    write(&mut store, t, new, opts.dry_run, true)
}
