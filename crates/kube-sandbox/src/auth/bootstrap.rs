//! The roles every cluster starts with, as kube-apiserver's bootstrap
//! policy makes them (kubernetes
//! plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go and
//! controller_policy.go): `cluster-admin` for `system:masters`, and for
//! every authenticated user discovery, the public health and version
//! endpoints, and the self-reviews (`kubectl auth can-i`, `whoami`). They
//! are stored as objects, so they are listed, described and bound as on a
//! real cluster; a scenario that brings its own keeps its own.

use serde_json::{Value, json};

use crate::resources::Resource;
use crate::store::Store;

fn meta(name: &str) -> Value {
    json!({
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn role(name: &str, rules: &Value) -> (Resource, Value) {
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": meta(name), "rules": rules});
    (Resource::ClusterRoles, role)
}

fn binding(name: &str, groups: &[&str]) -> (Resource, Value) {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
        .collect();
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": meta(name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": subjects});
    (Resource::ClusterRoleBindings, binding)
}

/// The bootstrap ClusterRoles and their bindings.
fn objects() -> Vec<(Resource, Value)> {
    let get = |urls: &[&str]| json!([{"verbs": ["get"], "nonResourceURLs": urls}]);
    vec![
        role(
            "cluster-admin",
            &json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                   {"verbs": ["*"], "nonResourceURLs": ["*"]}]),
        ),
        binding("cluster-admin", &["system:masters"]),
        role(
            "system:discovery",
            &get(&[
                "/api",
                "/api/*",
                "/apis",
                "/apis/*",
                "/healthz",
                "/livez",
                "/openapi",
                "/openapi/*",
                "/readyz",
                "/version",
                "/version/",
            ]),
        ),
        binding("system:discovery", &["system:authenticated"]),
        role(
            "system:basic-user",
            &json!([
                {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                 "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
                {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"],
                 "resources": ["selfsubjectreviews"]},
            ]),
        ),
        binding("system:basic-user", &["system:authenticated"]),
        role(
            "system:public-info-viewer",
            &get(&["/healthz", "/livez", "/readyz", "/version", "/version/"]),
        ),
        binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}

/// Stores what the scenario did not bring.
pub(crate) fn ensure(store: &mut Store) {
    for (resource, object) in objects() {
        let key = crate::store::key_of(&object);
        if store.get(resource, &key).is_none() {
            let _ = store.create(resource, object);
        }
    }
}
