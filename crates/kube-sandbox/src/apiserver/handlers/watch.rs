//! Watch streams: one JSON event per line, from a resourceVersion, with
//! bookmarks, `timeoutSeconds`, and the 410 `Expired` ERROR event when the
//! version asked for is older than the history kept (apiserver cacher.go).

use crate::objects::path::At;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::apiserver::query::ListOptions;
use crate::apiserver::request::Request;
use crate::apiserver::{meta, table};
use crate::resources::Resource;
use crate::shared::Shared;
use crate::store::{EventType, Expired, WatchEvent};

pub(crate) struct WatchRequest {
    pub(crate) resource: Resource,
    pub(crate) namespace: Option<String>,
    pub(crate) options: ListOptions,
    /// `Accept: ...;as=PartialObjectMetadata`: objects as their metadata only.
    pub(crate) metadata_only: bool,
    /// `Accept: ...;as=Table` (`kubectl get -w`): each event's object is a
    /// one-row Table, the first with the column definitions.
    pub(crate) table: bool,
    pub(crate) columns_sent: std::sync::atomic::AtomicBool,
}

impl WatchRequest {
    /// The watch a request asks for; the HTTP side streams it.
    pub(in crate::apiserver) fn of(req: &Request<'_>, options: ListOptions) -> WatchRequest {
        WatchRequest {
            resource: req.target.resource,
            namespace: req.target.namespace.clone(),
            table: super::select::wants_table(req.accept),
            options,
            metadata_only: meta::wanted(req.accept),
            columns_sent: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

/// How long an idle watch waits before it sends a bookmark.
const BOOKMARK_EVERY: Duration = Duration::from_secs(5);
/// The apiserver's default for a watch without `timeoutSeconds` is 30 to 60 minutes.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// A watch event line around an object's stored JSON, which goes out as it is.
fn raw_line(kind: &str, json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 32);
    out.extend_from_slice(format!("{{\"type\":\"{kind}\",\"object\":").as_bytes());
    out.extend_from_slice(json);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

fn line(kind: &str, object: &Value) -> Bytes {
    let mut out = serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    out.push(b'\n');
    Bytes::from(out)
}

fn expired_event(requested: u64, oldest: u64) -> Bytes {
    line(
        "ERROR",
        &json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": format!("too old resource version: {requested} ({oldest})"),
            "reason": "Expired",
            "code": 410,
        }),
    )
}

impl WatchRequest {
    fn in_scope(&self, obj: &Value) -> bool {
        let ns_ok = self
            .namespace
            .as_deref()
            .is_none_or(|ns| obj.at("/metadata/namespace").and_then(Value::as_str) == Some(ns));
        ns_ok && self.options.matches(self.resource, obj)
    }

    /// The event type a client of this watch sees for a change, if any: an
    /// object that leaves the selection is DELETED, one that enters is ADDED.
    /// A watch that selects everything parses nothing to decide.
    fn translate(&self, e: &WatchEvent) -> Option<&'static str> {
        let everything = self.namespace.is_none() && self.options.selects_everything();
        // A pod's facts decide a watch by node or labels without parsing it.
        let by_facts = |facts: Option<&crate::objects::pods::Facts>| {
            let f = facts?;
            let ns_ok = self
                .namespace
                .as_deref()
                .is_none_or(|ns| *f.namespace == *ns);
            Some(ns_ok && self.options.matches_facts(f)?)
        };
        let now = everything || by_facts(e.facts()).unwrap_or_else(|| self.in_scope(&e.object()));
        match e.kind {
            EventType::Added | EventType::Deleted => now.then(|| e.kind.as_str()),
            EventType::Modified => {
                let before = everything
                    || by_facts(e.old_facts())
                        .unwrap_or_else(|| e.old().is_some_and(|o| self.in_scope(&o)));
                match (before, now) {
                    (true, true) => Some("MODIFIED"),
                    (false, true) => Some("ADDED"),
                    (true, false) => Some("DELETED"),
                    (false, false) => None,
                }
            }
        }
    }

    /// A change's line: the stored JSON as it is, unless a Table or
    /// metadata is wanted.
    fn change(&self, kind: &str, e: &WatchEvent) -> Bytes {
        if self.table || self.metadata_only {
            self.event(kind, &e.object())
        } else {
            raw_line(kind, &e.object_json())
        }
    }

    /// The bookmark that ends a watch-list's initial events
    /// (`k8s.io/initial-events-end`), which informers wait for.
    fn initial_events_end(&self, rv: u64) -> Bytes {
        let mut b: Value = serde_json::from_slice(&self.bookmark(rv)).unwrap_or_default();
        b["object"]["metadata"]["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        let mut out = serde_json::to_vec(&b).unwrap_or_default();
        out.push(b'\n');
        Bytes::from(out)
    }

    fn bookmark(&self, rv: u64) -> Bytes {
        let info = self.resource.info();
        let (kind, api_version) = if self.metadata_only {
            ("PartialObjectMetadata", meta::API_VERSION.to_string())
        } else {
            (info.kind, self.resource.api_version())
        };
        line(
            "BOOKMARK",
            &json!({
                "kind": kind,
                "apiVersion": api_version,
                "metadata": {"resourceVersion": rv.to_string()},
            }),
        )
    }

    fn event(&self, kind: &str, object: &Arc<Value>) -> Bytes {
        if self.table {
            let meta = json!({"resourceVersion": object["metadata"]["resourceVersion"]});
            let rows = std::slice::from_ref(object);
            let include = self.options.include_object;
            let t = if self
                .columns_sent
                .swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                table::rows_only(self.resource, rows, &meta, include)
            } else {
                table::table(self.resource, rows, &meta, include)
            };
            return line(kind, &t);
        }
        if self.metadata_only {
            line(kind, &meta::partial(object))
        } else {
            line(kind, object)
        }
    }

