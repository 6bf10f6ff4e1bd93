//! Validation of every write, with the apiserver's 422 `Invalid` answers
//! (kubernetes pkg/apis/core/validation and pkg/apis/apps/validation, as far
//! as a drain's rehearsal meets them):
//! - the object must read as its typed kind (k8s-openapi's models): a
//!   wrong-typed field, such as `unschedulable: "yes"`, is refused and named
//!   by its path, never stored where it would break every later reader;
//! - a pod needs containers;
//! - what cannot change does not: a workload's `spec.selector`, and a pod's
//!   spec except its images, `activeDeadlineSeconds`, added tolerations and
//!   `terminationGracePeriodSeconds` ("pod updates may not change fields
//!   other than ...");
//! - a node's taints have a label name for a key, a label value for a value
//!   and one of the three effects, and no two share a key and an effect
//!   (validation.go, `validateNodeTaints`).

use crate::objects::path::At;
use serde_json::Value;

use crate::api_error::ApiError;
use crate::models::{Model, WithModel, with_model};
use crate::resources::Resource;

/// Does the object read as its typed kind? `Err` carries serde's reason.
fn typed(res: Resource, obj: &Value) -> Result<(), String> {
    struct Decodes<'a>(&'a Value);
    impl WithModel for Decodes<'_> {
        type Out = Result<(), String>;
        fn with<T: Model>(self) -> Self::Out {
            serde_json::from_value::<T>(self.0.clone())
                .map(drop)
                .map_err(|e| e.to_string())
        }
    }
    with_model(res, Decodes(obj)).unwrap_or(Ok(()))
}

/// Every leaf of an object with its path (`spec.unschedulable`,
/// `spec.containers[0].name`).
fn leaves(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(child, &p, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, child) in a.iter().enumerate() {
                leaves(child, &format!("{path}[{i}]"), out);
            }
        }
        _ => out.push((path.to_string(), v.clone())),
    }
}

fn pointer(path: &str) -> String {
    let mut out = String::new();
    for part in path.split('.') {
        let (name, index) = part.split_once('[').unwrap_or((part, ""));
        out.push('/');
        out.push_str(&name.replace('~', "~0").replace('/', "~1"));
        if let Some(i) = index.strip_suffix(']') {
            out.push('/');
            out.push_str(i);
        }
    }
    out
}

/// The leaf of `new` whose value makes it unreadable: the first changed
/// leaf whose removal lets the object read as its kind.
fn culprit(res: Resource, old: Option<&Value>, new: &Value) -> Option<(String, Value)> {
    let mut all = Vec::new();
    leaves(new, "", &mut all);
    all.into_iter()
        .filter(|(p, v)| old.and_then(|o| o.at(&pointer(p))) != Some(v))
        .find(|(p, _)| {
            let mut probe = new.clone();
            if let Some(slot) = probe.pointer_mut(&pointer(p)) {
                *slot = Value::Null;
            }
            typed(res, &probe).is_ok()
        })
}

fn reason(serde: &str) -> &str {
    serde.split(" at line ").next().unwrap_or(serde)
}

fn name_of(obj: &Value) -> &str {
    obj.at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// What the pod spec may change on an update (core validation's
/// ValidatePodUpdate): everything else must stay as it was.
fn pod_spec_mutable_removed(spec: &Value) -> Value {
    let mut s = spec.clone();
    for list in ["containers", "initContainers"] {
        if let Some(cs) = s.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs {
                if let Some(c) = c.as_object_mut() {
                    c.remove("image");
                }
            }
        }
    }
    if let Some(m) = s.as_object_mut() {
        for field in [
            "activeDeadlineSeconds",
            "tolerations",
            "terminationGracePeriodSeconds",
            "nodeName",
        ] {
            m.remove(field);
        }
    }
    s
}

