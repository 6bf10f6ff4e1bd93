//! The OpenAPI documents kubectl reads before `apply`, `create` and
//! `explain`: v2 at `/openapi/v2` (protobuf or JSON, by `Accept`) and v3 at
//! `/openapi/v3` (an index of group-versions, each its own document), as
//! kube-apiserver serves them (k8s.io/kube-openapi pkg/handler and
//! pkg/handler3). Generated once per served version from the typed models
//! (schemas) and the resource table (paths).

mod gnostic;
mod paths;
mod schemas;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::resources::Resource;
use schemas::Flavor;

const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// A served document: its content type and bytes.
pub(crate) struct Document {
    pub(crate) content_type: &'static str,
    pub(crate) bytes: Vec<u8>,
}

struct Documents {
    v2_json: Vec<u8>,
    v2_protobuf: Vec<u8>,
    v3_root: Vec<u8>,
    /// By group-version path (`api/v1`, `apis/apps/v1`).
    v3: BTreeMap<String, Vec<u8>>,
}

fn info(minor: &str) -> Value {
    json!({"title": "Kubernetes", "version": format!("v1.{minor}.0")})
}

/// `api/v1` or `apis/apps/v1`.
fn group_version_path(res: Resource) -> String {
    let i = res.info();
    if i.group.is_empty() {
        format!("api/{}", i.version)
    } else {
        format!("apis/{}/{}", i.group, i.version)
    }
}

fn build(minor: &str) -> Documents {
    let all = Resource::ALL;
    let v2 = json!({
        "swagger": "2.0",
        "info": info(minor),
        "paths": paths::paths(&all, Flavor::V2),
        "definitions": definitions(),
    });
    let mut by_gv: BTreeMap<String, Vec<Resource>> = BTreeMap::new();
    for res in all {
        by_gv.entry(group_version_path(res)).or_default().push(res);
    }
    let mut v3 = BTreeMap::new();
    let mut index = serde_json::Map::new();
    for (gv, resources) in by_gv {
        let doc = json!({
            "openapi": "3.0.0",
            "info": info(minor),
            "paths": paths::paths(&resources, Flavor::V3),
            "components": {"schemas": schemas::definitions(&resources, Flavor::V3)},
        });
        let bytes = serde_json::to_vec(&doc).unwrap_or_default();
        let hash = crate::clock::fnv1a(&bytes);
        index.insert(
            gv.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={hash:016X}")}),
        );
        v3.insert(gv, bytes);
    }
    Documents {
        v2_json: serde_json::to_vec(&v2).unwrap_or_default(),
        v2_protobuf: gnostic::encode(&v2),
        v3_root: serde_json::to_vec(&json!({"paths": index})).unwrap_or_default(),
        v3,
    }
}

/// The definitions of every served kind (v2 form: `$ref` with siblings),
/// by name, for checking objects against them.
pub(crate) fn definitions() -> &'static serde_json::Map<String, Value> {
    static DEFS: std::sync::OnceLock<serde_json::Map<String, Value>> = std::sync::OnceLock::new();
    DEFS.get_or_init(|| schemas::definitions(&Resource::ALL, Flavor::V2))
}

/// The definition name of a served kind.
pub(crate) fn definition_name(res: Resource) -> String {
    schemas::definition_name(res)
}

/// The document at `path`, if it is one.
pub(crate) fn document(path: &str, accept: &str, minor: &str) -> Option<Document> {
    static DOCS: Mutex<BTreeMap<String, Arc<Documents>>> = Mutex::new(BTreeMap::new());
    if !path.starts_with("/openapi/") {
        return None;
    }
    let docs = DOCS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(minor.to_string())
        .or_insert_with(|| Arc::new(build(minor)))
        .clone();
    let json = |bytes: &Vec<u8>| Document {
        content_type: "application/json",
        bytes: bytes.clone(),
    };
    match path.trim_end_matches('/') {
        // The apiserver's handler lets net/http sniff the type, which finds
        // binary; clients read the body whatever the header says.
        "/openapi/v2" if accept.contains(PROTOBUF_V2) => Some(Document {
            content_type: "application/octet-stream",
            bytes: docs.v2_protobuf.clone(),
        }),
        "/openapi/v2" => Some(json(&docs.v2_json)),
        "/openapi/v3" => Some(json(&docs.v3_root)),
        p => p
            .strip_prefix("/openapi/v3/")
            .and_then(|gv| docs.v3.get(gv))
            .map(json),
    }
}
