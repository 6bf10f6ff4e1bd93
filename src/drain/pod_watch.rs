//! The pods on one node: listed once, page by page (the snapshot every
//! decision is made from), then followed by one field-selected watch that
//! resumes from that list's resourceVersion. The drain learns that a pod
//! went from the watch, not from a GET per pod per second as kubectl does,
//! and lists again only when the watch history expired (410 Gone). kubectl
//! drain needs no permission to watch pods: where watching is forbidden,
//! the node's pods are listed once a second instead (kubectl's interval),
//! one request per node rather than one per pod.
//!
//! One watch per node, not one for the run: a watch of every pod would
//! carry every replacement's creation, scheduling and start on the other
//! nodes too, more events than the evicted pods' own (a field selector
//! takes one node, never a set). The other kinds a drain follows are one
//! watch per run, shared by every node of a pool and of a roll: budgets
//! (`budgets::watch`) and VolumeAttachments (`detach`).

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::Api;
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::core::PartialObjectMeta;

use super::machine::Change;
use crate::vocabulary::pod_key::{PodKey, uid};
use crate::vocabulary::warning::Warning;

/// What selects a node's pods, as `kubectl drain` lists them.
#[derive(Debug, Clone)]
pub(crate) struct PodQuery {
    pub(crate) node: String,
    pub(crate) pod_selector: Option<String>,
    /// `--chunk-size`: pods per page; 0 for one page.
    pub(crate) chunk_size: u32,
}

impl PodQuery {
    fn list_params(&self) -> ListParams {
        let mut params = ListParams::default().fields(&format!("spec.nodeName={}", self.node));
        if let Some(sel) = self.pod_selector.as_deref().filter(|s| !s.is_empty()) {
            params = params.labels(sel);
        }
        if self.chunk_size > 0 {
            params = params.limit(self.chunk_size);
        }
        params
    }

    fn watch_params(&self) -> WatchParams {
        let mut params = WatchParams::default()
            .fields(&format!("spec.nodeName={}", self.node))
            .timeout(290);
        if let Some(sel) = self.pod_selector.as_deref().filter(|s| !s.is_empty()) {
            params = params.labels(sel);
        }
        params
    }
}

/// The node's pods at one resourceVersion.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) pods: Vec<Pod>,
    pub(crate) resource_version: String,
}

/// How often the node's pods are listed when they may not be watched.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Lists the node's pods, following `continue` tokens.
pub(crate) async fn list(api: &Api<Pod>, query: &PodQuery) -> Result<Snapshot, kube::Error> {
    list_pages(query, |params| async move {
        let page = api.list(&params).await?;
        Ok((page.items, page.metadata))
    })
    .await
}

/// Lists the node's pods' metadata alone (no spec, no status).
async fn list_metadata(api: &Api<Pod>, query: &PodQuery) -> Result<Snapshot, kube::Error> {
    list_pages(query, |params| async move {
        let page = api.list_metadata(&params).await?;
        let pods = page
            .items
            .into_iter()
            .map(|p| Pod {
                metadata: p.metadata,
                ..Pod::default()
            })
            .collect();
        Ok((pods, page.metadata))
    })
    .await
}

async fn list_pages<F, Fut>(query: &PodQuery, fetch: F) -> Result<Snapshot, kube::Error>
where
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<(Vec<Pod>, ListMeta), kube::Error>>,
{
    let (pods, last) = crate::client::pages::all_pages(query.list_params(), fetch).await?;
    Ok(Snapshot {
        pods,
        resource_version: last.resource_version.unwrap_or_default(),
    })
}

/// A metadata-only event as a pod with metadata alone (no spec, no status).
fn metadata_event(e: WatchEvent<PartialObjectMeta<Pod>>) -> WatchEvent<Pod> {
    let pod = |p: PartialObjectMeta<Pod>| Pod {
        metadata: p.metadata,
        ..Pod::default()
    };
    match e {
        WatchEvent::Added(p) => WatchEvent::Added(pod(p)),
        WatchEvent::Modified(p) => WatchEvent::Modified(pod(p)),
        WatchEvent::Deleted(p) => WatchEvent::Deleted(pod(p)),
        WatchEvent::Bookmark(b) => WatchEvent::Bookmark(b),
        WatchEvent::Error(e) => WatchEvent::Error(e),
    }
}

type Events = BoxStream<'static, Result<WatchEvent<Pod>, kube::Error>>;

pub(crate) struct PodWatch {
    api: Api<Pod>,
    query: PodQuery,
    /// Watch the pods' metadata only (uid, deletion, finalizers): what a
    /// drain reads unless it waits for pods to complete, which needs
    /// `status.phase`.
    metadata_only: bool,
    resource_version: String,
    /// The uid last seen under each key, to tell what a relist dropped.
    known: HashMap<PodKey, String>,
    /// The resourceVersion last seen under each key, so that a relist
    /// reports only what changed.
    versions: HashMap<PodKey, String>,
    /// Watching is forbidden: list every `POLL_INTERVAL` instead.
    polling: bool,
    pending: VecDeque<Change>,
    stream: Option<Events>,
    /// The watch history expired: list before watching again.
    relist: bool,
    failures: u32,
}

impl PodWatch {
    /// Follows the node's pods from a snapshot: `known` pods (and their
    /// uids) as of `resource_version`.
    pub(crate) fn resume(
        api: Api<Pod>,
        query: PodQuery,
        resource_version: String,
        known: Vec<(PodKey, String)>,
        metadata_only: bool,
    ) -> Self {
        PodWatch {
            api,
            query,
            metadata_only,
            resource_version,
            known: known.into_iter().collect(),
            versions: HashMap::new(),
            polling: false,
            pending: VecDeque::new(),
            stream: None,
            relist: false,
            failures: 0,
        }
    }

