//! The four patch types the apiserver accepts (endpoints/handlers/patch.go):
//! JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch
//! with the merge keys of the core types a drain touches, and server-side
//! apply, which the sandbox treats as a merge of the applied configuration
//! (no field ownership is tracked).

use crate::objects::path::At;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub(crate) fn from_content_type(ct: &str) -> Option<Self> {
        match ct.split(';').next().unwrap_or_default().trim() {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
                Some(PatchType::Apply)
            }
            _ => None,
        }
    }
}

pub(crate) fn apply(kind: PatchType, target: &Value, patch: &Value) -> Result<Value, String> {
    match kind {
        PatchType::Json => json_patch(target, patch),
        PatchType::Merge | PatchType::Apply => Ok(merge_patch(target, patch)),
        PatchType::Strategic => Ok(strategic(target, patch, "")),
    }
}

/// RFC 7386: objects merge, null deletes, everything else replaces.
pub(crate) fn merge_patch(target: &Value, patch: &Value) -> Value {
    let Value::Object(p) = patch else {
        return patch.clone();
    };
    let mut out = match target {
        Value::Object(t) => t.clone(),
        _ => Map::new(),
    };
    for (k, v) in p {
        if v.is_null() {
            out.remove(k);
        } else {
            let merged = merge_patch(out.get(k).unwrap_or(&Value::Null), v);
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

/// The patchMergeKey of list fields (from the core API's struct tags), by
/// field name; lists not named here are replaced whole, as for `taints`.
pub(crate) fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "conditions" | "addresses" => Some("type"),
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "containerStatuses"
        | "initContainerStatuses" => Some("name"),
        "ports" => Some("containerPort"),
        "volumeMounts" => Some("mountPath"),
        "ownerReferences" => Some("uid"),
        "hostAliases" => Some("ip"),
        _ => None,
    }
}

/// Primitive lists with `patchStrategy:"merge"`: union, not replace.
pub(crate) fn merges_primitives(field: &str) -> bool {
    field == "finalizers"
}

fn strategic(target: &Value, patch: &Value, _field: &str) -> Value {
    let Value::Object(p) = patch else {
        return patch.clone();
    };
    match p.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut m = p.clone();
            m.remove("$patch");
            return Value::Object(m);
        }
        Some("delete") => return Value::Null,
        _ => {}
    }
    let mut out = match target {
        Value::Object(t) => t.clone(),
        _ => Map::new(),
    };
    for (k, v) in p {
        if k == "$patch" || k.starts_with("$setElementOrder/") || k == "$retainKeys" {
            continue;
        }
        if let Some(list) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(cur)), Value::Array(del)) = (out.get_mut(list), v) {
                cur.retain(|x| !del.contains(x));
            }
            continue;
        }
        if v.is_null() {
            out.remove(k);
            continue;
        }
        let merged = match (out.get(k), v) {
            (Some(Value::Array(cur)), Value::Array(items)) => merge_list(k, cur, items),
            (cur, v @ Value::Object(_)) => {
                let r = strategic(cur.unwrap_or(&Value::Null), v, k);
                if r.is_null() {
                    out.remove(k);
                    continue;
                }
                r
            }
            (_, v) => strip_directives(v),
        };
        out.insert(k.clone(), merged);
    }
    if let Some(Value::Array(keep)) = p.get("$retainKeys") {
        out.retain(|k, _| keep.iter().any(|x| x.as_str() == Some(k)));
    }
    Value::Object(out)
}

fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(
            a.iter()
                .filter(|x| x.get("$patch").is_none())
                .map(strip_directives)
                .collect(),
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn merge_list(field: &str, current: &[Value], patch: &[Value]) -> Value {
    if merges_primitives(field) {
        let mut out = current.to_vec();
        for v in patch {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        return Value::Array(out);
    }
    let Some(key) = merge_key(field) else {
        return strip_directives(&Value::Array(patch.to_vec()));
    };
    if patch
        .iter()
        .any(|x| x.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        return strip_directives(&Value::Array(patch.to_vec()));
    }
    let mut out = current.to_vec();
    for item in patch {
        let id = item.get(key);
        let pos = out.iter().position(|x| id.is_some() && x.get(key) == id);
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                out.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => out[i] = strategic(&out[i], item, field),
            (None, false) => out.push(strip_directives(item)),
        }
    }
    Value::Array(out)
}

/// RFC 6902 with RFC 6901 pointers.
pub(crate) fn json_patch(target: &Value, patch: &Value) -> Result<Value, String> {
    let ops = patch
        .as_array()
        .ok_or("a JSON patch must be an array of operations")?;
    let mut doc = target.clone();
    for op in ops {
        let name = op["op"].as_str().ok_or("operation has no \"op\"")?;
        let path = op["path"].as_str().ok_or("operation has no \"path\"")?;
        match name {
            "add" => add(
                &mut doc,
                path,
                op.get("value").cloned().ok_or("add needs a value")?,
            )?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                remove(&mut doc, path)?;
                add(
                    &mut doc,
                    path,
                    op.get("value").cloned().ok_or("replace needs a value")?,
                )?;
            }
            "move" => {
                let from = op["from"].as_str().ok_or("move needs from")?;
                let v = remove(&mut doc, from)?;
                add(&mut doc, path, v)?;
            }
            "copy" => {
                let from = op["from"].as_str().ok_or("copy needs from")?;
                let v = doc
                    .at(from)
                    .cloned()
                    .ok_or_else(|| format!("missing path {from}"))?;
                add(&mut doc, path, v)?;
            }
            "test" => {
                if doc.at(path) != op.get("value") {
                    return Err(format!("test operation failed at {path}"));
                }
            }
            other => return Err(format!("unknown JSON patch operation {other:?}")),
        }
    }
    Ok(doc)
}

