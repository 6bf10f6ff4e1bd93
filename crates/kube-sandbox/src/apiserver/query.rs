//! Query parameters of list, watch, write and delete requests, and field
//! selectors with the fields the apiserver supports per resource.

use crate::objects::path::At;
use serde_json::Value;

use crate::api_error::ApiError;
use crate::resources::Resource;
use kube_conventions::selector::Selector;

pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn parse_query(q: Option<&str>) -> Vec<(String, String)> {
    q.unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldOp {
    Eq,
    NotEq,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldRequirement {
    pub(crate) field: String,
    pub(crate) op: FieldOp,
    pub(crate) value: String,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct ListOptions {
    pub(crate) labels: Selector,
    pub(crate) fields: Vec<FieldRequirement>,
    pub(crate) limit: Option<usize>,
    pub(crate) continue_token: Option<String>,
    pub(crate) watch: bool,
    pub(crate) resource_version: Option<String>,
    pub(crate) timeout_seconds: Option<u64>,
    pub(crate) bookmarks: bool,
    pub(crate) dry_run: bool,
    /// `fieldValidation` of a write.
    pub(crate) field_validation: super::field_validation::FieldValidation,
    /// `includeObject` for Table answers: what each row carries.
    pub(crate) include_object: IncludeObject,
    /// `sendInitialEvents` (a watch-list: the current objects, then a
    /// bookmark marking their end).
    pub(crate) send_initial_events: bool,
    /// `resourceVersionMatch`: `NotOlderThan` or `Exact`.
    pub(crate) resource_version_match: Option<String>,
}

/// What a Table row carries of its object (metav1 IncludeObjectPolicy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    None,
    #[default]
    Metadata,
    Object,
}

impl ListOptions {
    pub(crate) fn from_query(res: Resource, query: &[(String, String)]) -> Result<Self, ApiError> {
        let mut o = ListOptions::default();
        for (k, v) in query {
            match k.as_str() {
                "labelSelector" => {
                    o.labels =
                        Selector::parse(v).map_err(|e| ApiError::bad_request(e.to_string()))?;
                }
                "fieldSelector" => o.fields = parse_field_selector(res, v)?,
                "limit" => {
                    let n: i64 = v
                        .parse()
                        .map_err(|_| ApiError::bad_request(format!("invalid limit {v:?}")))?;
                    o.limit = (n > 0).then_some(n as usize);
                }
                "continue" if !v.is_empty() => o.continue_token = Some(v.clone()),
                "watch" => o.watch = v.is_empty() || v == "true" || v == "1",
                "resourceVersion" if !v.is_empty() => o.resource_version = Some(v.clone()),
                "timeoutSeconds" => o.timeout_seconds = v.parse().ok(),
                "allowWatchBookmarks" => o.bookmarks = v == "true",
                "dryRun" => o.dry_run = v == "All",
                "fieldValidation" => {
                    o.field_validation = super::field_validation::FieldValidation::parse(v)?;
                }
                "sendInitialEvents" => o.send_initial_events = v == "true",
                "resourceVersionMatch" if !v.is_empty() => {
                    if !matches!(v.as_str(), "NotOlderThan" | "Exact") {
                        return Err(ApiError::bad_request(format!(
                            "resourceVersionMatch: Unsupported value: {v:?}: supported values: \"Exact\", \"NotOlderThan\""
                        )));
                    }
                    o.resource_version_match = Some(v.clone());
                }
                "includeObject" => {
                    o.include_object = match v.as_str() {
                        "None" => IncludeObject::None,
                        "Object" => IncludeObject::Object,
                        "" | "Metadata" => IncludeObject::Metadata,
                        other => {
                            return Err(ApiError::bad_request(format!(
                                "includeObject: Unsupported value: {other:?}: supported values: \"None\", \"Metadata\", \"Object\""
                            )));
                        }
                    };
                }
                _ => {}
            }
        }
        // The apiserver's rules for these together (metainternalversion
        // validation of ListOptions).
        let forbidden = |field: &str, why: &str| {
            Err(ApiError::new(
                422,
                "Invalid",
                format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: Forbidden: {why}"),
            ))
        };
        if o.send_initial_events {
            if !o.watch {
                return forbidden(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for list",
                );
            }
            if o.resource_version_match.as_deref() != Some("NotOlderThan") || !o.bookmarks {
                return forbidden(
                    "sendInitialEvents",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan and allowWatchBookmarks to true",
                );
            }
        } else if o.watch && o.resource_version_match.is_some() {
            return forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            );
        }
        if o.resource_version_match.is_some() && o.resource_version.is_none() && !o.watch {
            return forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            );
        }
        Ok(o)
    }

    pub(crate) fn matches(&self, res: Resource, obj: &Value) -> bool {
        self.labels.matches_object(obj)
            && self.fields.iter().all(|f| {
                let actual = field_value(res, obj, &f.field);
                match f.op {
                    FieldOp::Eq => actual == f.value,
                    FieldOp::NotEq => actual != f.value,
                }
            })
    }

    /// Whether a pod matches, from what the store keeps of it, when that is
    /// enough: label selectors and `spec.nodeName` (what drains and kubelets
    /// watch by). `None`: another field is asked for; parse the pod.
    pub(crate) fn matches_facts(&self, facts: &crate::objects::pods::Facts) -> Option<bool> {
        let mut ok = facts.matches(&self.labels);
        for f in &self.fields {
            if f.field != "spec.nodeName" {
                return None;
            }
            let actual = facts.node.as_deref().unwrap_or_default();
            ok &= match f.op {
                FieldOp::Eq => actual == f.value,
                FieldOp::NotEq => actual != f.value,
            };
        }
        Some(ok)
    }

    /// No label or field selector: every object matches.
    pub(crate) fn selects_everything(&self) -> bool {
        self.labels.is_everything() && self.fields.is_empty()
    }

    /// The node named by `spec.nodeName=X`, which the pod index answers.
    pub(crate) fn node_name(&self) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.field == "spec.nodeName" && f.op == FieldOp::Eq)
            .map(|f| f.value.as_str())
    }
}