    /// The next change. The watch never ends by itself: a stream the server
    /// closed is resumed, an expired one is listed again, and a failure is
    /// returned as `Change::Error` and retried with backoff. Not
    /// cancel-safe: a watch request dropped halfway is started again, so
    /// poll it from a stream (the driver does), not from a `select!` arm.
    pub(crate) async fn next(&mut self) -> Change {
        loop {
            if let Some(c) = self.pending.pop_front() {
                return c;
            }
            if self.failures > 0 {
                let backoff = Duration::from_millis(200 * (1 << self.failures.min(5)));
                tokio::time::sleep(backoff.min(Duration::from_secs(5))).await;
            }
            if self.polling {
                tokio::time::sleep(POLL_INTERVAL).await;
                self.relist().await;
                continue;
            }
            if self.relist {
                self.relist().await;
                continue;
            }
            let stream = match &mut self.stream {
                Some(s) => s,
                None => match self.start().await {
                    Ok(s) => self.stream.insert(s),
                    Err(kube::Error::Api(s)) if s.code == 403 => {
                        self.polling = true;
                        return Change::Polling(Warning::PodsPolled {
                            error: s.message,
                            every: POLL_INTERVAL,
                        });
                    }
                    Err(e) => return self.failed(&e),
                },
            };
            match stream.try_next().await {
                // The server closed the stream (its timeout): resume.
                Ok(None) => self.stream = None,
                Ok(Some(event)) => {
                    self.failures = 0;
                    self.apply(event);
                }
                Err(e) => {
                    self.stream = None;
                    return self.failed(&e);
                }
            }
        }
    }

    fn start(&self) -> impl Future<Output = Result<Events, kube::Error>> + Send + use<> {
        let (api, params) = (self.api.clone(), self.query.watch_params());
        let (rv, metadata_only) = (self.resource_version.clone(), self.metadata_only);
        async move {
            Ok(if metadata_only {
                let events = api.watch_metadata(&params, &rv).await?;
                events.map_ok(metadata_event).boxed()
            } else {
                api.watch(&params, &rv).await?.boxed()
            })
        }
    }

    fn failed(&mut self, e: &kube::Error) -> Change {
        self.failures += 1;
        // In kubectl's words (a 401 says to log in), never kube's debug
        // structure of the Status.
        Change::Error(format!(
            "watching pods on {}: {}",
            self.query.node,
            crate::vocabulary::api_words::words(e)
        ))
    }

    fn apply(&mut self, event: WatchEvent<Pod>) {
        match event {
            WatchEvent::Added(p) | WatchEvent::Modified(p) => {
                self.note_version(&p);
                self.upsert(p);
            }
            WatchEvent::Deleted(p) => {
                self.note_version(&p);
                let key = PodKey::of(&p);
                if self.known.get(&key).map(String::as_str) == Some(uid(&p)) {
                    self.known.remove(&key);
                    self.versions.remove(&key);
                }
                self.pending.push_back(Change::Gone {
                    key,
                    uid: uid(&p).to_string(),
                });
            }
            WatchEvent::Bookmark(b) => self.resource_version = b.metadata.resource_version,
            WatchEvent::Error(e) if e.code == 410 => {
                self.stream = None;
                self.relist = true;
            }
            WatchEvent::Error(e) => {
                self.stream = None;
                self.failures += 1;
                self.pending.push_back(Change::Error(format!(
                    "watching pods on {}: {}",
                    self.query.node, e.message
                )));
            }
        }
    }

    fn note_version(&mut self, p: &Pod) {
        if let Some(rv) = &p.metadata.resource_version {
            self.resource_version.clone_from(rv);
        }
    }

    fn upsert(&mut self, p: Pod) {
        let key = PodKey::of(&p);
        let version = p.metadata.resource_version.clone().unwrap_or_default();
        if self.versions.get(&key) == Some(&version) {
            return;
        }
        self.versions.insert(key.clone(), version);
        let new_uid = uid(&p).to_string();
        if let Some(old) = self.known.insert(key.clone(), new_uid.clone())
            && old != new_uid
        {
            // Same name, new pod: the old one is gone.
            self.pending.push_back(Change::Gone { key, uid: old });
        }
        self.pending.push_back(Change::Upsert(Box::new(p)));
    }

    /// The history no longer reaches back to our version (or watching is
    /// forbidden): list again and report what changed and what is gone.
    async fn relist(&mut self) {
        let listed = if self.metadata_only {
            list_metadata(&self.api, &self.query).await
        } else {
            list(&self.api, &self.query).await
        };
        match listed {
            Ok(snapshot) => {
                self.relist = false;
                let seen: HashMap<PodKey, String> = snapshot
                    .pods
                    .iter()
                    .map(|p| (PodKey::of(p), uid(p).to_string()))
                    .collect();
                let dropped: Vec<(PodKey, String)> = self
                    .known
                    .iter()
                    .filter(|(k, u)| seen.get(*k) != Some(*u))
                    .map(|(k, u)| (k.clone(), u.clone()))
                    .collect();
                for (key, uid) in dropped {
                    self.known.remove(&key);
                    self.versions.remove(&key);
                    self.pending.push_back(Change::Gone { key, uid });
                }
                self.resource_version = snapshot.resource_version;
                for p in snapshot.pods {
                    self.upsert(p);
                }
            }
            Err(e) => {
                let change = self.failed(&e);
                self.pending.push_back(change);
            }
        }
    }
}
