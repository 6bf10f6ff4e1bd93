//! LIST: selectors, `limit` and `continue`, Tables for `kubectl get`, and
//! large answers serialised outside the store's lock.

use std::sync::Arc;

use serde_json::{Value, json};

use super::select::{selected, wants_table};
use crate::api_error::ApiError;
use crate::apiserver::query::ListOptions;
use crate::apiserver::reply::{Reply, ok};
use crate::apiserver::request::Request;
use crate::apiserver::{meta, table};
use crate::objects::leases;
use crate::resources::Resource;
use crate::shared::Shared;
use crate::store::Key;
use crate::stored::Stored;

/// Continue tokens carry the last key returned, hex-encoded JSON.
fn encode_continue(key: &Key) -> String {
    use std::fmt::Write;
    json!([key.0, key.1])
        .to_string()
        .bytes()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn decode_continue(token: &str) -> Result<Key, ApiError> {
    let bad = || ApiError::bad_request("continue key is not valid");
    if !token.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes: Result<Vec<u8>, _> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(token.get(i..i + 2).unwrap_or("zz"), 16))
        .collect();
    let v: Vec<String> = serde_json::from_slice(&bytes.map_err(|_| bad())?).map_err(|_| bad())?;
    match v.as_slice() {
        [ns, name] => Ok((ns.clone(), name.clone())),
        _ => Err(bad()),
    }
}

/// A listed object: as stored (its JSON goes out as it is), or as read.
enum Item {
    Stored(Stored),
    Parsed(Arc<Value>),
}

impl Item {
    fn value(&self) -> Arc<Value> {
        match self {
            Item::Stored(d) => d.value(),
            Item::Parsed(v) => v.clone(),
        }
    }
}

/// One page of a list, read under one hold of the store's lock.
struct Page {
    items: Vec<Item>,
    /// The last key of a page that has more after it.
    next: Option<Key>,
    /// How many objects are left after this page, when nothing is filtered.
    remaining: Option<usize>,
    resource_version: u64,
}

pub(in crate::apiserver) fn list(
    shared: &Arc<Shared>,
    req: &Request<'_>,
    opts: &ListOptions,
) -> Result<Reply, ApiError> {
    let t = &req.target;
    let page = read_page(shared, t.resource, t.namespace.as_deref(), opts)?;
    let mut meta = json!({"resourceVersion": page.resource_version.to_string()});
    if let Some(k) = &page.next {
        meta["continue"] = json!(encode_continue(k));
        if let Some(remaining) = page.remaining {
            meta["remainingItemCount"] = json!(remaining);
        }
    }
    if wants_table(req.accept) {
        let parsed: Vec<Arc<Value>> = page.items.iter().map(Item::value).collect();
        return Ok(ok(table::table(
            t.resource,
            &parsed,
            &meta,
            opts.include_object,
        )));
    }
    serialise(t.resource, &page.items, &meta, meta::wanted(req.accept))
}

fn read_page(
    shared: &Shared,
    res: Resource,
    ns: Option<&str>,
    opts: &ListOptions,
) -> Result<Page, ApiError> {
    let after = opts
        .continue_token
        .as_deref()
        .map(decode_continue)
        .transpose()?;
    let limit = opts.limit.unwrap_or(usize::MAX);
    let store = shared.store();
    // `Exact`: only the state at that version, which the sandbox keeps
    // only while it is the current one (older is 410, as past the
    // apiserver's watch cache window).
    if opts.resource_version_match.as_deref() == Some("Exact")
        && let Some(asked) = opts.resource_version.as_deref()
        && asked != store.resource_version().to_string()
    {
        return Err(ApiError::new(
            410,
            "Expired",
            format!(
                "too old resource version: {asked} ({})",
                store.resource_version()
            ),
        ));
    }
    let mut items: Vec<Stored> = Vec::new();
    let mut next = None;
    let mut more = false;
    for (k, d) in selected(&store, res, ns, opts, after.as_ref()) {
        if items.len() == limit {
            more = true;
            break;
        }
        items.push(d.clone());
        if items.len() == limit {
            next = Some(k);
        }
    }
    // Counted only when nothing is filtered, as the apiserver does
    // (ListMeta.remainingItemCount in apimachinery's
    // pkg/apis/meta/v1/types.go: "If the list request contained label or
    // field selectors, then the number of remaining items is unknown
    // and the field will be left unset and omitted"); counting the rest
    // of 150,000 pods for each page of 500 made paging quadratic.
    let remaining =
        (more && opts.selects_everything()).then(|| store.docs(res, ns, next.as_ref()).count());
    // Heartbeat leases read as renewed (crate::objects::leases).
    let items: Vec<Item> = items
        .into_iter()
        .map(|d| {
            if res == Resource::Leases {
                Item::Parsed(leases::as_read(res, d.value(), |n| store.node(n)))
            } else {
                Item::Stored(d)
            }
        })
        .collect();
    Ok(Page {
        items,
        next: next.filter(|_| more),
        remaining,
        resource_version: store.resource_version(),
    })
}

/// The list's JSON, written outside the lock: a list of thousands of pods
/// is the largest answer the sandbox gives.
fn serialise(
    res: Resource,
    items: &[Item],
    list_meta: &Value,
    metadata_only: bool,
) -> Result<Reply, ApiError> {
    let (kind, api_version) = if metadata_only {
        ("PartialObjectMetadata", meta::API_VERSION.to_string())
    } else {
        (res.info().kind, res.api_version())
    };
    let mut out = Vec::with_capacity(items.len() * 1024 + 256);
    out.extend_from_slice(
        format!("{{\"kind\":\"{kind}List\",\"apiVersion\":\"{api_version}\",\"metadata\":{list_meta},\"items\":[")
            .as_bytes(),
    );
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let written = match item {
            _ if metadata_only => serde_json::to_writer(&mut out, &meta::partial(&item.value())),
            Item::Stored(d) => {
                out.extend_from_slice(&d.json());
                Ok(())
            }
            Item::Parsed(v) => serde_json::to_writer(&mut out, &**v),
        };
        written.map_err(|e| ApiError::new(500, "InternalError", e.to_string()))?;
    }
    out.extend_from_slice(b"]}");
    Ok(Reply::Raw {
        status: 200,
        body: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let k = ("ns".to_string(), "pod-7".to_string());
        assert_eq!(decode_continue(&encode_continue(&k)).unwrap(), k);
        assert!(decode_continue("zz").is_err());
    }
}
