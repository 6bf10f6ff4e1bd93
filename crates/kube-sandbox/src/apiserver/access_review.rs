//! Who am I and may I: SelfSubjectAccessReview (`kubectl auth can-i`),
//! answered from the sandbox's own refusals (its denials and its Role), and
//! SelfSubjectReview (`kubectl auth whoami`) for the one user it has
//! (kubernetes pkg/registry/authorization/selfsubjectaccessreview/rest.go,
//! pkg/registry/authentication/selfsubjectreview/rest.go). Neither is
//! stored: a create answers with the review and its status.

use serde_json::{Value, json};

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
    matches!(path, ACCESS_REVIEWS | WHOAMI)
}

/// The groups, for `/apis`.
pub(crate) const GROUPS: [&str; 2] = ["authorization.k8s.io", "authentication.k8s.io"];

/// Answers a review posted to `path`; `None` when the path is not one.
pub(crate) fn answer(shared: &Shared, path: &str, body: &Value) -> Option<Value> {
    let mut review = body.clone();
    match path {
        ACCESS_REVIEWS => {
            let attrs = &body["spec"]["resourceAttributes"];
            let verb = attrs["verb"].as_str().unwrap_or_default();
            let mut resource = attrs["resource"].as_str().unwrap_or_default().to_string();
            if let Some(sub) = attrs["subresource"].as_str().filter(|s| !s.is_empty()) {
                resource = format!("{resource}/{sub}");
            }
            let namespace = attrs["namespace"].as_str().unwrap_or_default();
            let denied = !resource.is_empty() && shared.denies(verb, &resource, namespace);
            // RBAC has no opinion on what no rule allows: not allowed, no reason.
            review["status"] = json!({"allowed": !denied});
        }
        WHOAMI => {
            review = json!({
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "SelfSubjectReview",
                "metadata": {},
                "status": {"userInfo": {"username": "system:anonymous",
                    "groups": ["system:unauthenticated"]}},
            });
        }
        _ => return None,
    }
    review["metadata"]["creationTimestamp"] = Value::Null;
    Some(review)
}
