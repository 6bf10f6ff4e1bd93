//! Deleting objects: a pod's graceful deletion (registry/rest/delete.go and
//! the pod strategy's CheckGracefulDelete), finalizers, preconditions.

use crate::objects::path::At;
use std::sync::Arc;

use jiff::SignedDuration;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::clock::format_time;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

#[derive(Debug, Clone, Default)]
pub(crate) struct DeleteOptions {
    pub(crate) grace_period_seconds: Option<i64>,
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
    pub(crate) dry_run: bool,
}

impl DeleteOptions {
    /// From a `DeleteOptions` body (also the `deleteOptions` of an Eviction).
    pub(crate) fn from_json(v: &Value) -> Self {
        DeleteOptions {
            grace_period_seconds: v["gracePeriodSeconds"].as_i64(),
            uid: v
                .at("/preconditions/uid")
                .and_then(Value::as_str)
                .map(str::to_string),
            resource_version: v
                .at("/preconditions/resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string),
            dry_run: v["dryRun"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == "All")),
        }
    }
}

/// What a deletion did, for the HTTP answer.
pub(crate) enum Deleted {
    /// Still there, terminating or held by finalizers.
    Terminating(Arc<Value>),
    Gone(Arc<Value>),
}

pub(crate) fn check_preconditions(
    res: Resource,
    obj: &Value,
    opts: &DeleteOptions,
) -> Result<(), ApiError> {
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    if let Some(uid) = &opts.uid {
        let actual = obj["metadata"]["uid"].as_str().unwrap_or_default();
        if uid != actual {
            return Err(ApiError::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}",
                    res.info().plural
                ),
            ));
        }
    }
    if let Some(rv) = &opts.resource_version {
        let actual = obj["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        if rv != actual {
            return Err(ApiError::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}",
                    res.info().plural
                ),
            ));
        }
    }
    Ok(())
}

/// Held by finalizers: its own, or for a namespace also those of its spec
/// (`kubernetes`, which the namespace controller removes once it is empty).
fn has_finalizers(obj: &Value) -> bool {
    ["/metadata/finalizers", "/spec/finalizers"]
        .iter()
        .any(|p| {
            obj.at(p)
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty())
        })
}

/// The grace period the apiserver settles on for a pod deletion.
pub(crate) fn pod_grace(pod: &Value, requested: Option<i64>) -> i64 {
    if pods::node_name(pod).is_none() || pods::is_terminal(pod) {
        return 0;
    }
    requested
        .or_else(|| {
            pod.at("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
        })
        .unwrap_or(30)
        .max(0)
}

pub(crate) fn delete(
    store: &mut Store,
    res: Resource,
    key: &Key,
    opts: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    let Some(obj) = store.get(res, key) else {
        return Err(ApiError::not_found(res, &key.1));
    };
    check_preconditions(res, &obj, opts)?;
    let grace = if res == Resource::Pods {
        pod_grace(&obj, opts.grace_period_seconds)
    } else {
        0
    };
    let now = crate::clock::now();
    if pods::is_terminating(&obj) {
        // A repeated delete may only shorten the grace period.
        let current = obj["metadata"]["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0);
        if grace >= current || opts.dry_run {
            return Ok(Deleted::Terminating(obj));
        }
    }
    if opts.dry_run {
        return Ok(if grace > 0 || has_finalizers(&obj) {
            Deleted::Terminating(obj)
        } else {
            Deleted::Gone(obj)
        });
    }
    if grace == 0 && !has_finalizers(&obj) {
        let gone = store.remove(res, key).expect("object exists");
        return Ok(Deleted::Gone(gone));
    }
    let deadline = now + SignedDuration::from_secs(grace);
    let updated = store.modify(res, key, |o| {
        o["metadata"]["deletionTimestamp"] = json!(format_time(deadline));
        o["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
        if res == Resource::Namespaces {
            o["status"]["phase"] = json!("Terminating");
        }
    })?;
    Ok(Deleted::Terminating(updated))
}

/// After an update: an object being deleted whose last finalizer was just
/// removed, and whose grace period is over, goes away.
pub(crate) fn finish_if_released(store: &mut Store, res: Resource, key: &Key) {
    let Some(obj) = store.get(res, key) else {
        return;
    };
    let grace_over = obj["metadata"]["deletionGracePeriodSeconds"]
        .as_i64()
        .unwrap_or(0)
        == 0;
    if pods::is_terminating(&obj) && !has_finalizers(&obj) && grace_over {
        store.remove(res, key);
    }
}
