//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`), which
//! kubectl 1.33's typed clients send: `create namespace|configmap|secret|
//! serviceaccount|deployment|job|pdb|role|rolebinding`, `run`, `delete` (its
//! DeleteOptions) and `auth can-i` and `auth whoami` (a
//! SelfSubjectAccessReview, a SelfSubjectReview). The envelope
//! is the magic `k8s\0` and a `runtime.Unknown` (k8s.io/apimachinery/pkg/
//! runtime/generated.proto: typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2),
//! whose `raw` is the message its kind names; `schema` numbers the messages'
//! fields and this module reads them as the JSON the same object would be,
//! so every handler after it sees JSON (k8s.io/apimachinery/pkg/runtime/
//! serializer/protobuf/protobuf.go is the real decoder).
//!
//! A field the schema does not list is skipped when it holds its zero value
//! (gogo-protobuf writes every non-pointer field) and refused otherwise, with
//! `415 UnsupportedMediaType` naming the field and the way to send it as
//! JSON: the sandbox never stores less than it was sent.

mod schema;
mod wire;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use schema::{Message, Ty};
use wire::{Wire, fields, is_zero};

pub(crate) const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\0";
/// Go's zero `time.Time` in Unix seconds: what gogo writes for an unset
/// non-pointer Time (`creationTimestamp` on a create).
const GO_ZERO_TIME: i64 = -62_135_596_800;

/// Why a protobuf body was not read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not protobuf, or cut short: `400 BadRequest`.
    Malformed(String),
    /// Well-formed, but holding what the sandbox does not read:
    /// `415 UnsupportedMediaType`.
    Unread(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Malformed(m) | Refused::Unread(m) => f.write_str(m),
        }
    }
}

fn malformed(_: wire::Malformed) -> Refused {
    Refused::Malformed("the protobuf body could not be decoded".to_string())
}

fn as_json_instead(what: &str) -> Refused {
    Refused::Unread(format!(
        "the sandbox does not read {what} from a protobuf body; send the object as JSON \
         (`kubectl create ... --dry-run=client -o yaml | kubectl apply -f -`)"
    ))
}

