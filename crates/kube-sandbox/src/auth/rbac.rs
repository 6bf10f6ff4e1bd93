//! The RBAC authorizer, as kube-apiserver's
//! (kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go, its rule resolver
//! pkg/registry/rbac/validation/rule.go, and the matchers of
//! pkg/apis/rbac/v1/evaluation_helpers.go): every ClusterRoleBinding whose
//! subjects take in the user, then, for a namespaced request, every
//! RoleBinding of that namespace; the first rule of their roles that
//! allows the request allows it, with the binding as the reason. No rule:
//! no opinion, which is a refusal. A binding whose role is missing grants
//! nothing (rbac.go collects that as an error and goes on).
//!
//! The sandbox's own bootstrap roles (bootstrap.rs) are objects like any
//! other, so a scenario may bind `cluster-admin` or `view` as a cluster's
//! administrator would.

use crate::objects::path::At;
use serde_json::Value;

use super::{Attributes, UserInfo};
use crate::resources::Resource;
use crate::store::Store;

/// The decision, and the binding that allowed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    pub(crate) allowed: bool,
    pub(crate) reason: String,
}

pub(crate) fn authorize(store: &Store, user: &UserInfo, attrs: &Attributes) -> Decision {
    let namespace = match attrs {
        Attributes::Resource { namespace, .. } => namespace.as_str(),
        Attributes::NonResource { .. } => "",
    };
    // Every ClusterRoleBinding (namespace ""), then the namespace's
    // RoleBindings; the reason is made only for the one that allows.
    let cluster = store
        .iter(Resource::ClusterRoleBindings, None, None)
        .map(|(_, b)| (b, ""));
    let local = (!namespace.is_empty())
        .then(|| store.iter(Resource::RoleBindings, Some(namespace), None))
        .into_iter()
        .flatten()
        .map(|(_, b)| (b, namespace));
    for (binding, ns) in cluster.chain(local) {
        let Some(subject) = applies_to(user, &binding, ns) else {
            continue;
        };
        let role_ref = &binding["roleRef"];
        if !role_rules(store, role_ref, ns)
            .iter()
            .any(|rule| rule_allows(attrs, rule))
        {
            continue;
        }
        let name = str_at(&binding, "/metadata/name");
        let described = if ns.is_empty() {
            format!("ClusterRoleBinding {name:?}")
        } else {
            format!("RoleBinding {:?}", format!("{name}/{ns}"))
        };
        return Decision {
            allowed: true,
            reason: format!(
                "RBAC: allowed by {described} of {} {:?} to {subject}",
                str_at(role_ref, "/kind"),
                str_at(role_ref, "/name"),
            ),
        };
    }
    Decision {
        allowed: false,
        reason: String::new(),
    }
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.at(pointer).and_then(Value::as_str).unwrap_or_default()
}

fn strings(v: &Value, field: &str) -> Vec<String> {
    v[field]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The rules of a binding's role: a Role of the binding's namespace or a
/// ClusterRole; none when it is missing.
fn role_rules(store: &Store, role_ref: &Value, namespace: &str) -> Vec<Value> {
    let name = str_at(role_ref, "/name").to_string();
    let role = match str_at(role_ref, "/kind") {
        "Role" if !namespace.is_empty() => {
            store.get(Resource::Roles, &(namespace.to_string(), name))
        }
        "ClusterRole" => store.get(Resource::ClusterRoles, &(String::new(), name)),
        _ => None,
    };
    role.and_then(|r| r["rules"].as_array().cloned())
        .unwrap_or_default()
}

/// The first subject of the binding that takes in the user, described as
/// rule.go's `describeSubject` does.
fn applies_to(user: &UserInfo, binding: &Value, namespace: &str) -> Option<String> {
    binding["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|s| {
            let kind = str_at(s, "/kind");
            let name = str_at(s, "/name");
            match kind {
                "User" if user.name == name => Some(format!("User {name:?}")),
                "Group" if user.groups.iter().any(|g| g == name) => Some(format!("Group {name:?}")),
                "ServiceAccount" => {
                    let ns = match str_at(s, "/namespace") {
                        "" => namespace,
                        ns => ns,
                    };
                    (!ns.is_empty() && user.name == super::service_account_user(ns, name))
                        .then(|| format!("ServiceAccount {:?}", format!("{name}/{ns}")))
                }
                _ => None,
            }
        })
}

