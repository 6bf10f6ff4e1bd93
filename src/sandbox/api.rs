//! Resource requests: URL to target, verb to handler, handler to store.

use std::sync::Arc;

use serde_json::{Value, json};

use super::deletion::{self, DeleteOptions, Deleted};
use super::eviction;
use super::patch::{self, PatchType};
use super::query::ListOptions;
use super::resources::{self, Resource};
use super::state::Shared;
use super::status::{ApiError, success_status};
use super::store::{Key, Store};
use super::table;

/// What a URL under /api or /apis names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub resource: Resource,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

impl Target {
    fn key(&self) -> Key {
        (
            self.namespace.clone().unwrap_or_default(),
            self.name.clone().unwrap_or_default(),
        )
    }

    /// The RBAC verb of this request, for refusals.
    pub fn verb(&self, method: &http::Method, watch: bool) -> &'static str {
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

    pub fn rbac_resource(&self) -> String {
        match &self.subresource {
            Some(s) => format!("{}/{s}", self.resource.info().plural),
            None => self.resource.info().plural.to_string(),
        }
    }
}

/// Parses `/api/v1/...` and `/apis/GROUP/VERSION/...`.
pub fn parse_target(path: &str) -> Option<Target> {
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

pub enum Reply {
    Json {
        status: u16,
        body: Value,
    },
    /// Pre-serialised JSON (large lists are serialised outside the lock).
    Raw {
        status: u16,
        body: Vec<u8>,
    },
    Watch(super::watch::WatchRequest),
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        Reply::Json {
            status: e.code,
            body: e.to_status(),
        }
    }
}

fn ok(body: Value) -> Reply {
    Reply::Json { status: 200, body }
}

pub struct Request<'a> {
    pub method: &'a http::Method,
    pub target: Target,
    pub query: &'a [(String, String)],
    pub content_type: &'a str,
    pub accept: &'a str,
    pub body: &'a [u8],
}

