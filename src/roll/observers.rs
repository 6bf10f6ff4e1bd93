//! Who follows a roll besides the screen and the cluster: notifications
//! (`--notify`) and metrics (`--metrics-addr`, `--pushgateway`). One tee
//! in front of the display gives them every event; the roll tells them
//! when it starts and how it ended.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::Unattended;
use super::outcome::RollOutcome;
use crate::drain::DrainError;
use crate::drain::events::{Event, Sink};
use crate::metrics::Metrics;
use crate::metrics::push::Pusher;
use crate::metrics::serve::{self, Server};
use crate::notify::notice::{Kind, Notice};
use crate::notify::{Delivered, Notifier};

pub(crate) struct Observers {
    run: String,
    notifier: Option<Notifier>,
    metrics: Arc<Metrics>,
    pusher: Option<Arc<Pusher>>,
    _server: Option<Server>,
}

impl Observers {
    /// `warnings`: where their own troubles are said (the display's sink,
    /// after the tee).
    pub(crate) fn start(
        unattended: &Unattended,
        run: &str,
        total: usize,
        listener: Option<TcpListener>,
        warnings: &Sink,
    ) -> Observers {
        let metrics = Arc::new(Metrics::new(run, total));
        Observers {
            run: run.to_string(),
            notifier: Notifier::start(&unattended.notify, run, warnings),
            pusher: unattended
                .pushgateway
                .as_ref()
                .map(|url| Arc::new(Pusher::new(url, run, warnings.clone()))),
            _server: listener.map(|l| serve::start(l, metrics.clone())),
            metrics,
        }
    }

    /// A sink whose events they see before `display` does; the task ends
    /// once every sender is dropped.
    pub(crate) fn listen(self: &Arc<Self>, display: Sink) -> (Sink, JoinHandle<()>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
        let me = self.clone();
        let task = tokio::spawn(async move {
            while let Some(e) = rx.recv().await {
                me.metrics.observe(&e);
                if let Some(n) = &me.notifier {
                    n.observe(&e);
                }
                if let (Event::RollEnded { .. }, Some(p)) = (&e, &me.pusher) {
                    p.push_soon(&me.metrics);
                }
                let _ = display.send(e);
            }
        });
        (tx, task)
    }

    /// The roll starts, with these nodes in order.
    pub(crate) fn started(&self, nodes: &[String]) {
        if let Some(n) = &self.notifier {
            let mut notice = Notice::new(Kind::RunStarted, &self.run, None);
            notice.summary_words = Some(format!("{} nodes", nodes.len()));
            notice.nodes = Some(nodes.to_vec());
            n.tell(notice);
        }
    }

    /// The roll ended: `run.finished` or `run.failed`, the last push, what
    /// the notifications came to. `tee` is awaited first (briefly), so that
    /// every event is seen.
    pub(crate) async fn finish(
        &self,
        tee: JoinHandle<()>,
        outcome: &Result<RollOutcome, DrainError>,
    ) -> Option<Delivered> {
        let _ = tokio::time::timeout(Duration::from_secs(2), tee).await;
        self.metrics.ended();
        if let Some(p) = &self.pusher {
            p.push(&self.metrics).await;
        }
        let notifier = self.notifier.as_ref()?;
        notifier.tell(ended(&self.run, outcome));
        Some(notifier.finish().await)
    }
}

/// The last notification: how the roll ended.
fn ended(run: &str, outcome: &Result<RollOutcome, DrainError>) -> Notice {
    match outcome {
        Err(e) => Notice::new(Kind::RunFailed, run, None).because(e.chain()),
        Ok(o) => {
            let mut by: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
            for n in &o.nodes {
                *by.entry(n.status.as_str()).or_default() += 1;
            }
            let words: Vec<String> = by.iter().map(|(s, k)| format!("{k} {s}")).collect();
            let code = crate::exit_codes::of_roll(o);
            let failed = o.failed();
            let kind = if failed {
                Kind::RunFailed
            } else {
                Kind::RunFinished
            };
            let mut notice = Notice::new(kind, run, None);
            let elapsed = Duration::from_millis(o.elapsed_ms);
            let words = format!(
                "{} nodes: {} in {}",
                o.nodes.len(),
                words.join(", "),
                crate::duration::human(elapsed)
            );
            if failed {
                notice = notice.because(words.clone());
            }
            notice.summary_words = Some(words);
            notice.summary = Some(json!({
                "nodes": by,
                "elapsedSeconds": elapsed.as_secs_f64(),
                "exitCode": code,
            }));
            notice
        }
    }
}
