//! The protobuf bodies clients send that the sandbox must read: kubectl 1.33
//! sends `DeleteOptions` as `application/vnd.kubernetes.protobuf` when it
//! deletes a pod (`drain --disable-eviction`). The envelope is the magic
//! `k8s\0` and a `runtime.Unknown` (k8s.io/apimachinery/pkg/runtime/
//! generated.proto: typeMeta = 1, raw = 2), whose `raw` is the message
//! (k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto: DeleteOptions
//! gracePeriodSeconds = 1, preconditions = 2 {uid = 1, resourceVersion = 2},
//! dryRun = 5), and kubectl 1.33's SelfSubjectAccessReview for `auth can-i`
//! (k8s.io/api/authorization/v1/generated.proto: spec = 2, its
//! resourceAttributes = 1 {namespace = 1, verb = 2, group = 3, version = 4,
//! resource = 5, subresource = 6, name = 7}). Only what the sandbox reads is
//! decoded; other fields are skipped by their wire type.

use serde_json::{Map, Value, json};

pub(crate) const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\0";

/// One field: its number and value.
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.buf.split_first()?;
            self.buf = rest;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(out);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }

    /// The next field, `None` at the end; `Some(Err)` on a malformed body.
    fn field(&mut self) -> Option<Result<(u64, Option<Field<'a>>), ()>> {
        if self.buf.is_empty() {
            return None;
        }
        let decoded = (|| {
            let tag = self.varint()?;
            let value = match tag & 7 {
                0 => Some(Field::Varint(self.varint()?)),
                1 => self.take(8).map(|_| None)?,
                2 => {
                    let len = usize::try_from(self.varint()?).ok()?;
                    Some(Field::Bytes(self.take(len)?))
                }
                5 => self.take(4).map(|_| None)?,
                _ => return None,
            };
            Some((tag >> 3, value))
        })();
        Some(decoded.ok_or(()))
    }
}

fn fields(buf: &[u8]) -> Result<Vec<(u64, Field<'_>)>, ()> {
    let mut r = Reader { buf };
    let mut out = Vec::new();
    while let Some(f) = r.field() {
        if let (n, Some(v)) = f? {
            out.push((n, v));
        }
    }
    Ok(out)
}

fn text(b: &[u8]) -> Value {
    json!(String::from_utf8_lossy(b))
}

fn bad(_: ()) -> String {
    "the protobuf body could not be decoded".to_string()
}

/// The message inside the `k8s\0` envelope's `runtime.Unknown`.
fn unwrap(body: &[u8]) -> Result<&[u8], String> {
    let inner = body
        .strip_prefix(MAGIC)
        .ok_or("a protobuf body must start with the k8s magic number")?;
    Ok(fields(inner)
        .map_err(bad)?
        .into_iter()
        .find_map(|(n, f)| match (n, f) {
            (2, Field::Bytes(b)) => Some(b),
            _ => None,
        })
        .unwrap_or_default())
}

/// The one length-delimited field `n` of a message.
fn sub(buf: &[u8], n: u64) -> Result<&[u8], String> {
    Ok(fields(buf)
        .map_err(bad)?
        .into_iter()
        .find_map(|(m, f)| match (m, f) {
            (m, Field::Bytes(b)) if m == n => Some(b),
            _ => None,
        })
        .unwrap_or_default())
}

/// A protobuf SelfSubjectAccessReview as its JSON form.
pub(crate) fn access_review(body: &[u8]) -> Result<Value, String> {
    let attrs = sub(sub(unwrap(body)?, 2)?, 1)?;
    let names = [
        "namespace",
        "verb",
        "group",
        "version",
        "resource",
        "subresource",
        "name",
    ];
    let mut out = Map::new();
    for (n, f) in fields(attrs).map_err(bad)? {
        if let (Some(name), Field::Bytes(s)) = (names.get((n as usize).wrapping_sub(1)), f) {
            out.insert((*name).to_string(), text(s));
        }
    }
    Ok(json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": {},
        "spec": {"resourceAttributes": Value::Object(out)},
    }))
}

/// A protobuf `DeleteOptions` as the JSON one reads (`DeleteOptions::from_json`).
pub(crate) fn delete_options(body: &[u8]) -> Result<Value, String> {
    let raw = unwrap(body)?;
    let mut out = Map::new();
    let mut dry_run = Vec::new();
    for (n, f) in fields(raw).map_err(bad)? {
        match (n, f) {
            #[allow(clippy::cast_possible_wrap)]
            (1, Field::Varint(v)) => {
                out.insert("gracePeriodSeconds".into(), json!(v as i64));
            }
            (2, Field::Bytes(b)) => {
                let mut pre = Map::new();
                for (m, g) in fields(b).map_err(bad)? {
                    match (m, g) {
                        (1, Field::Bytes(s)) => pre.insert("uid".into(), text(s)),
                        (2, Field::Bytes(s)) => pre.insert("resourceVersion".into(), text(s)),
                        _ => None,
                    };
                }
                out.insert("preconditions".into(), Value::Object(pre));
            }
            (4, Field::Bytes(s)) => {
                out.insert("propagationPolicy".into(), text(s));
            }
            (5, Field::Bytes(s)) => dry_run.push(text(s)),
            _ => {}
        }
    }
    if !dry_run.is_empty() {
        out.insert("dryRun".into(), Value::Array(dry_run));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn bytes(field: u64, b: &[u8], out: &mut Vec<u8>) {
        varint(field << 3 | 2, out);
        varint(b.len() as u64, out);
        out.extend_from_slice(b);
    }

    #[test]
    fn delete_options_decode_as_their_json() {
        let mut pre = Vec::new();
        bytes(1, b"uid-1", &mut pre);
        let mut raw = Vec::new();
        varint(1 << 3, &mut raw);
        varint(7, &mut raw);
        bytes(2, &pre, &mut raw);
        bytes(5, b"All", &mut raw);
        let mut type_meta = Vec::new();
        bytes(1, b"v1", &mut type_meta);
        bytes(2, b"DeleteOptions", &mut type_meta);
        let mut body = MAGIC.to_vec();
        bytes(1, &type_meta, &mut body);
        bytes(2, &raw, &mut body);
        bytes(4, CONTENT_TYPE.as_bytes(), &mut body);
        assert_eq!(
            delete_options(&body).unwrap(),
            json!({"gracePeriodSeconds": 7, "preconditions": {"uid": "uid-1"}, "dryRun": ["All"]})
        );
        assert!(delete_options(b"{}").is_err());
        assert!(delete_options(b"k8s\0\x12\x05ab").is_err(), "truncated");
    }
}