fn supported_fields(res: Resource) -> &'static [&'static str] {
    match res {
        Resource::Pods => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        Resource::Nodes => &["spec.unschedulable"],
        Resource::Namespaces => &["status.phase"],
        Resource::Events => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        Resource::Jobs => &["status.successful"],
        _ => &[],
    }
}

/// The string an object's field has for field selection (apiserver's
/// `*ToSelectableFields`: a missing field is the empty string).
pub(crate) fn field_value(res: Resource, obj: &Value, field: &str) -> String {
    let path = match field {
        "source" if res == Resource::Events => "/source/component".to_string(),
        "spec.unschedulable" => {
            return obj
                .at("/spec/unschedulable")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                .to_string();
        }
        "spec.hostNetwork" => {
            return obj
                .at("/spec/hostNetwork")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                .to_string();
        }
        f => format!("/{}", f.replace('.', "/")),
    };
    match obj.at(&path) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

pub(crate) fn parse_field_selector(
    res: Resource,
    s: &str,
) -> Result<Vec<FieldRequirement>, ApiError> {
    let mut out = Vec::new();
    for part in split_unescaped(s) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (field, op, value) = if let Some((f, v)) = part.split_once("!=") {
            (f, FieldOp::NotEq, v)
        } else if let Some((f, v)) = part.split_once("==") {
            (f, FieldOp::Eq, v)
        } else if let Some((f, v)) = part.split_once('=') {
            (f, FieldOp::Eq, v)
        } else {
            return Err(ApiError::bad_request(format!(
                "invalid field selector: invalid selector: '{s}'; can't understand '{part}'"
            )));
        };
        let field = field.trim();
        let known = matches!(field, "metadata.name" | "metadata.namespace")
            || supported_fields(res).contains(&field);
        if !known {
            return Err(ApiError::bad_request(format!(
                "field label not supported: {field}"
            )));
        }
        out.push(FieldRequirement {
            field: field.to_string(),
            op,
            value: value.trim().replace("\\,", ",").replace("\\=", "="),
        });
    }
    Ok(out)
}

fn split_unescaped(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            cur.push('\\');
            cur.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    parts.push(cur);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_kubectl_queries() {
        let q = parse_query(Some("fieldSelector=spec.nodeName%3Dnode-1&limit=500"));
        assert_eq!(
            q[0],
            ("fieldSelector".into(), "spec.nodeName=node-1".into())
        );
        let o = ListOptions::from_query(Resource::Pods, &q).unwrap();
        assert_eq!(o.node_name(), Some("node-1"));
        assert_eq!(o.limit, Some(500));
    }

    #[test]
    fn field_selectors_match_and_reject_unknown_fields() {
        let pod = json!({"metadata": {"name": "a", "namespace": "x"}, "spec": {"nodeName": "n"}, "status": {"phase": "Running"}});
        let f = parse_field_selector(
            Resource::Pods,
            "status.phase!=Succeeded,status.phase!=Failed,spec.nodeName==n",
        )
        .unwrap();
        let o = ListOptions {
            fields: f,
            ..Default::default()
        };
        assert!(o.matches(Resource::Pods, &pod));
        let err = parse_field_selector(Resource::Pods, "spec.foo=bar").unwrap_err();
        assert_eq!(err.message, "field label not supported: spec.foo");
        assert!(parse_field_selector(Resource::Nodes, "spec.nodeName=x").is_err());
    }
}
