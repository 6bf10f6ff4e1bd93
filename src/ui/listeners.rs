//! Who listens to a drain's events: the display (bars on a terminal, lines
//! otherwise, or nothing) and, when the drain changes things, the recorder
//! of Kubernetes Events on the nodes. One set serves a drain, or a whole
//! roll of many drains.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::drain::events::{Event, Sink};

/// How progress is shown on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Display {
    /// Nothing (a prediction shown before the real drain).
    Quiet,
    /// Bars on a terminal, lines otherwise.
    Auto,
}

pub(crate) struct Listeners {
    tee: JoinHandle<()>,
    display: JoinHandle<()>,
    recorder: Option<(mpsc::UnboundedSender<Event>, JoinHandle<()>)>,
}

/// Starts the listeners; events sent to the sink reach each of them.
/// `record` also writes Kubernetes Events on the nodes (with `reason`).
pub(crate) fn start(
    client: &kube::Client,
    display: Display,
    record: bool,
    reason: Option<String>,
) -> (Sink, Listeners) {
    let (events, mut rx) = mpsc::unbounded_channel::<Event>();
    let (display_tx, mut display_rx) = mpsc::unbounded_channel();
    let display = match display {
        Display::Quiet => tokio::spawn(async move { while display_rx.recv().await.is_some() {} }),
        Display::Auto if super::bars::wanted() => tokio::spawn(super::bars::run(display_rx)),
        Display::Auto => tokio::spawn(super::lines::run(display_rx)),
    };
    let recorder = record.then(|| {
        let (tx, rx) = mpsc::unbounded_channel();
        let recorder = super::node_events::Recorder::new(client.clone());
        (
            tx,
            tokio::spawn(super::node_events::run(recorder, rx, reason)),
        )
    });
    let record_tx = recorder.as_ref().map(|(tx, _)| tx.clone());
    let tee = tokio::spawn(async move {
        while let Some(e) = rx.recv().await {
            if let Some(tx) = &record_tx {
                let _ = tx.send(e.clone());
            }
            let _ = display_tx.send(e);
        }
    });
    (
        events,
        Listeners {
            tee,
            display,
            recorder,
        },
    )
}

impl Listeners {
    /// Once every sink is dropped: lets the listeners show and record what
    /// is left, then ends them.
    pub(crate) async fn finish(self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.tee).await;
        let _ = tokio::time::timeout(Duration::from_secs(2), self.display).await;
        if let Some((tx, task)) = self.recorder {
            drop(tx);
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }
}
