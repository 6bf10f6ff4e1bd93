//! `metadata.managedFields`: which manager last set each field, as
//! kube-apiserver's field manager records it on every create, update and
//! patch (k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager and
//! k8s.io/apimachinery/pkg/util/managedfields). An update hands the fields
//! it changed to its manager and takes them from every other; a field it
//! removed leaves every manager; a write that changes no ownership keeps
//! the entries as they were, timestamps included.
//!
//! Simplified from the real structured-merge-diff: maps are followed field
//! by field, but a list is one field owned whole (not item by item); an
//! Apply owns exactly the fields its configuration names. Field paths read
//! from a loaded dump (`k:{...}`, `v:...`, `.`) are kept as they are.
//! Writes made inside the sandbox (controllers, kubelets) are not recorded.

use crate::objects::path::At;
use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// A field as fieldsV1 names it: `["f:spec", "f:unschedulable"]`.
type Path = Vec<String>;

/// Who writes, and how.
pub(crate) struct Writer<'a> {
    pub(crate) manager: &'a str,
    /// The Apply configuration, for a server-side apply; `None` for an update.
    pub(crate) applied: Option<&'a Value>,
    pub(crate) subresource: Option<&'a str>,
    pub(crate) api_version: &'a str,
    pub(crate) now: &'a str,
}

/// The manager a request writes as: its `fieldManager`, or else its
/// User-Agent up to the first `/` (kube-apiserver's default).
pub(crate) fn manager<'a>(query: &'a [(String, String)], user_agent: &'a str) -> &'a str {
    query
        .iter()
        .find(|(k, _)| k == "fieldManager")
        .map(|(_, v)| v.as_str())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| user_agent.split('/').next().unwrap_or_default())
}

struct Entry {
    manager: String,
    operation: String,
    subresource: Option<String>,
    /// The entry as stored, to keep it unchanged when its fields are.
    stored: Value,
    fields: BTreeSet<Path>,
}

/// Sets `new`'s managedFields from `old`'s and what this write changed.
pub(crate) fn track(old: Option<&Value>, new: &mut Value, w: &Writer<'_>) {
    let old_leaves = old.map(leaves).unwrap_or_default();
    let new_leaves = leaves(new);
    let changed: BTreeSet<Path> = new_leaves
        .iter()
        .filter(|p| old.and_then(|o| value_at(o, p)) != value_at(new, p))
        .cloned()
        .collect();
    let removed: Vec<&Path> = old_leaves.difference(&new_leaves).collect();
    let operation = if w.applied.is_some() {
        "Apply"
    } else {
        "Update"
    };
    let mut entries: Vec<Entry> = old
        .and_then(|o| o.at("/metadata/managedFields"))
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(parse_entry).collect())
        .unwrap_or_default();
    let before: Vec<BTreeSet<Path>> = entries.iter().map(|e| e.fields.clone()).collect();
    let mine = entries
        .iter()
        .position(|e| {
            e.manager == w.manager
                && e.operation == operation
                && e.subresource.as_deref() == w.subresource
        })
        .unwrap_or_else(|| {
            entries.push(Entry {
                manager: w.manager.to_string(),
                operation: operation.to_string(),
                subresource: w.subresource.map(str::to_string),
                stored: Value::Null,
                fields: BTreeSet::new(),
            });
            entries.len() - 1
        });
    for (i, e) in entries.iter_mut().enumerate() {
        e.fields.retain(|p| {
            !removed.iter().any(|r| overlaps(p, r))
                && (i == mine || !changed.iter().any(|c| overlaps(p, c)))
        });
    }
    let owned = &mut entries[mine].fields;
    match w.applied {
        Some(config) => *owned = leaves(config).intersection(&new_leaves).cloned().collect(),
        None => owned.extend(changed),
    }
    let unchanged =
        entries.len() == before.len() && entries.iter().zip(&before).all(|(e, b)| e.fields == *b);
    let list: Vec<Value> = entries
        .into_iter()
        .enumerate()
        .filter(|(_, e)| !e.fields.is_empty())
        .map(|(i, e)| {
            if unchanged || (i != mine && !e.stored.is_null() && e.fields == before[i]) {
                return e.stored;
            }
            let mut v = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": w.api_version,
                "time": w.now,
                "fieldsType": "FieldsV1",
                "fieldsV1": fields_v1(&e.fields),
            });
            if let Some(s) = e.subresource {
                v["subresource"] = json!(s);
            }
            v
        })
        .collect();
    if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// Metadata the server owns, never a manager's.
