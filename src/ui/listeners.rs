//! Who shows a drain's events: bars on a terminal, lines otherwise,
//! kubectl drain's lines for scripts, or nothing. One display serves a
//! drain, or a whole roll of many drains; what is published to the cluster
//! is `crate::publish`'s.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::kubectl::Script;
use crate::vocabulary::events::{Event, Sink};

/// How progress is shown.
#[derive(Debug)]
pub(crate) enum Display {
    /// Nothing (a prediction shown before the real drain).
    #[cfg_attr(not(feature = "sandbox"), allow(dead_code))]
    Quiet,
    /// Bars on a terminal, lines otherwise, on stderr.
    Auto,
    /// kubectl drain's lines on stdout and stderr (crate::ui::kubectl).
    Kubectl(Box<Script>),
}

pub(crate) struct Listeners {
    display: JoinHandle<Option<Script>>,
}

/// Starts the display; events sent to the sink reach it.
pub(crate) fn start(display: Display) -> (Sink, Listeners) {
    let (events, mut display_rx) = mpsc::unbounded_channel::<Event>();
    let display = match display {
        Display::Quiet => tokio::spawn(async move {
            while display_rx.recv().await.is_some() {}
            None
        }),
        Display::Auto if super::bars::wanted() => tokio::spawn(async move {
            super::bars::run(display_rx).await;
            None
        }),
        Display::Auto => tokio::spawn(async move {
            super::lines::run(display_rx).await;
            None
        }),
        Display::Kubectl(script) => {
            tokio::spawn(async move { Some(super::kubectl::run(display_rx, *script).await) })
        }
    };
    (events, Listeners { display })
}

impl Listeners {
    /// Once every sink is dropped: lets the display show what is left,
    /// then ends it; kubectl's lines are handed back for their last lines.
    pub(crate) async fn finish(self) -> Option<Script> {
        match tokio::time::timeout(Duration::from_secs(2), self.display).await {
            Ok(Ok(script)) => script,
            _ => None,
        }
    }
}
