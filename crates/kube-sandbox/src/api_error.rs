//! API errors as `metav1.Status` bodies. Clients (kube, client-go) read `code`
//! and `reason` from the body, so every error carries both.

use serde_json::{Value, json};

use crate::resources::Resource;

#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    pub(crate) details: Option<Box<Value>>,
    /// Seconds for the `Retry-After` header and `details.retryAfterSeconds`.
    pub(crate) retry_after: Option<u64>,
}

impl ApiError {
    pub(crate) fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    pub(crate) fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    pub(crate) fn not_found(res: Resource, name: &str) -> Self {
        let plural = qualified_plural(res);
        ApiError::new(404, "NotFound", format!("{plural} \"{name}\" not found"))
            .with_details(details(res, name))
    }

    /// 422 for one field, as a field.Error becomes a StatusError: the
    /// message and a cause kubectl prints as `FIELD: DETAIL` (`reason` is
    /// `FieldValueInvalid`, `FieldValueRequired`, `FieldValueForbidden`).
    pub(crate) fn invalid_field(
        res: Resource,
        name: &str,
        reason: &str,
        field: &str,
        detail: &str,
    ) -> Self {
        let info = res.info();
        let mut d = json!({"name": name, "kind": info.kind,
            "causes": [{"reason": reason, "message": detail, "field": field}]});
        if !info.group.is_empty() {
            d["group"] = json!(info.group);
        }
        ApiError::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {field}: {detail}", info.kind),
        )
        .with_details(d)
    }

    pub(crate) fn already_exists(res: Resource, name: &str) -> Self {
        let plural = qualified_plural(res);
        ApiError::new(
            409,
            "AlreadyExists",
            format!("{plural} \"{name}\" already exists"),
        )
        .with_details(details(res, name))
    }

    pub(crate) fn conflict(res: Resource, name: &str) -> Self {
        let plural = qualified_plural(res);
        ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {plural} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
        )
        .with_details(details(res, name))
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(400, "BadRequest", message)
    }

    pub(crate) fn invalid(res: Resource, name: &str, message: impl Into<String>) -> Self {
        let info = res.info();
        ApiError::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {}", info.kind, message.into()),
        )
        .with_details(details(res, name))
    }

    pub(crate) fn method_not_allowed() -> Self {
        ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    pub(crate) fn path_not_found() -> Self {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    pub(crate) fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "code": self.code,
        });
        // The apiserver leaves `reason` out of an InternalError it did not classify
        // (the several-PDBs eviction error), so an empty reason is omitted.
        if !self.reason.is_empty() {
            s["reason"] = json!(self.reason);
        }
        if let Some(d) = &self.details {
            s["details"] = (**d).clone();
        }
        if let Some(secs) = self.retry_after {
            let d = s
                .as_object_mut()
                .expect("status is an object")
                .entry("details")
                .or_insert_with(|| json!({}));
            d["retryAfterSeconds"] = json!(secs);
        }
        s
    }
}

fn qualified_plural(res: Resource) -> String {
    let info = res.info();
    if info.group.is_empty() {
        info.plural.to_string()
    } else {
        format!("{}.{}", info.plural, info.group)
    }
}

fn details(res: Resource, name: &str) -> Value {
    let info = res.info();
    let mut d = json!({"name": name, "kind": info.plural});
    if !info.group.is_empty() {
        d["group"] = json!(info.group);
    }
    d
}

pub(crate) fn success_status(details: &Value) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}