pub fn handle(shared: &Arc<Shared>, req: &Request<'_>) -> Reply {
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

fn handle_inner(shared: &Arc<Shared>, req: &Request<'_>) -> Result<Reply, ApiError> {
    let t = &req.target;
    let opts = ListOptions::from_query(t.resource, req.query)?;
    let dry_run = opts.dry_run;
    match (
        req.method.as_str(),
        t.name.is_some(),
        t.subresource.as_deref(),
    ) {
        ("GET", false, None) if opts.watch => Ok(Reply::Watch(super::watch::WatchRequest {
            resource: t.resource,
            namespace: t.namespace.clone(),
            options: opts,
        })),
        ("GET", false, None) => list(shared, t, &opts, req.accept),
        ("GET", true, None | Some("status")) => {
            let obj = shared
                .store()
                .get(t.resource, &t.key())
                .ok_or_else(|| ApiError::not_found(t.resource, &t.key().1))?;
            if wants_table(req.accept) {
                let meta = json!({"resourceVersion": obj["metadata"]["resourceVersion"]});
                return Ok(ok(table::table(t.resource, &[obj], &meta)));
            }
            Ok(ok((*obj).clone()))
        }
        ("POST", false, None) => {
            let mut body = parse_body(req.body, req.content_type)?;
            check_kind(t.resource, &body)?;
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
            validate_name(t.resource, &body)?;
            if dry_run {
                return Ok(Reply::Json { status: 201, body });
            }
            let created = store.create(t.resource, prepare_new(t.resource, body))?;
            Ok(Reply::Json {
                status: 201,
                body: (*created).clone(),
            })
        }
        ("POST", true, Some("eviction")) if t.resource == Resource::Pods => {
            let body = parse_body(req.body, req.content_type)?;
            let mut store = shared.store();
            let status = eviction::evict(&mut store, &t.key(), &body, dry_run)?;
            Ok(Reply::Json {
                status: 201,
                body: status,
            })
        }
        ("PUT", true, sub @ (None | Some("status"))) => {
            let mut body = parse_body(req.body, req.content_type)?;
            check_kind(t.resource, &body)?;
            body["metadata"]["name"] = json!(t.key().1);
            if let Some(ns) = &t.namespace {
                body["metadata"]["namespace"] = json!(ns);
            }
            let mut store = shared.store();
            let old = store
                .get(t.resource, &t.key())
                .ok_or_else(|| ApiError::not_found(t.resource, &t.key().1))?;
            let new = split_status(&old, body, sub.is_some());
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
            let patch_doc = parse_body(req.body, req.content_type)?;
            let mut store = shared.store();
            let Some(old) = store.get(t.resource, &t.key()) else {
                if kind == PatchType::Apply {
                    drop(store);
                    return create_from_apply(shared, t, patch_doc, dry_run);
                }
                return Err(ApiError::not_found(t.resource, &t.key().1));
            };
            let patched = patch::apply(kind, &old, &patch_doc)
                .map_err(|e| ApiError::new(422, "Invalid", e))?;
            let new = split_status(&old, patched, sub.is_some());
            // A patch carrying a resourceVersion is a precondition, like an update.
            write(&mut store, t, new, dry_run, true)
        }
        ("DELETE", true, None) => {
            let mut delete_opts = if req.body.is_empty() {
                DeleteOptions::default()
            } else {
                DeleteOptions::from_json(&parse_body(req.body, "application/json")?)
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
            let keys: Vec<Key> = store
                .iter(t.resource, t.namespace.as_deref(), None)
                .filter(|(_, o)| opts.matches(t.resource, o))
                .map(|(k, _)| k.clone())
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
    t: &Target,
    mut body: Value,
    dry_run: bool,
) -> Result<Reply, ApiError> {
    body["metadata"]["name"] = json!(t.key().1);
    if let Some(ns) = &t.namespace {
        body["metadata"]["namespace"] = json!(ns);
    }
    let mut store = shared.store();
    check_namespace(&store, t)?;
    if dry_run {
        return Ok(Reply::Json { status: 201, body });
    }
    let created = store.create(t.resource, prepare_new(t.resource, body))?;
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
        && let Some(node) = super::pods::node_name(old)
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

/// Defaulting on create, as the apiserver's defaulters do for the fields
/// the simulation reads.
pub fn prepare_new(res: Resource, mut obj: Value) -> Value {
    if res == Resource::Pods {
        if obj.pointer("/spec/terminationGracePeriodSeconds").is_none() {
            obj["spec"]["terminationGracePeriodSeconds"] = json!(30);
        }
        if obj.pointer("/status/phase").is_none() {
            obj["status"]["phase"] = json!("Pending");
            obj["status"]["qosClass"] = json!("BestEffort");
        }
        if obj.pointer("/spec/priority").is_none() {
            let prio = match obj
                .pointer("/spec/priorityClassName")
                .and_then(Value::as_str)
            {
                Some("system-node-critical") => 2_000_001_000,
                Some("system-cluster-critical") => 2_000_000_000,
                _ => 0,
            };
            obj["spec"]["priority"] = json!(prio);
        }
    }
    if res == Resource::Namespaces && obj.pointer("/status/phase").is_none() {
        obj["status"]["phase"] = json!("Active");
    }
    obj
}

fn wants_table(accept: &str) -> bool {
    accept.contains("as=Table")
}

/// Continue tokens carry the last key returned, hex-encoded JSON.
fn encode_continue(key: &Key) -> String {
    use std::fmt::Write;
    json!([key.0, key.1])
        .to_string()
        .bytes()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn decode_continue(token: &str) -> Result<Key, ApiError> {
    let bad = || ApiError::bad_request("continue key is not valid");
    if !token.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes: Result<Vec<u8>, _> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(token.get(i..i + 2).unwrap_or("zz"), 16))
        .collect();
    let v: Vec<String> = serde_json::from_slice(&bytes.map_err(|_| bad())?).map_err(|_| bad())?;
    match v.as_slice() {
        [ns, name] => Ok((ns.clone(), name.clone())),
        _ => Err(bad()),
    }
}

fn list(
    shared: &Arc<Shared>,
    t: &Target,
    opts: &ListOptions,
    accept: &str,
) -> Result<Reply, ApiError> {
    let after = opts
        .continue_token
        .as_deref()
        .map(decode_continue)
        .transpose()?;
    let limit = opts.limit.unwrap_or(usize::MAX);
    let (items, next, remaining, rv) = {
        let store = shared.store();
        let ns = t.namespace.as_deref();
        let mut items: Vec<Arc<Value>> = Vec::new();
        let mut next = None;
        let mut remaining = 0usize;
        let by_node = (t.resource == Resource::Pods)
            .then(|| opts.node_name())
            .flatten();
        let mut push = |k: &Key, o: &Arc<Value>, items: &mut Vec<Arc<Value>>| {
            if !opts.matches(t.resource, o) {
                return;
            }
            if items.len() < limit {
                items.push(o.clone());
                if items.len() == limit {
                    next = Some(k.clone());
                }
            } else {
                remaining += 1;
            }
        };
        if let Some(node) = by_node {
            // The field-selected list a drain makes: answered from the node index.
            for k in store.pods_on_node(node) {
                if ns.is_some_and(|n| n != k.0) || after.as_ref().is_some_and(|a| &k <= a) {
                    continue;
                }
                if let Some(o) = store.get(Resource::Pods, &k) {
                    push(&k, &o, &mut items);
                }
            }
        } else {
            for (k, o) in store.iter(t.resource, ns, after.as_ref()) {
                push(k, o, &mut items);
            }
        }
        if remaining == 0 {
            next = None;
        }
        (items, next, remaining, store.resource_version())
    };
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(k) = &next {
        meta["continue"] = json!(encode_continue(k));
        meta["remainingItemCount"] = json!(remaining);
    }
    if wants_table(accept) {
        return Ok(ok(table::table(t.resource, &items, &meta)));
    }
    // Serialise outside the lock: a list of thousands of pods is the
    // largest answer the sandbox gives.
    let info = t.resource.info();
    let mut out = Vec::with_capacity(items.len() * 1024 + 256);
    out.extend_from_slice(
        format!(
            "{{\"kind\":\"{}List\",\"apiVersion\":\"{}\",\"metadata\":{},\"items\":[",
            info.kind,
            t.resource.api_version(),
            meta
        )
        .as_bytes(),
    );
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, &**item)
            .map_err(|e| ApiError::new(500, "InternalError", e.to_string()))?;
    }
    out.extend_from_slice(b"]}");
    Ok(Reply::Raw {
        status: 200,
        body: out,
    })
}

/// Discovery documents and /version.
pub fn discovery(shared: &Shared, path: &str) -> Option<Value> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["version"] => {
            let minor = shared.config.minor();
            Some(json!({
                "major": "1",
                "minor": minor,
                "gitVersion": format!("v1.{minor}.0"),
                "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean",
                "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.24.0",
                "compiler": "gc",
                "platform": "linux/amd64",
            }))
        }
        ["api"] => Some(json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
        })),
        ["api", v] => resources::api_resource_list("", v),
        ["apis"] => {
            let groups: Vec<Value> = resources::group_versions()
                .into_iter()
                .map(|(g, v)| {
                    let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
                    json!({"name": g, "versions": [gv], "preferredVersion": gv})
                })
                .collect();
            Some(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
        }
        ["apis", g] => resources::group_versions()
            .into_iter()
            .find(|(name, _)| name == g)
            .map(|(g, v)| {
                let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
                json!({"kind": "APIGroup", "apiVersion": "v1", "name": g, "versions": [gv], "preferredVersion": gv})
            }),
        ["apis", g, v] => resources::api_resource_list(g, v),
        _ => None,
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

    #[test]
    fn continue_tokens_round_trip() {
        let k = ("ns".to_string(), "pod-7".to_string());
        assert_eq!(decode_continue(&encode_continue(&k)).unwrap(), k);
        assert!(decode_continue("zz").is_err());
    }
}
