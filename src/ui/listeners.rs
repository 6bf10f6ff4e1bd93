//! Who shows a drain's events: bars on a terminal, lines otherwise, or
//! nothing. One display serves a drain, or a whole roll of many drains;
//! what is published to the cluster is `crate::publish`'s.

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
    display: JoinHandle<()>,
}

/// Starts the display; events sent to the sink reach it.
pub(crate) fn start(display: Display) -> (Sink, Listeners) {
    let (events, mut display_rx) = mpsc::unbounded_channel::<Event>();
    let display = match display {
        Display::Quiet => tokio::spawn(async move { while display_rx.recv().await.is_some() {} }),
        Display::Auto if super::bars::wanted() => tokio::spawn(super::bars::run(display_rx)),
        Display::Auto => tokio::spawn(super::lines::run(display_rx)),
    };
    (events, Listeners { display })
}

impl Listeners {
    /// Once every sink is dropped: lets the display show what is left,
    /// then ends it.
    pub(crate) async fn finish(self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.display).await;
    }
}