/// Each taint of a node: its key a label name, its value a label value,
/// its effect one of the three.
fn node_taints(name: &str, node: &Value) -> Result<(), ApiError> {
    let taints = node
        .at("/spec/taints")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let invalid = |field: String, reason: &str, detail: String| {
        ApiError::invalid_field(Resource::Nodes, name, reason, &field, &detail)
    };
    let mut seen = std::collections::HashSet::new();
    for (i, t) in taints.iter().enumerate() {
        let text = |f: &str| t.get(f).and_then(Value::as_str).unwrap_or_default();
        let (key, value, effect) = (text("key"), text("value"), text("effect"));
        if kube_conventions::selector::validate_key(key).is_err() {
            let name_part = key.rsplit_once('/').map_or(key, |(_, n)| n);
            let why = if kube_conventions::selector::validate_key(name_part).is_ok() {
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            } else {
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            };
            return Err(invalid(
                format!("spec.taints[{i}].key"),
                "FieldValueInvalid",
                format!("Invalid value: {key:?}: {why}"),
            ));
        }
        if let Some(why) = kube_conventions::selector::label_value_refusal(value) {
            return Err(invalid(
                format!("spec.taints[{i}].value"),
                "FieldValueInvalid",
                format!("Invalid value: {value:?}: {why}"),
            ));
        }
        if !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
            return Err(invalid(
                format!("spec.taints[{i}].effect"),
                "FieldValueNotSupported",
                format!(
                    "Unsupported value: {effect:?}: supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
                ),
            ));
        }
        // validation.go: "taints must be unique by key and effect pair",
        // the duplicate said as Go's %#v says the internal type.
        if !seen.insert((key, effect)) {
            let added = if t.get("timeAdded").is_some_and(|v| !v.is_null()) {
                "(*v1.Time)(...)"
            } else {
                "<nil>"
            };
            return Err(invalid(
                format!("spec.taints[{i}]"),
                "FieldValueDuplicate",
                format!(
                    "Duplicate value: core.Taint{{Key:{key:?}, Value:{value:?}, Effect:{effect:?}, TimeAdded:{added}}}: taints must be unique by key and effect pair"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks one write: `old` is the stored object (`None` on create).
pub(crate) fn check(res: Resource, old: Option<&Value>, new: &Value) -> Result<(), ApiError> {
    let name = name_of(new);
    if let Err(why) = typed(res, new) {
        return Err(match culprit(res, old, new) {
            Some((path, value)) => ApiError::invalid_field(
                res,
                name,
                "FieldValueInvalid",
                &path,
                &format!("Invalid value: {value}: {}", reason(&why)),
            ),
            None => ApiError::invalid(res, name, reason(&why)),
        });
    }
    if res == Resource::EvictionRequests {
        super::eviction_request::check(old, new)?;
    }
    if res == Resource::Nodes {
        node_taints(name, new)?;
    }
    if res == Resource::Pods
        && new
            .at("/spec/containers")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    {
        return Err(ApiError::invalid_field(
            res,
            name,
            "FieldValueRequired",
            "spec.containers",
            "Required value",
        ));
    }
    let Some(old) = old else {
        return Ok(());
    };
    let workload = matches!(
        res,
        Resource::Deployments
            | Resource::ReplicaSets
            | Resource::StatefulSets
            | Resource::DaemonSets
    );
    if workload && old.at("/spec/selector") != new.at("/spec/selector") {
        return Err(ApiError::invalid_field(
            res,
            name,
            "FieldValueInvalid",
            "spec.selector",
            &format!(
                "Invalid value: {}: field is immutable",
                new.at("/spec/selector").unwrap_or(&Value::Null)
            ),
        ));
    }
    if res == Resource::Pods {
        let (before, after) = (
            pod_spec_mutable_removed(&old["spec"]),
            pod_spec_mutable_removed(&new["spec"]),
        );
        if before != after {
            return Err(ApiError::invalid_field(
                res,
                name,
                "FieldValueForbidden",
                "spec",
                "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_nodes_taints_are_refused_as_the_apiserver_refuses_them() {
        let node = |taint: Value| json!({"metadata": {"name": "n1"}, "spec": {"taints": [taint]}});
        let long = "a".repeat(64);
        for (taint, said) in [
            (
                json!({"key": "k", "value": "bad value", "effect": "NoSchedule"}),
                "spec.taints[0].value: Invalid value: \"bad value\": a valid label must be",
            ),
            (
                json!({"key": "k", "value": long, "effect": "NoSchedule"}),
                "spec.taints[0].value: Invalid value: \"aaaa",
            ),
            (
                json!({"key": "bad key", "effect": "NoSchedule"}),
                "spec.taints[0].key: Invalid value: \"bad key\": name part must",
            ),
            (
                json!({"key": "Example.com/k", "effect": "NoSchedule"}),
                "spec.taints[0].key: Invalid value: \"Example.com/k\": prefix part a lowercase RFC 1123",
            ),
            (
                json!({"key": "k", "effect": "Sometimes"}),
                "spec.taints[0].effect: Unsupported value: \"Sometimes\": supported values",
            ),
        ] {
            let e = check(Resource::Nodes, None, &node(taint.clone())).expect_err("refused");
            assert!(e.message.contains(said), "{taint}: {}", e.message);
            assert!(
                e.message.starts_with("Node \"n1\" is invalid: "),
                "{}",
                e.message
            );
        }
        // Two taints of one key and effect: the second refused, whatever
        // its value; the same key with another effect is another taint.
        let twice = json!({"metadata": {"name": "n1"}, "spec": {"taints": [
            {"key": "k", "value": "a", "effect": "NoSchedule"},
            {"key": "k", "value": "b", "effect": "NoExecute"},
            {"key": "k", "value": "c", "effect": "NoSchedule"}]}});
        let e = check(Resource::Nodes, None, &twice).expect_err("refused");
        assert_eq!(
            e.message,
            "Node \"n1\" is invalid: spec.taints[2]: Duplicate value: core.Taint{Key:\"k\", Value:\"c\", Effect:\"NoSchedule\", TimeAdded:<nil>}: taints must be unique by key and effect pair"
        );
        for ok in [
            json!({"key": "example.com/maintenance", "value": "a_b.c-1", "effect": "NoExecute"}),
            json!({"key": "k", "effect": "PreferNoSchedule"}),
        ] {
            assert!(
                check(Resource::Nodes, None, &node(ok.clone())).is_ok(),
                "{ok}"
            );
        }
    }

    #[test]
    fn a_wrong_type_is_refused_and_named_by_its_path() {
        let old = json!({"metadata": {"name": "n1"}, "spec": {}});
        let new = json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": "yes"}});
        let e = check(Resource::Nodes, Some(&old), &new).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "Node \"n1\" is invalid: spec.unschedulable: Invalid value: \"yes\": invalid type: string \"yes\", expected a boolean"
        );
        assert!(check(Resource::Nodes, Some(&old), &old).is_ok());
    }

    #[test]
    fn pods_need_containers_and_keep_their_spec() {
        let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": []}});
        let e = check(Resource::Pods, None, &bare).unwrap_err();
        assert!(
            e.message.ends_with("spec.containers: Required value"),
            "{}",
            e.message
        );
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "a"}]}});
        let mut image = pod.clone();
        image["spec"]["containers"][0]["image"] = json!("b");
        assert!(check(Resource::Pods, Some(&pod), &image).is_ok());
        let mut renamed = pod.clone();
        renamed["spec"]["containers"][0]["name"] = json!("d");
        let e = check(Resource::Pods, Some(&pod), &renamed).unwrap_err();
        assert!(
            e.message.contains("pod updates may not change fields"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_workloads_selector_is_immutable() {
        let d = json!({"metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}}});
        let mut changed = d.clone();
        changed["spec"]["selector"]["matchLabels"]["app"] = json!("api");
        let e = check(Resource::Deployments, Some(&d), &changed).unwrap_err();
        assert!(
            e.message.contains("spec.selector: Invalid value"),
            "{}",
            e.message
        );
        assert!(e.message.ends_with("field is immutable"));
    }
}