/// evaluation_helpers.go's RuleAllows: verb, API group, resource (with
/// `resource/subresource` and `*/subresource`) and resourceNames for a
/// resource request; verb and URL (a trailing `*` a prefix) for another.
pub(crate) fn rule_allows(attrs: &Attributes, rule: &Value) -> bool {
    let has = |field: &str, x: &str| strings(rule, field).iter().any(|v| v == "*" || v == x);
    match attrs {
        Attributes::Resource {
            verb,
            group,
            resource,
            subresource,
            name,
            ..
        } => {
            let combined = super::combined(resource, subresource);
            let resource_matches = strings(rule, "resources").iter().any(|r| {
                r == "*"
                    || *r == combined
                    || (!subresource.is_empty()
                        && r.strip_prefix("*/") == Some(subresource.as_str()))
            });
            let names = strings(rule, "resourceNames");
            has("verbs", verb)
                && has("apiGroups", group)
                && resource_matches
                && (names.is_empty() || names.iter().any(|n| n == name))
        }
        Attributes::NonResource { verb, path } => {
            has("verbs", verb)
                && strings(rule, "nonResourceURLs").iter().any(|u| {
                    u == "*"
                        || u == path
                        || u.strip_suffix('*')
                            .is_some_and(|prefix| path.starts_with(prefix))
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn res(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes::Resource {
            verb: verb.into(),
            group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            namespace: "default".into(),
        }
    }

    #[test]
    fn rules_match_as_the_evaluation_helpers_do() {
        let evict = json!({"verbs": ["create"], "apiGroups": [""], "resources": ["pods/eviction"]});
        assert!(rule_allows(
            &res("create", "", "pods", "eviction", "p"),
            &evict
        ));
        assert!(!rule_allows(&res("create", "", "pods", "", "p"), &evict));
        assert!(!rule_allows(
            &res("create", "policy", "pods", "eviction", "p"),
            &evict
        ));
        let any_status = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*/status"]});
        assert!(rule_allows(
            &res("patch", "", "nodes", "status", "n"),
            &any_status
        ));
        assert!(!rule_allows(
            &res("patch", "", "nodes", "", "n"),
            &any_status
        ));
        let named = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]});
        assert!(rule_allows(&res("get", "", "configmaps", "", "a"), &named));
        assert!(!rule_allows(&res("get", "", "configmaps", "", "b"), &named));
        assert!(!rule_allows(&res("list", "", "configmaps", "", ""), &named));
        let urls = json!({"verbs": ["get"], "nonResourceURLs": ["/api", "/apis/*"]});
        let get = |path: &str| Attributes::NonResource {
            verb: "get".into(),
            path: path.into(),
        };
        assert!(rule_allows(&get("/api"), &urls));
        assert!(rule_allows(&get("/apis/apps/v1"), &urls));
        assert!(!rule_allows(&get("/api/v1"), &urls));
    }

    #[test]
    fn bindings_grant_their_role_to_their_subjects_only() {
        let mut store = Store::new(10);
        let sa = |ns: &str, name: &str| UserInfo::service_account(ns, name);
        for (res, obj) in [
            (
                Resource::ClusterRoles,
                json!({"metadata": {"name": "nodes"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["nodes"]}]}),
            ),
            (
                Resource::ClusterRoleBindings,
                json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "nodes"},
                    "subjects": [{"kind": "ServiceAccount", "name": "a", "namespace": "x"}]}),
            ),
            (
                Resource::RoleBindings,
                json!({"metadata": {"name": "rb", "namespace": "y"}, "roleRef": {"kind": "ClusterRole", "name": "nodes"},
                    "subjects": [{"kind": "ServiceAccount", "name": "a"}]}),
            ),
        ] {
            store.create(res, obj).expect("stored");
        }
        let nodes = |ns: &str| Attributes::Resource {
            verb: "get".into(),
            group: String::new(),
            resource: "nodes".into(),
            subresource: String::new(),
            name: "n".into(),
            namespace: ns.into(),
        };
        let d = authorize(&store, &sa("x", "a"), &nodes(""));
        assert!(d.allowed);
        assert_eq!(
            d.reason,
            r#"RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "nodes" to ServiceAccount "a/x""#
        );
        assert!(!authorize(&store, &sa("x", "other"), &nodes("")).allowed);
        // The RoleBinding's subject has no namespace: its own is meant.
        assert!(!authorize(&store, &sa("y", "a"), &nodes("")).allowed);
        let d = authorize(&store, &sa("y", "a"), &nodes("y"));
        assert!(d.allowed, "{d:?}");
        assert!(d.reason.contains(r#"RoleBinding "rb/y""#), "{d:?}");
    }
}
