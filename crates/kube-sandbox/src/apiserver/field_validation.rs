//! Unknown fields in a written object, found by walking it along the served
//! schema (the OpenAPI definitions): the apiserver decodes every write into
//! its typed struct, so an unknown field is never stored, and with
//! `fieldValidation=Strict` (what kubectl 1.27+ sends once the OpenAPI says
//! the server validates) the write is refused with a 400 naming each field
//! (k8s.io/apiserver pkg/endpoints/handlers: "strict decoding error:
//! unknown field \"spec.foo\""). `Warn`, the default, drops them and
//! answers one `Warning` header per field with the same words
//! (handlers/rest.go addStrictDecodingWarnings), which kubectl prints as
//! `Warning: unknown field "spec.foo"`.

use serde_json::{Map, Value};

use super::openapi;
use crate::api_error::ApiError;
use crate::resources::Resource;

/// What the client asked for with `fieldValidation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl FieldValidation {
    pub(crate) fn parse(v: &str) -> Result<Self, ApiError> {
        match v {
            "Ignore" => Ok(FieldValidation::Ignore),
            "Warn" | "" => Ok(FieldValidation::Warn),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation: Unsupported value: {other:?}: supported values: \"Ignore\", \"Strict\", \"Warn\""
            ))),
        }
    }
}

/// The schema a `$ref` (or a one-element `allOf`) points at.
fn resolve<'a>(defs: &'a Map<String, Value>, mut schema: &'a Value) -> &'a Value {
    for _ in 0..8 {
        let target = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
            .and_then(|name| defs.get(name));
        match target {
            Some(t) => schema = t,
            None => break,
        }
    }
    schema
}

/// Removes the fields `schema` does not know from `v`, naming each.
fn prune(
    defs: &Map<String, Value>,
    schema: &Value,
    v: &mut Value,
    path: &str,
    unknown: &mut Vec<String>,
) {
    let schema = resolve(defs, schema);
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    let child = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match v {
        Value::Object(obj) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                let mut gone = Vec::new();
                for (k, val) in obj.iter_mut() {
                    if let Some(s) = props.get(k) {
                        prune(defs, s, val, &child(k), unknown);
                    } else {
                        unknown.push(child(k));
                        gone.push(k.clone());
                    }
                }
                for k in gone {
                    obj.remove(&k);
                }
            } else if let Some(values @ Value::Object(_)) = schema.get("additionalProperties") {
                for (k, val) in obj.iter_mut() {
                    prune(defs, values, val, &child(k), unknown);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, val) in items.iter_mut().enumerate() {
                    prune(defs, item, val, &format!("{path}[{i}]"), unknown);
                }
            }
        }
        _ => {}
    }
}

/// Drops `obj`'s unknown fields and returns the warnings `Warn` answers
/// with; under `Strict` refuses the write instead. `patch` words the
/// refusal as the patch handler does.
pub(crate) fn check(
    res: Resource,
    obj: &mut Value,
    mode: FieldValidation,
    patch: bool,
) -> Result<Vec<String>, ApiError> {
    let defs = openapi::definitions();
    let Some(schema) = defs.get(&openapi::definition_name(res)) else {
        return Ok(Vec::new());
    };
    let mut unknown = Vec::new();
    prune(defs, schema, obj, "", &mut unknown);
    let fields: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field {f:?}"))
        .collect();
    match mode {
        FieldValidation::Ignore => return Ok(Vec::new()),
        FieldValidation::Warn => return Ok(fields),
        FieldValidation::Strict if fields.is_empty() => return Ok(fields),
        FieldValidation::Strict => {}
    }
    let strict = format!("strict decoding error: {}", fields.join(", "));
    let i = res.info();
    Err(ApiError::bad_request(if patch {
        strict
    } else {
        format!(
            "{} in version {:?} cannot be handled as a {}: {strict}",
            i.kind, i.version, i.kind
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_are_named_by_path_and_dropped_or_refused() {
        let mut d = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"any": "label"}},
            "spec": {"replicas": 1, "replica": 2,
                "template": {"spec": {"containers": [{"name": "c", "imagee": "x"}]}}},
        });
        let strict = check(
            Resource::Deployments,
            &mut d.clone(),
            FieldValidation::Strict,
            false,
        )
        .unwrap_err();
        assert_eq!(strict.code, 400);
        assert_eq!(
            strict.message,
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replica\", unknown field \"spec.template.spec.containers[0].imagee\""
        );
        let mut ignored = d.clone();
        check(
            Resource::Deployments,
            &mut ignored,
            FieldValidation::Ignore,
            false,
        )
        .unwrap();
        assert!(ignored["spec"].get("replica").is_none());
        assert_eq!(
            check(Resource::Deployments, &mut d, FieldValidation::Warn, false).unwrap(),
            [
                "unknown field \"spec.replica\"",
                "unknown field \"spec.template.spec.containers[0].imagee\""
            ]
        );
        assert!(d["spec"].get("replica").is_none());
        assert_eq!(
            d["metadata"]["labels"]["any"], "label",
            "maps keep every key"
        );
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0],
            json!({"name": "c"})
        );
    }
}
