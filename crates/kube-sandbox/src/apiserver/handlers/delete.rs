//! DELETE of one object (its options from the body, JSON, YAML or
//! protobuf, and the query) and of a collection.

use std::sync::Arc;

use serde_json::json;

use crate::api_error::{ApiError, success_status};
use crate::apiserver::deletion::{self, DeleteOptions, Deleted};
use crate::apiserver::protobuf;
use crate::apiserver::query::ListOptions;
use crate::apiserver::reply::{Reply, ok};
use crate::apiserver::request::{Request, parse_body};
use crate::resources::Resource;
use crate::shared::Shared;
use crate::store::Key;

pub(in crate::apiserver) fn delete(
    shared: &Arc<Shared>,
    req: &Request<'_>,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let delete_opts = options(req)?;
    let mut store = shared.store();
    match deletion::delete(&mut store, t.resource, &t.key(), &delete_opts)? {
        Deleted::Terminating(obj) => Ok(ok((*obj).clone())),
        Deleted::Gone(obj) if t.resource == Resource::Pods => Ok(ok((*obj).clone())),
        Deleted::Gone(obj) => Ok(ok(success_status(&json!({
            "name": t.key().1,
            "group": t.resource.info().group,
            "kind": t.resource.info().plural,
            "uid": obj["metadata"]["uid"],
        })))),
    }
}

/// The DeleteOptions of a request: its body, then the query's
/// `gracePeriodSeconds` and `dryRun`.
fn options(req: &Request<'_>) -> Result<DeleteOptions, ApiError> {
    let mut options = if req.body.is_empty() {
        DeleteOptions::default()
    } else if req.content_type.starts_with(protobuf::CONTENT_TYPE) {
        DeleteOptions::from_json(&parse_body(req.body, req.content_type)?)
    } else if req.content_type.is_empty()
        || req.content_type.starts_with("application/json")
        || req.content_type.starts_with("application/yaml")
    {
        DeleteOptions::from_json(&parse_body(req.body, "application/json")?)
    } else {
        return Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got {:?})",
                req.content_type
            ),
        ));
    };
    for (k, v) in req.query {
        match k.as_str() {
            "gracePeriodSeconds" => options.grace_period_seconds = v.parse().ok(),
            "dryRun" if v == "All" => options.dry_run = true,
            _ => {}
        }
    }
    Ok(options)
}

/// DELETE of a collection: every object the selectors select.
pub(in crate::apiserver) fn collection(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    opts: &ListOptions,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let mut store = shared.store();
    let keys: Vec<Key> =
        super::select::selected(&store, t.resource, t.namespace.as_deref(), opts, None)
            .map(|(k, _)| k)
            .collect();
    let delete_opts = DeleteOptions {
        dry_run: opts.dry_run,
        ..DeleteOptions::default()
    };
    for k in &keys {
        deletion::delete(&mut store, t.resource, k, &delete_opts)?;
    }
    Ok(ok(success_status(
        &json!({"kind": t.resource.info().plural}),
    )))
}
