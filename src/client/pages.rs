//! A list read page by page: each page asked with the last one's
//! `continue` token until one comes without, as kubectl's `--chunk-size`
//! lists do.

use std::future::Future;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::ListParams;

/// Every item of the list `params` asks for, `fetch` asking for each page
/// (and keeping of its items what it wants), with the last page's metadata.
pub(crate) async fn all_pages<T, F, Fut>(
    mut params: ListParams,
    mut fetch: F,
) -> Result<(Vec<T>, ListMeta), kube::Error>
where
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, ListMeta), kube::Error>>,
{
    let mut items = Vec::new();
    loop {
        let (page, meta) = fetch(params.clone()).await?;
        items.extend(page);
        match meta.continue_.as_deref().filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(token),
            None => return Ok((items, meta)),
        }
    }
}
