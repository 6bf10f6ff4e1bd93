//! A run as others follow it, for a drain and a roll alike: its progress
//! published to the cluster (conditions, Events: crate::publish), its
//! events teed to notifications and metrics (`observers`), the client's
//! retries told on screen (`retries_told`), and, once it ends, the last
//! notification, the last push, and what could not be written recorded in
//! its outcome.

use std::sync::Arc;

use tokio::net::TcpListener;

use super::observers::{Observers, Summary};
use super::retries_told;
use super::unattended::Unattended;
use crate::client::Clients;
use crate::notify::Delivered;
use crate::notify::notice::Verb;
use crate::publish::{Publish, Publisher};
use crate::vocabulary::DrainError;
use crate::vocabulary::events::Sink;

/// What a run's outcome tells those who follow it, and what it keeps of
/// them.
pub(crate) trait Followed {
    /// How the run ended, for its last notification; `None`: it stopped
    /// before anything changed, and nothing more is told.
    fn summary(&self) -> Option<Summary>;
    /// What the notifications came to (`None`: none were asked for or
    /// told) and the nodes whose conditions' last write failed.
    fn keep(&mut self, notifications: Option<Delivered>, unwritten: Vec<String>);
}

/// Who follows a run besides the screen and the cluster.
pub(crate) struct Followers<'a> {
    pub(crate) unattended: &'a Unattended,
    pub(crate) verb: Verb,
    /// The run's identity: the same nodes (and action) give the same one.
    pub(crate) identity: String,
    /// How many nodes the metrics expect before the run says.
    pub(crate) nodes: usize,
    pub(crate) metrics: Option<TcpListener>,
}

/// What a run's body works with.
pub(crate) struct Run<'a> {
    pub(crate) clients: Clients,
    /// Where it tells what happens: past the observers' tee, the
    /// publisher's recorder, to the display.
    pub(crate) events: Sink,
    /// Those who follow it (`None`: no one but the screen, as for a dry
    /// run), told by the body when it starts.
    pub(crate) observers: Option<&'a Observers>,
    pub(crate) publisher: Arc<Publisher>,
}

/// Runs `body` followed: `followers` (`None`: only the screen and the
/// cluster) see every event, and are told how it ended.
pub(crate) async fn run<T: Followed>(
    clients: Clients,
    publish: Publish,
    display: Sink,
    followers: Option<Followers<'_>>,
    body: impl AsyncFnOnce(Run<'_>) -> Result<T, DrainError>,
) -> Result<T, DrainError> {
    let publisher = Arc::new(Publisher::start(&clients.main, publish));
    let display = publisher.listen(display);
    let observers = followers.map(|f| {
        Arc::new(Observers::start(
            f.unattended,
            f.verb,
            &f.identity,
            f.nodes,
            f.metrics,
            &display,
        ))
    });
    let (events, tee) = match &observers {
        Some(o) => {
            let (events, tee) = o.listen(display);
            (events, Some(tee))
        }
        None => (display, None),
    };
    let mut ended = {
        let _told = retries_told::tell(&clients, &events);
        body(Run {
            clients,
            events,
            observers: observers.as_deref(),
            publisher: publisher.clone(),
        })
        .await
    };
    let mut delivered = None;
    if let (Some(observers), Some(tee)) = (&observers, tee) {
        let summary = match &ended {
            Ok(t) => t.summary().map(Ok),
            Err(e) => Some(Err(e.chain())),
        };
        if let Some(summary) = summary {
            delivered = observers.finish(tee, summary).await;
        }
    }
    // Every sink is dropped with the run: what is left gets recorded.
    publisher.finish().await;
    if let Ok(t) = &mut ended {
        t.keep(delivered, publisher.unwritten());
    }
    ended
}
