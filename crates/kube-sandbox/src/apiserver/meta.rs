//! Metadata-only answers: a client that sends
//! `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`
//! (kube's `Api::watch_metadata`, client-go's metadata informers) gets each
//! object as its `metadata` alone, and lists as `PartialObjectMetadataList`
//! (apiserver endpoints/handlers/response.go, `asPartialObjectMetadata`).

use serde_json::{Value, json};

pub(crate) const API_VERSION: &str = "meta.k8s.io/v1";

/// Does the client ask for metadata only?
pub(crate) fn wanted(accept: &str) -> bool {
    accept.contains("as=PartialObjectMetadata")
}

/// An object as its metadata.
pub(crate) fn partial(object: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": API_VERSION,
        "metadata": object["metadata"],
    })
}
