//! Delivery to one endpoint: in order, each notification retried with
//! backoff (1 s doubling, 5 tries) on no answer, 408, 429 and 5xx; never in
//! the roll's way (a task of its own, an unbounded queue). The first
//! failure of an endpoint is one warning; every failure is counted for the
//! report.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::endpoint::Endpoint;
use super::notice::Notice;
use crate::outbound::Http;
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

/// Tries of one notification.
const TRIES: u32 = 5;
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// What one endpoint got.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) sent: AtomicUsize,
    pub(crate) failed: AtomicUsize,
    /// Queued and not yet sent or given up.
    pub(crate) waiting: AtomicUsize,
    pub(crate) last_error: std::sync::Mutex<Option<String>>,
}

pub(crate) struct Courier {
    pub(crate) endpoint: Endpoint,
    queue: mpsc::UnboundedSender<Notice>,
    pub(crate) tally: Arc<Tally>,
    task: JoinHandle<()>,
}

impl Courier {
    pub(crate) fn start(endpoint: Endpoint, http: Http, warnings: Sink) -> Courier {
        let (queue, mut rx) = mpsc::unbounded_channel::<Notice>();
        let tally = Arc::new(Tally::default());
        let task = {
            let (endpoint, tally) = (endpoint.clone(), tally.clone());
            tokio::spawn(async move {
                let mut warned = false;
                // The first failed try of the endpoint is said at once,
                // not after its retries.
                let mut warn = |error: &str| {
                    if !warned {
                        warned = true;
                        let warning = Warning::NotificationFailed {
                            endpoint: endpoint.shown(),
                            error: error.to_string(),
                        };
                        emit(&warnings, Event::Warning(warning));
                    }
                };
                while let Some(notice) = rx.recv().await {
                    let result = deliver(&http, &endpoint, &notice, &mut warn).await;
                    tally.waiting.fetch_sub(1, Ordering::Relaxed);
                    match result {
                        Ok(()) => tally.sent.fetch_add(1, Ordering::Relaxed),
                        Err(error) => {
                            *tally.last_error.lock().expect("tally") = Some(error);
                            tally.failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })
        };
        Courier {
            endpoint,
            queue,
            tally,
            task,
        }
    }

    pub(crate) fn send(&self, notice: Notice) {
        self.tally.waiting.fetch_add(1, Ordering::Relaxed);
        if self.queue.send(notice).is_err() {
            self.tally.waiting.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Lets the queue empty for at most `grace`; what is left is counted
    /// as not delivered.
    pub(crate) async fn finish(self, grace: Duration) -> Arc<Tally> {
        drop(self.queue);
        let mut task = self.task;
        if tokio::time::timeout(grace, &mut task).await.is_err() {
            task.abort();
            let left = self.tally.waiting.swap(0, Ordering::Relaxed);
            self.tally.failed.fetch_add(left, Ordering::Relaxed);
            let mut last = self.tally.last_error.lock().expect("tally");
            if last.is_none() {
                *last = Some(format!(
                    "not delivered within {} s of the end",
                    grace.as_secs()
                ));
            }
        }
        self.tally
    }
}

/// Posts one notification, retrying what may pass later.
async fn deliver(
    http: &Http,
    endpoint: &Endpoint,
    notice: &Notice,
    warn: &mut impl FnMut(&str),
) -> Result<(), String> {
    let body = serde_json::to_vec(&notice.body(endpoint.format)).unwrap_or_default();
    let mut backoff = FIRST_BACKOFF;
    let mut last = String::new();
    for attempt in 1..=TRIES {
        let answer = http
            .send(
                http::Method::POST,
                &endpoint.url,
                Some(("application/json", body.clone())),
            )
            .await;
        let retry = match &answer {
            Ok(a) if a.ok() => return Ok(()),
            Ok(a) => {
                last = a.words();
                a.status == 408 || a.status == 429 || a.status >= 500
            }
            Err(e) => {
                last = e.to_string();
                true
            }
        };
        warn(&last);
        if !retry || attempt == TRIES {
            break;
        }
        tokio::time::sleep(backoff).await;
        backoff *= 2;
    }
    Err(format!("{} ({last})", notice.kind.as_str()))
}