fn split_pointer(path: &str) -> Result<(String, String), String> {
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| format!("invalid path {path:?}"))?;
    Ok((
        parent.to_string(),
        last.replace("~1", "/").replace("~0", "~"),
    ))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split_pointer(path)?;
    let target = doc
        .pointer_mut(&parent)
        .ok_or_else(|| format!("missing path {parent:?}"))?;
    match target {
        Value::Object(m) => {
            m.insert(last, value);
        }
        Value::Array(a) => {
            let i = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>()
                    .map_err(|_| format!("invalid index {last:?}"))?
            };
            if i > a.len() {
                return Err(format!("index {i} out of bounds"));
            }
            a.insert(i, value);
        }
        _ => return Err(format!("cannot add to {parent:?}")),
    }
    Ok(())
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split_pointer(path)?;
    let target = doc
        .pointer_mut(&parent)
        .ok_or_else(|| format!("missing path {parent:?}"))?;
    match target {
        Value::Object(m) => m
            .remove(&last)
            .ok_or_else(|| format!("missing path {path:?}")),
        Value::Array(a) => {
            let i: usize = last
                .parse()
                .map_err(|_| format!("invalid index {last:?}"))?;
            if i >= a.len() {
                return Err(format!("index {i} out of bounds"));
            }
            Ok(a.remove(i))
        }
        _ => Err(format!("missing path {path:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cordon_and_uncordon_patches() {
        let node = json!({"spec": {"podCIDR": "10.0.0.0/24"}});
        let cordoned = apply(
            PatchType::Strategic,
            &node,
            &json!({"spec": {"unschedulable": true}}),
        )
        .unwrap();
        assert_eq!(cordoned["spec"]["unschedulable"], true);
        let back = apply(
            PatchType::Strategic,
            &cordoned,
            &json!({"spec": {"unschedulable": null}}),
        )
        .unwrap();
        assert_eq!(back, node);
    }

    #[test]
    fn strategic_lists_merge_by_key_or_replace() {
        let pod = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]},
                         "spec": {"tolerations": [{"key": "a"}]}, "metadata": {"finalizers": ["x"]}});
        let patch = json!({"status": {"conditions": [{"type": "DisruptionTarget", "status": "True"}]},
                           "spec": {"tolerations": [{"key": "b"}]}, "metadata": {"finalizers": ["y"]}});
        let out = apply(PatchType::Strategic, &pod, &patch).unwrap();
        assert_eq!(out["status"]["conditions"].as_array().unwrap().len(), 2);
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "b"}]));
        assert_eq!(out["metadata"]["finalizers"], json!(["x", "y"]));
        let del = apply(
            PatchType::Strategic,
            &out,
            &json!({"$setElementOrder/conditions": [], "status": {"conditions": [{"type": "Ready", "$patch": "delete"}]},
                    "metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}),
        )
        .unwrap();
        assert_eq!(
            del["status"]["conditions"],
            json!([{"type": "DisruptionTarget", "status": "True"}])
        );
        assert_eq!(del["metadata"]["finalizers"], json!(["y"]));
    }

    #[test]
    fn json_patch_operations() {
        let doc = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"taints": [{"key": "k"}]}});
        let out = json_patch(
            &doc,
            &json!([
                {"op": "add", "path": "/metadata/labels/b~1c", "value": "2"},
                {"op": "remove", "path": "/spec/taints/0"},
                {"op": "test", "path": "/metadata/labels/a", "value": "1"},
                {"op": "replace", "path": "/metadata/labels/a", "value": "3"}
            ]),
        )
        .unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"a": "3", "b/c": "2"}));
        assert_eq!(out["spec"]["taints"], json!([]));
        assert!(
            json_patch(
                &doc,
                &json!([{"op": "test", "path": "/metadata/labels/a", "value": "9"}])
            )
            .is_err()
        );
    }
}
