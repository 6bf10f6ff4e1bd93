//! GET of one object or its status (heartbeat Leases as renewed), as JSON,
//! a Table or its metadata.

use std::sync::Arc;

use serde_json::json;

use super::select::wants_table;
use crate::api_error::ApiError;
use crate::apiserver::query::ListOptions;
use crate::apiserver::reply::{Reply, ok};
use crate::apiserver::request::Request;
use crate::apiserver::{meta, table};
use crate::shared::Shared;

pub(in crate::apiserver) fn get(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    opts: &ListOptions,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let obj = {
        let store = shared.store();
        let obj = req.existing(&store)?;
        crate::objects::leases::as_read(t.resource, obj, |n| store.node(n))
    };
    if wants_table(req.accept) {
        let meta = json!({"resourceVersion": obj["metadata"]["resourceVersion"]});
        return Ok(ok(table::table(
            t.resource,
            &[obj],
            &meta,
            opts.include_object,
        )));
    }
    if meta::wanted(req.accept) {
        return Ok(ok(meta::partial(&obj)));
    }
    Ok(ok((*obj).clone()))
}
