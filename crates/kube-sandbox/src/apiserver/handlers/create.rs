//! POST: a new object (its name checked, defaults and validation applied,
//! namespace and Pod Security admission), the object a server-side apply creates, and a pod's
//! eviction, which is a create of its `eviction` subresource.

use crate::objects::path::At;
use std::sync::Arc;

use serde_json::{Value, json};

use super::rest::{check_namespace, validate_name};
use crate::api_error::ApiError;
use crate::apiserver::defaults::prepare_new;
use crate::apiserver::query::ListOptions;
use crate::apiserver::reply::Reply;
use crate::apiserver::request::Request;
use crate::apiserver::{admission, eviction, pod_security, validation};
use crate::resources::Resource;
use crate::shared::Shared;
use crate::store::Store;

pub(in crate::apiserver) fn create(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    opts: &ListOptions,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let mut body = req.object_body(opts.field_validation)?;
    if let Some(ns) = &t.namespace {
        let given = body
            .at("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or(ns);
        if given != ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        body["metadata"]["namespace"] = json!(ns);
    }
    let mut store = shared.store();
    check_namespace(&store, t)?;
    if let Some(ns) = &t.namespace {
        let name = body["metadata"]["name"].as_str().unwrap_or_default();
        admission::namespace_lifecycle(&store, t.resource, ns, name)?;
    }
    validate_name(t.resource, &body)?;
    req.track(None, &mut body, None);
    store_new(&mut store, req, body, opts.dry_run)
}

/// A server-side apply of an object that does not exist yet creates it.
pub(super) fn from_apply(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    mut body: Value,
    dry_run: bool,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let applied = body.clone();
    req.track(None, &mut body, Some(&applied));
    body["metadata"]["name"] = json!(t.key().1);
    if let Some(ns) = &t.namespace {
        body["metadata"]["namespace"] = json!(ns);
    }
    let mut store = shared.store();
    check_namespace(&store, t)?;
    store_new(&mut store, req, body, dry_run)
}

/// Defaults, validates and stores a new object (201, or the object as it
/// would be under `dryRun`).
fn store_new(
    store: &mut Store,
    req: &Request<'_>,
    body: Value,
    dry_run: bool,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let body = prepare_new(t.resource, body);
    validation::check(t.resource, None, &body)?;
    if t.resource == Resource::Pods {
        pod_security::admit(store, &body)?;
    }
    if dry_run {
        return Ok(Reply::Json { status: 201, body });
    }
    let created = store.create(t.resource, body)?;
    Ok(Reply::Json {
        status: 201,
        body: (*created).clone(),
    })
}

/// POST pods/NAME/eviction.
pub(in crate::apiserver) fn eviction(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    opts: &ListOptions,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let body = req.json_body()?;
    let key = t.key();
    // The pod is parsed before the store's lock is taken for the eviction,
    // not under it: the tree held here is what the eviction then reads
    // (`Stored::value`), unless the pod is written in between. Parsing it
    // under the lock was the API's largest share of the lock during a
    // 5,000-node pool drain.
    let doc = shared.store().doc(Resource::Pods, &key).cloned();
    let _parsed = doc.map(|d| d.value());
    let mut store = shared.store();
    admission::namespace_lifecycle(&store, t.resource, &key.0, &key.1)?;
    let minor = shared.config.minor_number();
    let status = eviction::evict(&mut store, &key, &body, opts.dry_run, minor)?;
    Ok(Reply::Json {
        status: 201,
        body: status,
    })
}
