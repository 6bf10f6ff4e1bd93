//! A read-only copy of what a drain depends on: every kind the sandbox
//! serves, listed page by page (GET only) from the live cluster, as the
//! objects a dump (`kubectl get ... -o yaml`) would hold. Events and leases
//! are not copied (nothing a drain decides reads them); a kind the cluster
//! does not serve (KubeVirt's VMIs without KubeVirt) is simply absent.
//! Each page is handed to the copy as it is read, so the objects are never
//! all held as parsed trees at once (150,000 pods would be gigabytes);
//! workloads come before pods, so a pod's Deployment is known when it
//! arrives.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};

use anyhow::Context;
use kube::api::{ApiResource, ListParams};
use kube_sandbox::resources::Resource;
use serde_json::{Value, json};

/// A page of objects, or the end of a reading that failed.
pub(crate) type Page = Result<Vec<(Resource, Value)>, ()>;

/// The objects as the pages bring them; stops at a failed reading, and
/// `failed` then says so.
pub(crate) fn objects(
    pages: Receiver<Page>,
    failed: Arc<AtomicBool>,
) -> impl Iterator<Item = (Resource, Value)> {
    pages
        .into_iter()
        .map_while(move |p| {
            if p.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            p.ok()
        })
        .flatten()
}

/// Every object the copy needs, with its kind, page by page into `pages`
/// (each passed through `each_page` first); a failure is sent as `Err`.
pub(crate) async fn read(
    client: &kube::Client,
    pages: &SyncSender<Page>,
    mut each_page: impl FnMut(&mut [(Resource, Value)]),
) -> anyhow::Result<()> {
    let result = read_pages(client, pages, &mut each_page).await;
    if result.is_err() {
        let _ = pages.send(Err(()));
    }
    result
}

async fn read_pages(
    client: &kube::Client,
    pages: &SyncSender<Page>,
    each_page: &mut impl FnMut(&mut [(Resource, Value)]),
) -> anyhow::Result<()> {
    let workloads_first = Resource::ALL
        .iter()
        .filter(|r| **r != Resource::Pods)
        .chain(std::iter::once(&Resource::Pods))
        .copied();
    for res in workloads_first {
        if !res.drain_reads() {
            continue;
        }
        let i = res.info();
        let api_resource = ApiResource {
            group: i.group.into(),
            version: i.version.into(),
            api_version: res.api_version(),
            kind: i.kind.into(),
            plural: i.plural.into(),
        };
        // Each page read straight into JSON trees: through `DynamicObject`
        // every object was parsed twice. The next page is asked for as soon
        // as this one's continue token is known, so the cluster answers it
        // while this one is parsed and the copy loads the one before.
        let path = url_path(&api_resource);
        let ask =
            |params: &ListParams| tokio::spawn(fetch(client.clone(), path.clone(), params.clone()));
        let mut params = ListParams::default().limit(500);
        let mut asked = Some(ask(&params));
        while let Some(answer) = asked.take() {
            let text = match answer.await.context("reading the cluster")? {
                Ok(text) => text,
                Err(kube::Error::Api(e)) if e.code == 404 => break,
                Err(e) => return Err(e).with_context(|| format!("list {}", i.plural)),
            };
            if let Some(token) =
                continue_token(&text).with_context(|| format!("list {}", i.plural))?
            {
                params = params.continue_token(&token);
                asked = Some(ask(&params));
            }
            let page: Listed =
                serde_json::from_str(&text).with_context(|| format!("list {}", i.plural))?;
            drop(text);
            let mut out = Vec::with_capacity(page.items.len());
            for mut obj in page.items {
                obj["apiVersion"] = json!(res.api_version());
                obj["kind"] = json!(i.kind);
                out.push((res, obj));
            }
            each_page(&mut out);
            // The copy loads on its own thread; waiting for it here is
            // what keeps the pages from piling up.
            let sent = tokio::task::block_in_place(|| pages.send(Ok(out)));
            anyhow::ensure!(sent.is_ok(), "the copy stopped loading");
        }
    }
    Ok(())
}

/// One page of a list, as text.
async fn fetch(
    client: kube::Client,
    path: String,
    params: ListParams,
) -> Result<String, kube::Error> {
    let request = kube::core::Request::new(&path)
        .list(&params)
        .map_err(kube::Error::BuildRequest)?;
    client.request_text(request).await
}

/// A list page's items.
#[derive(serde::Deserialize)]
struct Listed {
    #[serde(default)]
    items: Vec<Value>,
}

/// A list page's continue token, read without building its items. The
/// reading stops at the list's `metadata` (which the API server writes
/// before `items`): scanning the rest of a 500-pod page only to skip it
/// took a twentieth of the reader's time.
fn continue_token(text: &str) -> serde_json::Result<Option<String>> {
    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
    #[derive(serde::Deserialize, Default)]
    struct Meta {
        #[serde(rename = "continue", default)]
        token: Option<String>,
    }
    /// Where the metadata goes once read; the reading then ends with
    /// `STOP`, the one error that is not one.
    struct Head<'a>(&'a mut Option<Meta>);
    const STOP: &str = "the list's metadata is read";
    impl<'de> DeserializeSeed<'de> for Head<'_> {
        type Value = ();
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Head<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "metadata" {
                    *self.0 = Some(map.next_value()?);
                    return Err(de::Error::custom(STOP));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut meta = None;
    let read = Head(&mut meta).deserialize(&mut serde_json::Deserializer::from_str(text));
    match meta {
        Some(m) => Ok(m.token.filter(|t| !t.is_empty())),
        None => read.map(|()| None),
    }
}

/// Where a kind is listed across all namespaces.
fn url_path(r: &ApiResource) -> String {
    if r.group.is_empty() {
        format!("/api/{}/{}", r.version, r.plural)
    } else {
        format!("/apis/{}/{}/{}", r.group, r.version, r.plural)
    }
}

#[cfg(test)]
mod tests {
    use super::continue_token;

    #[test]
    fn the_continue_token_is_read_wherever_the_metadata_stands() {
        let first = r#"{"kind":"PodList","metadata":{"resourceVersion":"7","continue":"abc"},"items":[{"a":1}]}"#;
        assert_eq!(continue_token(first).unwrap().as_deref(), Some("abc"));
        let last =
            r#"{"items":[{"metadata":{"continue":"not this"}}],"metadata":{"continue":"xyz"}}"#;
        assert_eq!(continue_token(last).unwrap().as_deref(), Some("xyz"));
        // Once the metadata is read, what follows is left to the page's own parse.
        assert_eq!(
            continue_token(r#"{"metadata":{"continue":"t"},"items":[{"#)
                .unwrap()
                .as_deref(),
            Some("t")
        );
    }

    #[test]
    fn a_last_page_has_no_token_and_a_broken_one_is_an_error() {
        for last in [
            r#"{"metadata":{"resourceVersion":"7"},"items":[]}"#,
            r#"{"metadata":{"continue":""},"items":[]}"#,
            r#"{"items":[]}"#,
        ] {
            assert_eq!(continue_token(last).unwrap(), None, "{last}");
        }
        for broken in [r#"{"items":[{"#, r#"{"metadata":{"continue":5}}"#, "[]", ""] {
            assert!(continue_token(broken).is_err(), "{broken}");
        }
    }
}