    /// A pod watch of one node (`spec.nodeName=X`): woken and fed by that
    /// node's changes only (store/node_triggers.rs).
    fn node_trigger(&self) -> Option<&str> {
        (self.resource == Resource::Pods)
            .then(|| self.options.node_name())
            .flatten()
    }

    /// Streams events into `tx` until the timeout, a fault cut, a 410, or the
    /// client going away.
    pub(crate) async fn run(self, shared: Arc<Shared>, tx: mpsc::Sender<Bytes>) {
        let timeout = self
            .options
            .timeout_seconds
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
        let deadline = tokio::time::Instant::now() + timeout;
        let mut changes = match self.node_trigger() {
            Some(node) => shared.store().subscribe_node(node),
            None => shared.store().subscribe(),
        };
        let mut stream = Stream {
            tx,
            sent: 0,
            cut_after: shared.faults().watch_cut_after,
        };
        let Some(mut last_rv) = self.start_from(&shared, &mut stream).await else {
            return;
        };
        let mut bookmark_due = false;
        let mut resumed = true;
        let mut stopping = shared.stopping.subscribe();
        loop {
            if *stopping.borrow() {
                return;
            }
            let sent = self.send_changes(&shared, last_rv, resumed, &mut stream);
            let Some(reached) = sent.await else {
                return;
            };
            resumed = false;
            last_rv = last_rv.max(reached);
            let now = tokio::time::Instant::now();
            if (bookmark_due || now >= deadline) && self.options.bookmarks {
                if stream.tx.send(self.bookmark(last_rv)).await.is_err() {
                    return;
                }
                bookmark_due = false;
            }
            if now >= deadline {
                return;
            }
            let wait = (deadline - now).min(BOOKMARK_EVERY);
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                () = tokio::time::sleep(wait) => bookmark_due = true,
                () = stream.tx.closed() => return,
                _ = stopping.changed() => return,
            }
        }
    }

    /// The version the watch goes on from: the one asked for, or, with no
    /// version (or "0") and for a watch-list, the current one after the
    /// current objects as ADDED events. `None`: the stream is over.
    async fn start_from(&self, shared: &Shared, stream: &mut Stream) -> Option<u64> {
        // A watch-list starts from the current objects whatever its version.
        let requested = self
            .options
            .resource_version
            .as_deref()
            .filter(|rv| *rv != "0" && !self.options.send_initial_events)
            .map(str::parse::<u64>);
        match requested {
            Some(Ok(rv)) => return Some(rv),
            Some(Err(_)) => {
                let _ = stream.tx.send(expired_event(0, 0)).await;
                return None;
            }
            None => {}
        }
        let (initial, rv) = {
            let store = shared.store();
            let objs: Vec<Arc<Value>> = super::select::selected(
                &store,
                self.resource,
                self.namespace.as_deref(),
                &self.options,
                None,
            )
            .map(|(_, d)| d.value())
            .collect();
            (objs, store.resource_version())
        };
        for o in initial {
            stream.tx.send(self.event("ADDED", &o)).await.ok()?;
            stream.sent += 1;
        }
        if self.options.send_initial_events {
            stream.tx.send(self.initial_events_end(rv)).await.ok()?;
        }
        Some(rv)
    }

    /// Sends the changes after `last_rv` this watch sees, and answers the
    /// version they reach. `None`: the stream is over (410, a fault cut or
    /// the client gone). `resumed`: the first call, from the version the
    /// watch asked for, which is too old before the history's floor
    /// whatever the watch selects (as the watch cache answers it).
    async fn send_changes(
        &self,
        shared: &Shared,
        last_rv: u64,
        resumed: bool,
        stream: &mut Stream,
    ) -> Option<u64> {
        // Events and the version they reach, read under one lock, so that
        // a bookmark never claims a version whose events were not sent.
        let (batch, store_rv) = {
            let store = shared.store();
            let floor = store.history_floor(self.resource);
            let batch = match self.node_trigger() {
                Some(_) if resumed && last_rv < floor => Err(Expired {
                    requested: last_rv,
                    oldest: floor,
                }),
                Some(node) => store.pod_events_on(node, last_rv),
                None => store.events_since(self.resource, last_rv),
            };
            (batch, store.resource_version())
        };
        let events = match batch {
            Ok(events) => events,
            Err(expired) => {
                let _ = stream
                    .tx
                    .send(expired_event(expired.requested, expired.oldest))
                    .await;
                return None;
            }
        };
        for e in events {
            let Some(kind) = self.translate(&e) else {
                continue;
            };
            stream.tx.send(self.change(kind, &e)).await.ok()?;
            stream.sent += 1;
            if stream.cut_after > 0 && stream.sent >= stream.cut_after {
                return None; // fault injection: the stream ends mid-watch
            }
        }
        Some(store_rv)
    }
}

/// Where a watch's lines go, and how many went (for an injected cut).
struct Stream {
    tx: mpsc::Sender<Bytes>,
    sent: u64,
    cut_after: u64,
}