/// The object a protobuf body holds, as its JSON, `apiVersion` and `kind`
/// included.
pub(crate) fn decode(body: &[u8]) -> Result<Value, Refused> {
    let inner = body.strip_prefix(MAGIC).ok_or_else(|| {
        Refused::Malformed("a protobuf body must start with the k8s magic number".to_string())
    })?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (n, value) in fields(inner).map_err(malformed)? {
        match (n, value) {
            (1, Wire::Bytes(type_meta)) => {
                for (m, v) in fields(type_meta).map_err(malformed)? {
                    match (m, v) {
                        (1, Wire::Bytes(s)) => api_version = text(s),
                        (2, Wire::Bytes(s)) => kind = text(s),
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let message = schema::by_kind(&kind).ok_or_else(|| as_json_instead(&format!("a {kind:?}")))?;
    let mut out = Map::new();
    if !api_version.is_empty() {
        out.insert("apiVersion".into(), json!(api_version));
    }
    out.insert("kind".into(), json!(kind));
    read_into(raw, message, &mut out)?;
    Ok(Value::Object(out))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn read_into(buf: &[u8], message: &Message, out: &mut Map<String, Value>) -> Result<(), Refused> {
    for (n, value) in fields(buf).map_err(malformed)? {
        let Some(field) = message.fields.iter().find(|f| f.num == n) else {
            if is_zero(value) {
                continue;
            }
            return Err(as_json_instead(&format!("field {n} of {}", message.name)));
        };
        match field.ty {
            Ty::Inline(inner) => read_into(bytes(value, message)?, inner, out)?,
            Ty::StrMap | Ty::BytesMap | Ty::QuantityMap => {
                let (k, v) = entry(bytes(value, message)?, field.ty)?;
                let map = out
                    .entry(field.name)
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = map {
                    map.insert(k, v);
                }
            }
            ty => {
                let Some(v) = read(value, ty, message)? else {
                    continue;
                };
                if !field.keeps_zero && (v == json!(false) || v == json!(0)) {
                    continue;
                }
                if field.list {
                    if let Value::Array(items) = out.entry(field.name).or_insert_with(|| json!([]))
                    {
                        items.push(v);
                    }
                } else {
                    out.insert(field.name.into(), v);
                }
            }
        }
    }
    Ok(())
}

fn bytes<'a>(value: Wire<'a>, message: &Message) -> Result<&'a [u8], Refused> {
    match value {
        Wire::Bytes(b) => Ok(b),
        _ => Err(Refused::Malformed(format!(
            "a field of {} has the wrong wire type",
            message.name
        ))),
    }
}

/// One field's value; `None` for an empty string or an unset time, which
/// JSON omits.
#[allow(clippy::cast_possible_wrap)]
fn read(value: Wire<'_>, ty: Ty, message: &Message) -> Result<Option<Value>, Refused> {
    Ok(match (ty, value) {
        (Ty::Int, Wire::Varint(v)) => Some(json!(v as i64)),
        (Ty::Bool, Wire::Varint(v)) => Some(json!(v != 0)),
        (Ty::Str, Wire::Bytes(b)) => (!b.is_empty()).then(|| json!(text(b))),
        (Ty::Msg(inner), Wire::Bytes(b)) => {
            let mut out = Map::new();
            read_into(b, inner, &mut out)?;
            Some(Value::Object(out))
        }
        (Ty::Time, Wire::Bytes(b)) => time(b)?,
        (Ty::IntOrString, Wire::Bytes(b)) => Some(int_or_string(b)?),
        (Ty::Json, Wire::Bytes(b)) => {
            let raw = fields(b)
                .map_err(malformed)?
                .into_iter()
                .find_map(|(n, v)| match (n, v) {
                    (1, Wire::Bytes(raw)) => Some(raw),
                    _ => None,
                })
                .unwrap_or(b"{}");
            Some(serde_json::from_slice(raw).map_err(|e| {
                Refused::Malformed(format!("fieldsV1 of {} is not JSON: {e}", message.name))
            })?)
        }
        _ => {
            return Err(Refused::Malformed(format!(
                "a field of {} has the wrong wire type",
                message.name
            )));
        }
    })
}

fn first_text(b: &[u8]) -> Result<String, Refused> {
    Ok(fields(b)
        .map_err(malformed)?
        .into_iter()
        .find_map(|(n, v)| match (n, v) {
            (1, Wire::Bytes(s)) => Some(text(s)),
            _ => None,
        })
        .unwrap_or_default())
}

/// A map entry {key = 1, value = 2}.
fn entry(b: &[u8], ty: Ty) -> Result<(String, Value), Refused> {
    let (mut key, mut value) = (String::new(), &[][..]);
    for (n, v) in fields(b).map_err(malformed)? {
        match (n, v) {
            (1, Wire::Bytes(s)) => key = text(s),
            (2, Wire::Bytes(s)) => value = s,
            _ => {}
        }
    }
    let value = match ty {
        Ty::BytesMap => json!(base64::engine::general_purpose::STANDARD.encode(value)),
        Ty::QuantityMap => json!(first_text(value)?),
        _ => json!(text(value)),
    };
    Ok((key, value))
}

/// meta/v1 Time: `None` when unset or Go's zero time.
#[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
fn time(b: &[u8]) -> Result<Option<Value>, Refused> {
    let (mut seconds, mut nanos) = (0i64, 0i32);
    for (n, v) in fields(b).map_err(malformed)? {
        match (n, v) {
            (1, Wire::Varint(s)) => seconds = s as i64,
            (2, Wire::Varint(s)) => nanos = s as i32,
            _ => {}
        }
    }
    if seconds <= GO_ZERO_TIME || (seconds == 0 && nanos == 0 && b.is_empty()) {
        return Ok(None);
    }
    let at = jiff::Timestamp::new(seconds, nanos)
        .map_err(|e| Refused::Malformed(format!("a time out of range: {e}")))?;
    Ok(Some(json!(crate::clock::format_time(at))))
}

/// intstr.IntOrString {type = 1 (0 int, 1 string), intVal = 2, strVal = 3}.
#[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
fn int_or_string(b: &[u8]) -> Result<Value, Refused> {
    let (mut is_string, mut int, mut string) = (false, 0i32, String::new());
    for (n, v) in fields(b).map_err(malformed)? {
        match (n, v) {
            (1, Wire::Varint(t)) => is_string = t == 1,
            (2, Wire::Varint(i)) => int = i as i32,
            (3, Wire::Bytes(s)) => string = text(s),
            _ => {}
        }
    }
    Ok(if is_string { json!(string) } else { json!(int) })
}

#[cfg(test)]
mod tests;
