//! A request as the handlers see it: what its URL names (`Target`, like
//! k8s.io/apiserver's `endpoints/request/requestinfo.go`), its query, headers
//! and body.

use serde_json::Value;

use super::field_validation;
use crate::api_error::ApiError;
use crate::resources::Resource;
use crate::store::Key;

/// What a URL under /api or /apis names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) resource: Resource,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

impl Target {
    pub(crate) fn key(&self) -> Key {
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

/// A path segment with its `%XX` escapes decoded, as Go's url parsing
/// gives the apiserver its path (`system%3Abasic-user` is
/// `system:basic-user`).
fn unescape(segment: &str) -> std::borrow::Cow<'_, str> {
    if !segment.contains('%') {
        return segment.into();
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned().into()
}

/// Parses `/api/v1/...` and `/apis/GROUP/VERSION/...`.
pub(crate) fn parse_target(path: &str) -> Option<Target> {
    let decoded: Vec<std::borrow::Cow<'_, str>> =
        path.trim_matches('/').split('/').map(unescape).collect();
    let segs: Vec<&str> = decoded.iter().map(AsRef::as_ref).collect();
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
    /// The body of a create or an update: an object of the target's kind,
    /// its unknown fields dropped (or refused, under `Strict`).
    pub(super) fn object_body(
        &self,
        mode: field_validation::FieldValidation,
    ) -> Result<Value, ApiError> {
        let mut body = self.json_body()?;
        if let Some(kind) = body.get("kind").and_then(Value::as_str)
            && kind != self.target.resource.info().kind
        {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({}) does not match the expected API version ({})",
                body["apiVersion"].as_str().unwrap_or_default(),
                self.target.resource.api_version()
            )));
        }
        self.check_fields(&mut body, mode, false)?;
        Ok(body)
    }

    /// The object the target names, as stored, or 404.
    pub(super) fn existing(
        &self,
        store: &crate::store::Store,
    ) -> Result<std::sync::Arc<Value>, ApiError> {
        let t = &self.target;
        store
            .get(t.resource, &t.key())
            .ok_or_else(|| ApiError::not_found(t.resource, &t.key().1))
    }

    /// The body as JSON (or as YAML, for server-side apply).
    pub(super) fn json_body(&self) -> Result<Value, ApiError> {
        parse_body(self.body, self.content_type)
    }

    /// Drops the unknown fields of a written object, keeping the warnings
    /// they make for the answer's headers; under `Strict`, refuses it.
    pub(super) fn check_fields(
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
    pub(super) fn track(&self, old: Option<&Value>, new: &mut Value, applied: Option<&Value>) {
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

pub(super) fn parse_body(body: &[u8], content_type: &str) -> Result<Value, ApiError> {
    if content_type.starts_with("application/apply-patch+yaml") {
        let text =
            std::str::from_utf8(body).map_err(|_| ApiError::bad_request("body is not UTF-8"))?;
        return serde_saphyr::from_str(text)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")));
    }
    if content_type.starts_with(super::protobuf::CONTENT_TYPE) {
        return super::protobuf::decode(body).map_err(|refused| match refused {
            super::protobuf::Refused::Malformed(m) => ApiError::bad_request(m),
            super::protobuf::Refused::Unread(m) => ApiError::new(415, "UnsupportedMediaType", m),
        });
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding body: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_names_are_decoded() {
        let t = parse_target("/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Abasic-user")
            .unwrap();
        assert_eq!(t.name.as_deref(), Some("system:basic-user"));
        assert_eq!(unescape("a%2"), "a%2");
    }

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
