//! Writes whose answers the drain does not read, asked to answer with the
//! written object's metadata alone (`Accept: ...;as=PartialObjectMetadata`):
//! a Node's status patch would otherwise send back the whole Node (its
//! status, images and managedFields), an Event's create the whole Event.
//! kube-apiserver shapes every write's answer as it shapes a read's
//! (k8s.io/apiserver `endpoints/handlers/{create,patch}.go` end in
//! `transformResponseObject`, `response.go`). kube's `Api::patch_metadata`
//! does this for a plain patch; these are the subresource patch and the
//! create it lacks.

use std::fmt::Debug;

use kube::api::{Patch, PatchParams, PostParams};
use kube::core::{PartialObjectMeta, Request};
use kube::{Client, Resource};
use serde::Serialize;

const METADATA: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

fn metadata_answer(mut req: http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    req.headers_mut().insert(
        http::header::ACCEPT,
        http::HeaderValue::from_static(METADATA),
    );
    req
}

fn request<K>(namespace: Option<&str>) -> Request
where
    K: Resource<DynamicType = ()>,
{
    Request::new(K::url_path(&(), namespace))
}

/// Patches an object's `status`; the answer is its metadata.
pub(crate) async fn patch_status<K, P>(
    client: &Client,
    name: &str,
    params: &PatchParams,
    patch: &Patch<P>,
) -> Result<(), kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + Debug + serde::de::DeserializeOwned,
    P: Serialize + Debug,
{
    let req = request::<K>(None)
        .patch_subresource("status", name, params, patch)
        .map_err(kube::Error::BuildRequest)?;
    client
        .request::<PartialObjectMeta<K>>(metadata_answer(req))
        .await
        .map(drop)
}

/// Creates an object in `namespace`; the answer is its metadata.
pub(crate) async fn create<K>(
    client: &Client,
    namespace: &str,
    params: &PostParams,
    object: &K,
) -> Result<(), kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + serde::de::DeserializeOwned,
{
    let body = serde_json::to_vec(object).map_err(kube::Error::SerdeError)?;
    let req = request::<K>(Some(namespace))
        .create(params, body)
        .map_err(kube::Error::BuildRequest)?;
    client
        .request::<PartialObjectMeta<K>>(metadata_answer(req))
        .await
        .map(drop)
}
