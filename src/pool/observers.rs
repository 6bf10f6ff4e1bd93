//! Who follows a run (a drain or a roll) besides the screen and the
//! cluster: notifications (`--notify`) and metrics (`--metrics-addr`,
//! `--pushgateway`). One tee in front of the display gives them every
//! event; the run tells them when it starts and how it ended.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::unattended::Unattended;
use crate::metrics::Metrics;
use crate::metrics::push::Pusher;
use crate::metrics::serve::{self, Server};
use crate::notify::notice::{Kind, Notice};
use crate::notify::{Delivered, Notifier};
use crate::vocabulary::events::{Event, Sink};

/// How a run ended, for its last notification.
pub(crate) struct Summary {
    /// Nodes by result, in words.
    pub(crate) by: std::collections::BTreeMap<&'static str, usize>,
    pub(crate) elapsed: Duration,
    pub(crate) exit_code: u8,
    /// A node failed (the API), or a condition was left behind: a
    /// blocked node is the run's news, not its failure.
    pub(crate) failed: bool,
}

impl Summary {
    /// From each node's result in words.
    pub(crate) fn new(
        statuses: impl IntoIterator<Item = &'static str>,
        elapsed_ms: u64,
        exit_code: u8,
        failed: bool,
    ) -> Self {
        let mut by = std::collections::BTreeMap::new();
        for s in statuses {
            *by.entry(s).or_default() += 1;
        }
        Summary {
            by,
            elapsed: Duration::from_millis(elapsed_ms),
            exit_code,
            failed,
        }
    }
}

pub(crate) struct Observers {
    verb: crate::notify::notice::Verb,
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
        verb: crate::notify::notice::Verb,
        run: &str,
        total: usize,
        listener: Option<TcpListener>,
        warnings: &Sink,
    ) -> Observers {
        let metrics = Arc::new(Metrics::new(run, total));
        Observers {
            verb,
            run: run.to_string(),
            notifier: Notifier::start(&unattended.notify, verb, run, warnings),
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
                if let (Event::NodeEnded { .. }, Some(p)) = (&e, &me.pusher) {
                    p.push_soon(&me.metrics);
                }
                let _ = display.send(e);
            }
        });
        (tx, task)
    }

    /// The run starts, with these nodes in order.
    pub(crate) fn started(&self, nodes: &[String]) {
        self.metrics.planned(nodes.len());
        if let Some(n) = &self.notifier {
            let mut notice = Notice::new(Kind::RunStarted, self.verb, &self.run, None);
            notice.summary_words = Some(format!("{} nodes", nodes.len()));
            notice.nodes = Some(nodes.to_vec());
            n.tell(notice);
        }
    }

    /// The run ended (`Err`: why it failed): `run.finished` or
    /// `run.failed`, the last push, what the notifications came to. `tee`
    /// is awaited first (briefly), so that every event is seen.
    pub(crate) async fn finish(
        &self,
        tee: JoinHandle<()>,
        outcome: Result<Summary, String>,
    ) -> Option<Delivered> {
        let _ = tokio::time::timeout(Duration::from_secs(2), tee).await;
        self.metrics.ended();
        if let Some(p) = &self.pusher {
            p.push(&self.metrics).await;
        }
        let notifier = self.notifier.as_ref()?;
        notifier.tell(ended(self.verb, &self.run, outcome));
        Some(notifier.finish().await)
    }
}

/// The last notification: how the run ended.
fn ended(verb: crate::notify::notice::Verb, run: &str, outcome: Result<Summary, String>) -> Notice {
    match outcome {
        Err(why) => Notice::new(Kind::RunFailed, verb, run, None).because(why),
        Ok(o) => {
            let words: Vec<String> = o.by.iter().map(|(s, k)| format!("{k} {s}")).collect();
            let kind = if o.failed {
                Kind::RunFailed
            } else {
                Kind::RunFinished
            };
            let mut notice = Notice::new(kind, verb, run, None);
            let nodes: usize = o.by.values().sum();
            let words = format!(
                "{nodes} nodes: {} in {}",
                words.join(", "),
                crate::duration::human(o.elapsed)
            );
            if o.failed {
                notice = notice.because(words.clone());
            }
            notice.summary_words = Some(words);
            notice.summary = Some(json!({
                "nodes": o.by,
                "elapsedSeconds": o.elapsed.as_secs_f64(),
                "exitCode": o.exit_code,
            }));
            notice
        }
    }
}