const SERVER_FIELDS: [&str; 10] = [
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
    "name",
    "namespace",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

fn leaves(obj: &Value) -> BTreeSet<Path> {
    let mut out = BTreeSet::new();
    if let Some(map) = obj.as_object() {
        for (k, v) in map {
            match k.as_str() {
                "apiVersion" | "kind" => {}
                "metadata" => {
                    if let Some(meta) = v.as_object() {
                        for (mk, mv) in meta {
                            if !SERVER_FIELDS.contains(&mk.as_str()) {
                                walk(mv, vec!["f:metadata".into(), format!("f:{mk}")], &mut out);
                            }
                        }
                    }
                }
                _ => walk(v, vec![format!("f:{k}")], &mut out),
            }
        }
    }
    out
}

fn walk(v: &Value, path: Path, out: &mut BTreeSet<Path>) {
    match v.as_object() {
        Some(map) if !map.is_empty() => {
            for (k, child) in map {
                let mut p = path.clone();
                p.push(format!("f:{k}"));
                walk(child, p, out);
            }
        }
        _ if v.is_null() => {}
        _ => {
            out.insert(path);
        }
    }
}

fn value_at<'v>(obj: &'v Value, path: &Path) -> Option<&'v Value> {
    path.iter()
        .try_fold(obj, |v, seg| v.get(seg.strip_prefix("f:")?))
}

fn overlaps(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

fn parse_entry(v: &Value) -> Option<Entry> {
    let mut fields = BTreeSet::new();
    collect(v.get("fieldsV1")?, Vec::new(), &mut fields);
    Some(Entry {
        manager: v.get("manager")?.as_str()?.to_string(),
        operation: v.get("operation")?.as_str()?.to_string(),
        subresource: v
            .get("subresource")
            .and_then(Value::as_str)
            .map(str::to_string),
        stored: v.clone(),
        fields,
    })
}

fn collect(v: &Value, path: Path, out: &mut BTreeSet<Path>) {
    match v.as_object() {
        Some(map) if !map.is_empty() => {
            for (k, child) in map {
                let mut p = path.clone();
                p.push(k.clone());
                collect(child, p, out);
            }
        }
        _ if path.is_empty() => {}
        _ => {
            out.insert(path);
        }
    }
}

fn fields_v1(fields: &BTreeSet<Path>) -> Value {
    let mut root = Map::new();
    for path in fields {
        let mut node = &mut root;
        for seg in path {
            node = node
                .entry(seg.clone())
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .expect("fieldsV1 nodes are objects");
        }
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(manager: &str) -> Writer<'_> {
        Writer {
            manager,
            applied: None,
            subresource: None,
            api_version: "v1",
            now: "2026-01-01T00:00:00Z",
        }
    }

    fn owners(obj: &Value, path: &[&str]) -> Vec<String> {
        let path: Path = path.iter().map(|s| (*s).to_string()).collect();
        obj["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(parse_entry)
            .filter(|e| e.fields.contains(&path))
            .map(|e| e.manager)
            .collect()
    }

    #[test]
    fn the_last_manager_to_change_a_field_owns_it() {
        let unschedulable = ["f:spec", "f:unschedulable"];
        let mut node = json!({"metadata": {"name": "n1", "labels": {"a": "1"}}, "spec": {}});
        track(None, &mut node, &update("creator"));
        assert_eq!(
            owners(&node, &["f:metadata", "f:labels", "f:a"]),
            ["creator"]
        );

        let mut cordoned = node.clone();
        cordoned["spec"]["unschedulable"] = json!(true);
        track(Some(&node), &mut cordoned, &update("kubectl-maintain"));
        assert_eq!(owners(&cordoned, &unschedulable), ["kubectl-maintain"]);

        // kubectl uncordon removes the field: nobody owns it.
        let mut uncordoned = cordoned.clone();
        uncordoned["spec"]
            .as_object_mut()
            .unwrap()
            .remove("unschedulable");
        track(Some(&cordoned), &mut uncordoned, &update("kubectl"));
        assert!(owners(&uncordoned, &unschedulable).is_empty());

        // kubectl cordon sets it again: kubectl owns it now.
        let mut again = uncordoned.clone();
        again["spec"]["unschedulable"] = json!(true);
        track(Some(&uncordoned), &mut again, &update("kubectl"));
        assert_eq!(owners(&again, &unschedulable), ["kubectl"]);

        // Writing the same value changes no ownership and no timestamp.
        let mut same = again.clone();
        let later = Writer {
            now: "2027-01-01T00:00:00Z",
            ..update("kubectl-maintain")
        };
        track(Some(&again), &mut same, &later);
        assert_eq!(same, again);
    }

    #[test]
    fn a_request_writes_as_its_field_manager_or_its_user_agent() {
        let ua = "kubectl/v1.33.0 (linux/amd64) kubernetes/abc";
        assert_eq!(manager(&[], ua), "kubectl");
        let q = [("fieldManager".to_string(), "kubectl-cordon".to_string())];
        assert_eq!(manager(&q, ua), "kubectl-cordon");
    }
}
