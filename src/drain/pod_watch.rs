//! One field-selected pod watch per node: the drain learns that a pod went
//! from the watch, not from a GET per pod per second as kubectl does. The
//! kube watcher lists, watches, and lists again after a 410.

use std::collections::HashMap;

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::runtime::{WatchStreamExt, watcher};

/// `namespace/name`.
pub fn pod_key(p: &Pod) -> String {
    format!(
        "{}/{}",
        p.metadata.namespace.as_deref().unwrap_or_default(),
        p.metadata.name.as_deref().unwrap_or_default()
    )
}

pub fn uid(p: &Pod) -> &str {
    p.metadata.uid.as_deref().unwrap_or_default()
}

/// A change to the set of pods on the node.
#[derive(Debug)]
pub enum Change {
    /// A pod appeared or changed.
    Upsert(Box<Pod>),
    /// A pod (this uid) is gone.
    Gone { key: String, uid: String },
    /// The watch failed; the watcher retries with backoff.
    Error(String),
}

pub struct PodWatch {
    stream: BoxStream<'static, Result<watcher::Event<Pod>, watcher::Error>>,
    /// The last state seen, to tell what a relist dropped.
    known: HashMap<String, String>,
    relist: Option<HashMap<String, String>>,
    pending: std::collections::VecDeque<Change>,
}

impl PodWatch {
    pub fn start(
        client: kube::Client,
        node: &str,
        pod_selector: Option<&str>,
        page_size: u32,
    ) -> Self {
        let api: Api<Pod> = Api::all(client);
        let mut config = watcher::Config::default().fields(&format!("spec.nodeName={node}"));
        if let Some(sel) = pod_selector.filter(|s| !s.is_empty()) {
            config = config.labels(sel);
        }
        if page_size > 0 {
            config = config.page_size(page_size);
        }
        let stream = watcher(api, config).default_backoff().boxed();
        PodWatch {
            stream,
            known: HashMap::new(),
            relist: None,
            pending: std::collections::VecDeque::new(),
        }
    }

    /// The next change; `None` only if the stream ends (it does not).
    pub async fn next(&mut self) -> Option<Change> {
        loop {
            if let Some(c) = self.pending.pop_front() {
                return Some(c);
            }
            let event = match self.stream.try_next().await {
                Ok(Some(e)) => e,
                Ok(None) => return None,
                Err(e) => return Some(Change::Error(e.to_string())),
            };
            match event {
                watcher::Event::Init => self.relist = Some(HashMap::new()),
                watcher::Event::InitApply(p) => {
                    if let Some(r) = self.relist.as_mut() {
                        r.insert(pod_key(&p), uid(&p).to_string());
                    }
                    self.upsert(p);
                }
                watcher::Event::InitDone => {
                    let seen = self.relist.take().unwrap_or_default();
                    let dropped: Vec<(String, String)> = self
                        .known
                        .iter()
                        .filter(|(k, u)| seen.get(*k) != Some(*u))
                        .map(|(k, u)| (k.clone(), u.clone()))
                        .collect();
                    for (key, uid) in dropped {
                        if !seen.contains_key(&key) {
                            self.known.remove(&key);
                        }
                        self.pending.push_back(Change::Gone { key, uid });
                    }
                }
                watcher::Event::Apply(p) => self.upsert(p),
                watcher::Event::Delete(p) => {
                    let key = pod_key(&p);
                    if self.known.get(&key).map(String::as_str) == Some(uid(&p)) {
                        self.known.remove(&key);
                    }
                    self.pending.push_back(Change::Gone {
                        key,
                        uid: uid(&p).to_string(),
                    });
                }
            }
        }
    }

    fn upsert(&mut self, p: Pod) {
        let key = pod_key(&p);
        let new_uid = uid(&p).to_string();
        if let Some(old) = self.known.insert(key.clone(), new_uid.clone())
            && old != new_uid
        {
            // Same name, new pod: the old one is gone.
            self.pending.push_back(Change::Gone { key, uid: old });
        }
        self.pending.push_back(Change::Upsert(Box::new(p)));
    }

    /// Waits for the first complete list; returns the pods on the node.
    pub async fn initial(&mut self) -> Result<Vec<Pod>, String> {
        let mut pods = Vec::new();
        loop {
            let event = self.stream.try_next().await.map_err(|e| e.to_string())?;
            match event {
                Some(watcher::Event::Init) | None => {}
                Some(watcher::Event::InitApply(p)) => {
                    self.known.insert(pod_key(&p), uid(&p).to_string());
                    pods.push(p);
                }
                Some(watcher::Event::InitDone) => return Ok(pods),
                Some(watcher::Event::Apply(p)) => self.upsert(p),
                Some(watcher::Event::Delete(p)) => {
                    self.known.remove(&pod_key(&p));
                }
            }
        }
    }
}
