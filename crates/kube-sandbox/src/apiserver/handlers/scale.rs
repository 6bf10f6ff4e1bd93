//! The `scale` subresource of Deployments, ReplicaSets and StatefulSets:
//! GET reads it, PUT and PATCH write `spec.replicas` through it.

use std::sync::Arc;

use super::rest::write;
use crate::api_error::ApiError;
use crate::apiserver::patch::{PatchType, apply};
use crate::apiserver::query::ListOptions;
use crate::apiserver::reply::{Reply, ok};
use crate::apiserver::request::Request;
use crate::apiserver::scale;
use crate::shared::Shared;

pub(in crate::apiserver) fn get(
    shared: &Arc<Shared>,
    req: &Request<'_>,
) -> Result<Reply, ApiError> {
    let obj = req.existing(&shared.store())?;
    Ok(ok(scale::of(&obj)))
}

pub(in crate::apiserver) fn write_scale(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    opts: &ListOptions,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let mut store = shared.store();
    let old = req.existing(&store)?;
    let body = req.json_body()?;
    let wanted = if req.method == http::Method::PUT {
        body
    } else {
        let kind = PatchType::from_content_type(req.content_type)
            .ok_or_else(|| ApiError::new(415, "UnsupportedMediaType", "unsupported patch type"))?;
        apply(kind, &scale::of(&old), &body).map_err(|e| ApiError::new(422, "Invalid", e))?
    };
    let mut new = scale::apply(t.resource, &old, &wanted)?;
    req.track(Some(&old), &mut new, None);
    let written = write(&mut store, t, new, opts.dry_run, true)?;
    let Reply::Json { body, .. } = written else {
        return Ok(written);
    };
    Ok(ok(scale::of(&body)))
}
