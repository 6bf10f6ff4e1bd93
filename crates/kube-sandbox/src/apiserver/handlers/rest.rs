//! What the write handlers share, like k8s.io/apiserver's
//! `endpoints/handlers/rest.go` and the registry's strategies: the status
//! split, immutable metadata, kind, namespace and name checks, and the write
//! itself.

use crate::objects::path::At;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::apiserver::deletion;
use crate::apiserver::reply::{Reply, ok};
use crate::apiserver::request::Target;
use crate::resources::Resource;
use crate::store::Store;

/// Writes of the main resource keep the stored status; writes of the status
/// subresource change only status (the strategies' PrepareForUpdate).
pub(super) fn split_status(old: &Value, mut new: Value, status_only: bool) -> Value {
    if status_only {
        let mut out = old.clone();
        out["status"] = new.get("status").cloned().unwrap_or(Value::Null);
        if let Some(rv) = new.at("/metadata/resourceVersion") {
            out["metadata"]["resourceVersion"] = rv.clone();
        }
        out
    } else {
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(m) = new.as_object_mut() {
                    m.remove("status");
                }
            }
        }
        new
    }
}

/// Metadata a client cannot change with an update or a patch: identity,
/// deletion state (only DELETE sets it), and a pod's binding.
fn keep_immutable(res: Resource, old: &Value, new: &mut Value) {
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        match old["metadata"].get(field) {
            Some(v) => new["metadata"][field] = v.clone(),
            None => {
                if let Some(m) = new["metadata"].as_object_mut() {
                    m.remove(field);
                }
            }
        }
    }
    if res == Resource::Pods
        && let Some(node) = crate::objects::pods::node_name(old)
    {
        new["spec"]["nodeName"] = json!(node);
    }
}

pub(super) fn write(
    store: &mut Store,
    t: &Target,
    mut new: Value,
    dry_run: bool,
    check_rv: bool,
) -> Result<Reply, ApiError> {
    crate::apiserver::defaults::secret(t.resource, &mut new);
    if let Some(old) = store.get(t.resource, &t.key()) {
        keep_immutable(t.resource, &old, &mut new);
        crate::apiserver::validation::check(t.resource, Some(&old), &new)?;
    }
    if dry_run {
        return Ok(ok(new));
    }
    let written = store.update(t.resource, new, check_rv)?;
    deletion::finish_if_released(store, t.resource, &t.key());
    Ok(ok((*written).clone()))
}

/// NamespaceLifecycle admission: no objects in a namespace that does not exist.
pub(super) fn check_namespace(store: &Store, t: &Target) -> Result<(), ApiError> {
    if let Some(ns) = &t.namespace
        && store
            .get(Resource::Namespaces, &(String::new(), ns.clone()))
            .is_none()
    {
        return Err(ApiError::not_found(Resource::Namespaces, ns));
    }
    Ok(())
}

pub(super) fn validate_name(res: Resource, body: &Value) -> Result<(), ApiError> {
    let name = body
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        return Ok(()); // generateName, or the store's own error.
    }
    let valid = kube_conventions::names::is_dns1123_subdomain(name);
    if valid {
        Ok(())
    } else {
        Err(ApiError::invalid(
            res,
            name,
            format!(
                "metadata.name: Invalid value: {name:?}: {}",
                kube_conventions::names::DNS1123_SUBDOMAIN_RULE
            ),
        ))
    }
}
