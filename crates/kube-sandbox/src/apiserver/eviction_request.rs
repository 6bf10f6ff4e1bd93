//! What the API server checks in an EvictionRequest, as Kubernetes 1.37's
//! pkg/apis/lifecycle/validation does: a domain-prefixed requester outside
//! the reserved `*.k8s.io` and `*.kubernetes.io`, an intent of `Eviction`
//! or `Withdrawn`, a target pod by name and uid; requester and target
//! never change.

use serde_json::Value;

use crate::api_error::ApiError;
use crate::objects::path::At;
use crate::resources::Resource;

fn field<'a>(obj: &'a Value, path: &str) -> &'a str {
    obj.at(path).and_then(Value::as_str).unwrap_or_default()
}

fn invalid(name: &str, path: &str, reason: &'static str, message: &str) -> ApiError {
    ApiError::invalid_field(Resource::EvictionRequests, name, reason, path, message)
}

/// Checks one write of an EvictionRequest (`old`: the stored one).
pub(crate) fn check(old: Option<&Value>, new: &Value) -> Result<(), ApiError> {
    let name = field(new, "/metadata/name");
    let requester = field(new, "/spec/requester");
    let domain = requester.split_once('/').map(|(d, _)| d);
    match domain {
        None | Some("") => {
            return Err(invalid(
                name,
                "spec.requester",
                "FieldValueInvalid",
                &format!(
                    "Invalid value: {requester:?}: must be a domain-prefixed key (such as \"acme.io/foo\")"
                ),
            ));
        }
        Some(d)
            if d == "k8s.io"
                || d.ends_with(".k8s.io")
                || d == "kubernetes.io"
                || d.ends_with(".kubernetes.io") =>
        {
            return Err(invalid(
                name,
                "spec.requester",
                "FieldValueInvalid",
                &format!(
                    "Invalid value: {requester:?}: domain names *.k8s.io and *.kubernetes.io are reserved"
                ),
            ));
        }
        Some(_) => {}
    }
    let intent = field(new, "/spec/intent");
    if !matches!(intent, "Eviction" | "Withdrawn") {
        return Err(invalid(
            name,
            "spec.intent",
            "FieldValueNotSupported",
            &format!(
                "Unsupported value: {intent:?}: supported values: \"Eviction\", \"Withdrawn\""
            ),
        ));
    }
    for part in ["name", "uid"] {
        if field(new, &format!("/spec/target/pod/{part}")).is_empty() {
            return Err(invalid(
                name,
                &format!("spec.target.pod.{part}"),
                "FieldValueRequired",
                "Required value",
            ));
        }
    }
    if let Some(old) = old {
        for (path, shown) in [
            ("/spec/requester", "spec.requester"),
            ("/spec/target", "spec.target"),
        ] {
            if old.at(path) != new.at(path) {
                return Err(invalid(
                    name,
                    shown,
                    "FieldValueInvalid",
                    "field is immutable",
                ));
            }
        }
    }
    Ok(())
}
