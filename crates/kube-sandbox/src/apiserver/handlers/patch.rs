//! PATCH of an object or its status: JSON, merge, strategic merge and
//! server-side apply (which creates what does not exist yet).

use std::sync::Arc;

use super::rest::{split_status, write};
use crate::api_error::ApiError;
use crate::apiserver::patch::{PatchType, apply};
use crate::apiserver::query::ListOptions;
use crate::apiserver::reply::Reply;
use crate::apiserver::request::Request;
use crate::shared::Shared;

pub(in crate::apiserver) fn patch(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    opts: &ListOptions,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let kind = PatchType::from_content_type(req.content_type).ok_or_else(|| {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {:?})", req.content_type),
        )
    })?;
    let mut patch_doc = req.json_body()?;
    if kind == PatchType::Apply {
        // The applied configuration is an object of the kind.
        req.check_fields(&mut patch_doc, opts.field_validation, true)?;
    }
    let mut store = shared.store();
    let Some(old) = store.get(t.resource, &t.key()) else {
        if kind == PatchType::Apply {
            drop(store);
            return super::create::from_apply(shared, req, patch_doc, opts.dry_run);
        }
        return Err(ApiError::not_found(t.resource, &t.key().1));
    };
    let mut patched =
        apply(kind, &old, &patch_doc).map_err(|e| ApiError::new(422, "Invalid", e))?;
    req.check_fields(&mut patched, opts.field_validation, true)?;
    let mut new = split_status(&old, patched, t.subresource.is_some());
    let applied = (kind == PatchType::Apply).then_some(&patch_doc);
    req.track(Some(&old), &mut new, applied);
    // A patch carrying a resourceVersion is a precondition, like an update.
    write(&mut store, t, new, opts.dry_run, true)
}
