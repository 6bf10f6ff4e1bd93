//! Who am I and may I: SelfSubjectAccessReview (`kubectl auth can-i`),
//! answered by the authorizer that answers the request itself (crate::auth:
//! the sandbox's own refusals for its own user, RBAC for anyone else), and
//! SelfSubjectReview (`kubectl auth whoami`) for whoever asks
//! (kubernetes pkg/registry/authorization/selfsubjectaccessreview/rest.go,
//! pkg/registry/authentication/selfsubjectreview/rest.go). Neither is
//! stored: a create answers with the review and its status.

use serde_json::{Value, json};

use crate::auth::{self, Attributes, Identity};
use crate::shared::Shared;

pub(crate) const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
pub(crate) const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// The discovery documents of the two groups, by path.
pub(crate) fn discovery(path: &str) -> Option<Value> {
    let list = |group: &str, plural: &str, kind: &str| {
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{group}/v1"),
            "resources": [{"name": plural, "singularName": "", "namespaced": false, "kind": kind, "verbs": ["create"]}]})
    };
    match path.trim_matches('/') {
        "apis/authorization.k8s.io/v1" => Some(list(
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
        )),
        "apis/authentication.k8s.io/v1" => Some(list(
            "authentication.k8s.io",
            "selfsubjectreviews",
            "SelfSubjectReview",
        )),
        _ => None,
    }
}

/// Is this the path of one of the reviews?
pub(crate) fn is_review(path: &str) -> bool {
    group_resource(path).is_some()
}

/// The API group and resource of a review's path.
pub(crate) fn group_resource(path: &str) -> Option<(&'static str, &'static str)> {
    match path {
        ACCESS_REVIEWS => Some(("authorization.k8s.io", "selfsubjectaccessreviews")),
        WHOAMI => Some(("authentication.k8s.io", "selfsubjectreviews")),
        _ => None,
    }
}

/// The groups, for `/apis`.
pub(crate) const GROUPS: [&str; 2] = ["authorization.k8s.io", "authentication.k8s.io"];

/// Answers a review posted to `path` by `identity`; `None` when the path
/// is not one.
pub(crate) fn answer(
    shared: &Shared,
    identity: &Identity,
    path: &str,
    body: &Value,
) -> Option<Value> {
    let mut review = body.clone();
    match path {
        ACCESS_REVIEWS => {
            let spec = &body["spec"];
            let text = |v: &Value, f: &str| v[f].as_str().unwrap_or_default().to_string();
            let attrs = if let Some(r) = spec.get("resourceAttributes") {
                Attributes::Resource {
                    verb: text(r, "verb"),
                    group: text(r, "group"),
                    resource: text(r, "resource"),
                    subresource: text(r, "subresource"),
                    name: text(r, "name"),
                    namespace: text(r, "namespace"),
                }
            } else {
                let n = &spec["nonResourceAttributes"];
                Attributes::NonResource {
                    verb: text(n, "verb"),
                    path: text(n, "path"),
                }
            };
            let decision = auth::authorize(shared, identity, &attrs);
            // No rule allows it: not allowed, and no reason (RBAC has no
            // opinion).
            review["status"] = if decision.reason.is_empty() {
                json!({"allowed": decision.allowed})
            } else {
                json!({"allowed": decision.allowed, "reason": decision.reason})
            };
        }
        WHOAMI => {
            let user = identity.user_info();
            review = json!({
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "SelfSubjectReview",
                "metadata": {},
                "status": {"userInfo": {"username": user.name, "groups": user.groups}},
            });
        }
        _ => return None,
    }
    review["metadata"]["creationTimestamp"] = Value::Null;
    Some(review)
}
