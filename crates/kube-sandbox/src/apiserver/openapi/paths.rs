//! The documents' paths: the operations the sandbox serves for each
//! resource, described as the apiserver describes them
//! (k8s.io/apiserver pkg/endpoints/installer.go): an operation id, the
//! `x-kubernetes-action` and `x-kubernetes-group-version-kind` extensions
//! and the query parameters. kubectl reads them to learn whether a kind's
//! PATCH takes `fieldValidation` (cli-runtime's QueryParamVerifier) before
//! it leaves validation to the server.

use serde_json::{Map, Value, json};

use super::schemas::{Flavor, definition_name};
use crate::resources::Resource;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    List,
    Create,
    DeleteCollection,
    Read,
    Replace,
    Patch,
    Delete,
}

impl Action {
    /// The id's verb and `x-kubernetes-action`.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Action::List => ("list", "list"),
            Action::Create => ("create", "post"),
            Action::DeleteCollection => ("deleteCollection", "deletecollection"),
            Action::Read => ("read", "get"),
            Action::Replace => ("replace", "put"),
            Action::Patch => ("patch", "patch"),
            Action::Delete => ("delete", "delete"),
        }
    }

    fn method(self) -> &'static str {
        match self {
            Action::List | Action::Read => "get",
            Action::Create => "post",
            Action::Replace => "put",
            Action::Patch => "patch",
            Action::Delete | Action::DeleteCollection => "delete",
        }
    }

    fn query(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Action::List => &[
                ("labelSelector", "string"),
                ("fieldSelector", "string"),
                ("limit", "integer"),
                ("continue", "string"),
                ("resourceVersion", "string"),
                ("resourceVersionMatch", "string"),
                ("sendInitialEvents", "boolean"),
                ("allowWatchBookmarks", "boolean"),
                ("timeoutSeconds", "integer"),
                ("watch", "boolean"),
            ],
            Action::Create | Action::Replace => &[
                ("dryRun", "string"),
                ("fieldManager", "string"),
                ("fieldValidation", "string"),
            ],
            Action::Patch => &[
                ("dryRun", "string"),
                ("fieldManager", "string"),
                ("fieldValidation", "string"),
                ("force", "boolean"),
            ],
            Action::Delete | Action::DeleteCollection => &[
                ("dryRun", "string"),
                ("gracePeriodSeconds", "integer"),
                ("propagationPolicy", "string"),
            ],
            Action::Read => &[],
        }
    }

    fn has_body(self) -> bool {
        matches!(self, Action::Create | Action::Replace | Action::Patch)
    }
}

/// `CoreV1`, `AppsV1`, `StorageV1` (a `.k8s.io` group loses its suffix),
/// `KubevirtIoV1`.
fn group_version_id(res: Resource) -> String {
    let i = res.info();
    let group = if i.group.is_empty() {
        "core"
    } else {
        i.group.strip_suffix(".k8s.io").unwrap_or(i.group)
    };
    let mut out: String = group.split('.').map(capitalized).collect();
    out.push_str(&capitalized(i.version));
    out
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn operation(res: Resource, action: Action, status: bool, flavor: Flavor) -> Value {
    let i = res.info();
    let (verb, x_action) = action.names();
    let scope = if i.namespaced { "Namespaced" } else { "" };
    let suffix = if status { "Status" } else { "" };
    let id = format!("{verb}{}{scope}{}{suffix}", group_version_id(res), i.kind);
    let kind_ref = flavor.reference(&definition_name(res));
    let mut op = json!({
        "operationId": id,
        "description": format!("{verb} {}{}", i.kind, if status { " status" } else { "" }),
        "x-kubernetes-action": x_action,
        "x-kubernetes-group-version-kind": {"group": i.group, "version": i.version, "kind": i.kind},
    });
    let returns_kind = !matches!(action, Action::List | Action::DeleteCollection);
    let mut params: Vec<Value> = action
        .query()
        .iter()
        .map(|(name, ty)| match flavor {
            Flavor::V2 => json!({"name": name, "in": "query", "type": ty, "uniqueItems": true}),
            Flavor::V3 => {
                json!({"name": name, "in": "query", "schema": {"type": ty, "uniqueItems": true}})
            }
        })
        .collect();
    let body_schema = if action == Action::Patch {
        json!({"type": "object"})
    } else {
        kind_ref.clone()
    };
    match flavor {
        Flavor::V2 => {
            if action.has_body() {
                params.insert(
                    0,
                    json!({"name": "body", "in": "body", "required": true, "schema": body_schema}),
                );
            }
            let mut ok = json!({"description": "OK"});
            if returns_kind {
                ok["schema"] = kind_ref;
            }
            op["parameters"] = json!(params);
            op["responses"] = json!({"200": ok});
            op["produces"] = json!(["application/json", "application/yaml"]);
            if action == Action::Patch {
                op["consumes"] = json!(PATCH_TYPES);
            }
        }
        Flavor::V3 => {
            if action.has_body() {
                let types: &[&str] = if action == Action::Patch {
                    PATCH_TYPES
                } else {
                    &["application/json", "application/yaml"]
                };
                let content: Map<String, Value> = types
                    .iter()
                    .map(|t| ((*t).to_string(), json!({"schema": body_schema})))
                    .collect();
                op["requestBody"] = json!({"content": content, "required": true});
            }
            let mut ok = json!({"description": "OK"});
            if returns_kind {
                ok["content"] = json!({"application/json": {"schema": kind_ref}});
            }
            op["parameters"] = json!(params);
            op["responses"] = json!({"200": ok});
        }
    }
    op
}

const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

fn path_parameter(name: &str, flavor: Flavor) -> Value {
    match flavor {
        Flavor::V2 => {
            json!({"name": name, "in": "path", "required": true, "type": "string", "uniqueItems": true})
        }
        Flavor::V3 => {
            json!({"name": name, "in": "path", "required": true, "schema": {"type": "string", "uniqueItems": true}})
        }
    }
}

/// Every path of these resources, by URL.
pub(super) fn paths(resources: &[Resource], flavor: Flavor) -> Map<String, Value> {
    let mut out = Map::new();
    for &res in resources {
        let i = res.info();
        let base = if i.group.is_empty() {
            format!("/api/{}", i.version)
        } else {
            format!("/apis/{}/{}", i.group, i.version)
        };
        let scope = if i.namespaced {
            "/namespaces/{namespace}"
        } else {
            ""
        };
        let collection = format!("{base}{scope}/{}", i.plural);
        let item = format!("{collection}/{{name}}");
        let mut scoped = Vec::new();
        if i.namespaced {
            scoped.push(path_parameter("namespace", flavor));
        }
        let mut named = scoped.clone();
        named.insert(0, path_parameter("name", flavor));
        let mut entry = |url: String, params: &[Value], actions: &[Action], status: bool| {
            let mut p = json!({"parameters": params});
            for a in actions {
                p[a.method()] = operation(res, *a, status, flavor);
            }
            out.insert(url, p);
        };
        entry(
            collection,
            &scoped,
            &[Action::List, Action::Create, Action::DeleteCollection],
            false,
        );
        entry(
            item.clone(),
            &named,
            &[Action::Read, Action::Replace, Action::Patch, Action::Delete],
            false,
        );
        if i.subresources.contains(&"status") {
            entry(
                format!("{item}/status"),
                &named,
                &[Action::Read, Action::Replace, Action::Patch],
                true,
            );
        }
    }
    out
}
