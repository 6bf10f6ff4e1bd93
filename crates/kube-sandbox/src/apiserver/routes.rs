//! Resource requests: URL to target, verb to handler, handler to store.

use std::sync::Arc;

use serde_json::{Value, json};

use super::defaults::prepare_new;
use super::field_validation;
use super::table;
use crate::api_error::{ApiError, success_status};
use crate::apiserver::deletion::{self, DeleteOptions, Deleted};
use crate::apiserver::eviction;
use crate::apiserver::patch::{self, PatchType};
use crate::apiserver::query::ListOptions;
use crate::resources::Resource;
use crate::shared::Shared;
use crate::store::{Key, Store};

/// What a URL under /api or /apis names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) resource: Resource,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

impl Target {
    fn key(&self) -> Key {
        (
            self.namespace.clone().unwrap_or_default(),
            self.name.clone().unwrap_or_default(),
        )
    }

    /// The RBAC verb of this request, for refusals.
    pub(crate) fn verb(&self, method: &http::Method, watch: bool) -> &'static str {
        match (method.as_str(), self.name.is_some()) {
            ("GET", _) if watch => "watch",
            ("GET", true) => "get",
            ("GET", false) => "list",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "delete",
            ("DELETE", false) => "deletecollection",
            _ => "unknown",
        }
    }

    pub(crate) fn rbac_resource(&self) -> String {
        match &self.subresource {
            Some(s) => format!("{}/{s}", self.resource.info().plural),
            None => self.resource.info().plural.to_string(),
        }
    }
}

/// Parses `/api/v1/...` and `/apis/GROUP/VERSION/...`.
pub(crate) fn parse_target(path: &str) -> Option<Target> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let lookup = |plural: &str| Resource::from_path(group, version, plural);
    let t = |resource, namespace: Option<&str>, name: Option<&&str>, sub: Option<&&str>| Target {
        resource,
        namespace: namespace.map(str::to_string),
        name: name.map(|s| (*s).to_string()),
        subresource: sub.map(|s| (*s).to_string()),
    };
    match rest {
        ["namespaces", ns, plural, tail @ ..]
            if lookup(plural).is_some_and(|r| r.info().namespaced) && tail.len() <= 2 =>
        {
            Some(t(lookup(plural)?, Some(ns), tail.first(), tail.get(1)))
        }
        [plural, tail @ ..] if tail.len() <= 2 => {
            let r = lookup(plural)?;
            Some(t(r, None, tail.first(), tail.get(1)))
        }
        _ => None,
    }
}

pub(crate) enum Reply {
    Json {
        status: u16,
        body: Value,
    },
    /// Pre-serialised JSON (large lists are serialised outside the lock).
    Raw {
        status: u16,
        body: Vec<u8>,
    },
    Watch(crate::apiserver::watch::WatchRequest),
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        Reply::Json {
            status: e.code,
            body: e.to_status(),
        }
    }
}

pub(super) fn ok(body: Value) -> Reply {
    Reply::Json { status: 200, body }
}

pub(crate) struct Request<'a> {
    pub(crate) method: &'a http::Method,
    pub(crate) target: Target,
    pub(crate) query: &'a [(String, String)],
    pub(crate) content_type: &'a str,
    pub(crate) accept: &'a str,
    pub(crate) user_agent: &'a str,
    pub(crate) body: &'a [u8],
    /// What the answer's `Warning` headers will say.
    pub(crate) warnings: std::cell::RefCell<Vec<String>>,
}

impl Request<'_> {
    /// Drops the unknown fields of a written object, keeping the warnings
    /// they make for the answer's headers; under `Strict`, refuses it.
    fn check_fields(
        &self,
        obj: &mut Value,
        mode: field_validation::FieldValidation,
        patch: bool,
    ) -> Result<(), ApiError> {
        let warnings = field_validation::check(self.target.resource, obj, mode, patch)?;
        self.warnings.borrow_mut().extend(warnings);
        Ok(())
    }

    /// Records in `new`'s managedFields what this write changed.
    fn track(&self, old: Option<&Value>, new: &mut Value, applied: Option<&Value>) {
        let now = crate::clock::now_rfc3339();
        let writer = super::managed_fields::Writer {
            manager: super::managed_fields::manager(self.query, self.user_agent),
            applied,
            subresource: self.target.subresource.as_deref(),
            api_version: &self.target.resource.api_version(),
            now: &now,
        };
        super::managed_fields::track(old, new, &writer);
    }
}

pub(crate) fn handle(shared: &Arc<Shared>, req: &Request<'_>) -> Reply {
    match handle_inner(shared, req) {
        Ok(r) => r,
        Err(e) => e.into(),
    }
}

fn parse_body(body: &[u8], content_type: &str) -> Result<Value, ApiError> {
    if content_type.starts_with("application/apply-patch+yaml") {
        let text =
            std::str::from_utf8(body).map_err(|_| ApiError::bad_request("body is not UTF-8"))?;
        return serde_saphyr::from_str(text)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding body: {e}")))
}

#[allow(clippy::too_many_lines)] // left over: to split with the handler per verb (issue #26, the sandbox's layout)
fn handle_inner(shared: &Arc<Shared>, req: &Request<'_>) -> Result<Reply, ApiError> {
    let t = &req.target;
    let opts = ListOptions::from_query(t.resource, req.query)?;
    let dry_run = opts.dry_run;
    match (
        req.method.as_str(),
        t.name.is_some(),
        t.subresource.as_deref(),
    ) {
        ("GET", false, None) if opts.watch => {
            Ok(Reply::Watch(crate::apiserver::watch::WatchRequest {
                resource: t.resource,
                namespace: t.namespace.clone(),
                table: super::list::wants_table(req.accept),
                options: opts,
                metadata_only: super::meta::wanted(req.accept),
                columns_sent: std::sync::atomic::AtomicBool::new(false),
            }))
        }
        ("GET", false, None) => super::list::list(shared, t, &opts, req.accept),
        ("GET", true, None | Some("status")) => {
            let obj = {
                let store = shared.store();
                let obj = store
                    .get(t.resource, &t.key())
                    .ok_or_else(|| ApiError::not_found(t.resource, &t.key().1))?;
                crate::objects::leases::as_read(&store, t.resource, obj)
            };
            if super::list::wants_table(req.accept) {
                let meta = json!({"resourceVersion": obj["metadata"]["resourceVersion"]});
                return Ok(ok(table::table(
                    t.resource,
                    &[obj],
                    &meta,
                    opts.include_object,
                )));
            }
            if super::meta::wanted(req.accept) {
                return Ok(ok(super::meta::partial(&obj)));
            }
            Ok(ok((*obj).clone()))
        }
        ("POST", false, None) => {
            let mut body = parse_body(req.body, req.content_type)?;
            check_kind(t.resource, &body)?;
            req.check_fields(&mut body, opts.field_validation, false)?;
            if let Some(ns) = &t.namespace {
                let given = body
                    .pointer("/metadata/namespace")
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
                super::admission::namespace_lifecycle(&store, t.resource, ns, name)?;
            }
            validate_name(t.resource, &body)?;
            req.track(None, &mut body, None);
            let body = prepare_new(t.resource, body);
            super::validation::check(t.resource, None, &body)?;
            if dry_run {
                return Ok(Reply::Json { status: 201, body });
            }
            let created = store.create(t.resource, body)?;
            Ok(Reply::Json {
                status: 201,
                body: (*created).clone(),
            })
        }
        ("POST", true, Some("eviction")) if t.resource == Resource::Pods => {
            let body = parse_body(req.body, req.content_type)?;
            let mut store = shared.store();
            let (ns, name) = t.key();
            super::admission::namespace_lifecycle(&store, t.resource, &ns, &name)?;
            let status = eviction::evict(&mut store, &t.key(), &body, dry_run)?;
            Ok(Reply::Json {
                status: 201,
                body: status,
            })
        }
        ("PUT", true, sub @ (None | Some("status"))) => {
            let mut body = parse_body(req.body, req.content_type)?;
            check_kind(t.resource, &body)?;
            req.check_fields(&mut body, opts.field_validation, false)?;
            body["metadata"]["name"] = json!(t.key().1);
            if let Some(ns) = &t.namespace {
                body["metadata"]["namespace"] = json!(ns);
            }
            let mut store = shared.store();
            let old = store
                .get(t.resource, &t.key())
                .ok_or_else(|| ApiError::not_found(t.resource, &t.key().1))?;
            let mut new = split_status(&old, body, sub.is_some());
            req.track(Some(&old), &mut new, None);
            write(&mut store, t, new, dry_run, true)
        }
        ("PATCH", true, sub @ (None | Some("status"))) => {
            let kind = PatchType::from_content_type(req.content_type).ok_or_else(|| {
                ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {:?})", req.content_type),
                )
            })?;
            let mut patch_doc = parse_body(req.body, req.content_type)?;
            if kind == PatchType::Apply {
                // The applied configuration is an object of the kind.
                req.check_fields(&mut patch_doc, opts.field_validation, true)?;
            }
            let mut store = shared.store();
            let Some(old) = store.get(t.resource, &t.key()) else {
                if kind == PatchType::Apply {
                    drop(store);
                    return create_from_apply(shared, req, patch_doc, dry_run);
                }
                return Err(ApiError::not_found(t.resource, &t.key().1));
            };
            let mut patched = patch::apply(kind, &old, &patch_doc)
                .map_err(|e| ApiError::new(422, "Invalid", e))?;
            req.check_fields(&mut patched, opts.field_validation, true)?;
            let mut new = split_status(&old, patched, sub.is_some());
            let applied = (kind == PatchType::Apply).then_some(&patch_doc);
            req.track(Some(&old), &mut new, applied);
            // A patch carrying a resourceVersion is a precondition, like an update.
            write(&mut store, t, new, dry_run, true)
        }
        ("GET", true, Some("scale")) if super::scale::serves(t.resource) => {
            let obj = shared
                .store()
                .get(t.resource, &t.key())
                .ok_or_else(|| ApiError::not_found(t.resource, &t.key().1))?;
            Ok(ok(super::scale::of(&obj)))
        }
        (method @ ("PUT" | "PATCH"), true, Some("scale")) if super::scale::serves(t.resource) => {
            let mut store = shared.store();
            let old = store
                .get(t.resource, &t.key())
                .ok_or_else(|| ApiError::not_found(t.resource, &t.key().1))?;
            let body = parse_body(req.body, req.content_type)?;
            let wanted = if method == "PUT" {
                body
            } else {
                let kind = PatchType::from_content_type(req.content_type).ok_or_else(|| {
                    ApiError::new(415, "UnsupportedMediaType", "unsupported patch type")
                })?;
                patch::apply(kind, &super::scale::of(&old), &body)
                    .map_err(|e| ApiError::new(422, "Invalid", e))?
            };
            let mut new = super::scale::apply(t.resource, &old, &wanted)?;
            req.track(Some(&old), &mut new, None);
            let written = write(&mut store, t, new, dry_run, true)?;
            let Reply::Json { body, .. } = written else {
                return Ok(written);
            };
            Ok(ok(super::scale::of(&body)))
        }
        ("DELETE", true, None) => {
            let mut delete_opts = if req.body.is_empty() {
                DeleteOptions::default()
            } else if req.content_type.starts_with(super::protobuf::CONTENT_TYPE) {
                let options =
                    super::protobuf::delete_options(req.body).map_err(ApiError::bad_request)?;
                DeleteOptions::from_json(&options)
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
                    "gracePeriodSeconds" => delete_opts.grace_period_seconds = v.parse().ok(),
                    "dryRun" if v == "All" => delete_opts.dry_run = true,
                    _ => {}
                }
            }
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
        ("DELETE", false, None) => {
            let mut store = shared.store();
            let keys: Vec<Key> =
                super::list::selected(&store, t.resource, t.namespace.as_deref(), &opts, None)
                    .map(|(k, _)| k)
                    .collect();
            let delete_opts = DeleteOptions {
                dry_run,
                ..DeleteOptions::default()
            };
            for k in &keys {
                deletion::delete(&mut store, t.resource, k, &delete_opts)?;
            }
            Ok(ok(success_status(
                &json!({"kind": t.resource.info().plural}),
            )))
        }
        (_, _, Some(sub)) => {
            Err(ApiError::path_not_found().with_details(json!({"subresource": sub})))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

fn create_from_apply(
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
    let body = prepare_new(t.resource, body);
    super::validation::check(t.resource, None, &body)?;
    if dry_run {
        return Ok(Reply::Json { status: 201, body });
    }
    let created = store.create(t.resource, body)?;
    Ok(Reply::Json {
        status: 201,
        body: (*created).clone(),
    })
}

/// Writes of the main resource keep the stored status; writes of the status
/// subresource change only status (the strategies' PrepareForUpdate).
fn split_status(old: &Value, mut new: Value, status_only: bool) -> Value {
    if status_only {
        let mut out = old.clone();
        out["status"] = new.get("status").cloned().unwrap_or(Value::Null);
        if let Some(rv) = new.pointer("/metadata/resourceVersion") {
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

fn write(
    store: &mut Store,
    t: &Target,
    mut new: Value,
    dry_run: bool,
    check_rv: bool,
) -> Result<Reply, ApiError> {
    if let Some(old) = store.get(t.resource, &t.key()) {
        keep_immutable(t.resource, &old, &mut new);
        super::validation::check(t.resource, Some(&old), &new)?;
    }
    if dry_run {
        return Ok(ok(new));
    }
    let written = store.update(t.resource, new, check_rv)?;
    deletion::finish_if_released(store, t.resource, &t.key());
    Ok(ok((*written).clone()))
}

fn check_kind(res: Resource, body: &Value) -> Result<(), ApiError> {
    if let Some(kind) = body.get("kind").and_then(Value::as_str)
        && kind != res.info().kind
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({}) does not match the expected API version ({})",
            body["apiVersion"].as_str().unwrap_or_default(),
            res.api_version()
        )));
    }
    Ok(())
}

/// NamespaceLifecycle admission: no objects in a namespace that does not exist.
fn check_namespace(store: &Store, t: &Target) -> Result<(), ApiError> {
    if let Some(ns) = &t.namespace
        && store
            .get(Resource::Namespaces, &(String::new(), ns.clone()))
            .is_none()
    {
        return Err(ApiError::not_found(Resource::Namespaces, ns));
    }
    Ok(())
}

fn validate_name(res: Resource, body: &Value) -> Result<(), ApiError> {
    let name = body
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        return Ok(()); // generateName, or the store's own error.
    }
    let valid = name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if valid {
        Ok(())
    } else {
        Err(ApiError::invalid(
            res,
            name,
            format!(
                "metadata.name: Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_from_paths() {
        let t = parse_target("/api/v1/namespaces/default/pods/web-1/eviction").unwrap();
        assert_eq!(t.resource, Resource::Pods);
        assert_eq!(t.namespace.as_deref(), Some("default"));
        assert_eq!(t.name.as_deref(), Some("web-1"));
        assert_eq!(t.subresource.as_deref(), Some("eviction"));
        let ns = parse_target("/api/v1/namespaces/kube-system").unwrap();
        assert_eq!(ns.resource, Resource::Namespaces);
        assert_eq!(ns.name.as_deref(), Some("kube-system"));
        let all = parse_target("/apis/policy/v1/poddisruptionbudgets").unwrap();
        assert_eq!(all.resource, Resource::PodDisruptionBudgets);
        assert!(all.namespace.is_none() && all.name.is_none());
        assert!(parse_target("/apis/policy/v1beta1/poddisruptionbudgets").is_none());
        assert!(parse_target("/api/v1/widgets").is_none());
    }
}
