//! `--pushgateway URL`: the metrics PUT to a Prometheus Pushgateway under
//! the grouping key `job="kubectl-maintain", run="<roll>"` (a PUT replaces
//! the group, so each push is the whole state), at each node's end and at
//! the run's end: how a roll from a laptop or a CI job reaches Prometheus.
//! A failed push warns once and the roll goes on; the group stays on the
//! Pushgateway after the run, for dashboards (delete it with
//! `curl -X DELETE URL/metrics/job/kubectl-maintain/run/RUN`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Metrics;
use crate::outbound::{Http, Url};
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

pub(crate) struct Pusher {
    url: Url,
    http: Http,
    warnings: Sink,
    warned: AtomicBool,
    /// One push at a time, in order.
    lock: tokio::sync::Mutex<()>,
}

impl Pusher {
    pub(crate) fn new(gateway: &Url, run: &str, warnings: Sink) -> Pusher {
        Pusher {
            url: gateway.with_path(&format!(
                "{}/metrics/job/kubectl-maintain/run/{run}",
                gateway.path()
            )),
            http: Http::new(),
            warnings,
            warned: AtomicBool::new(false),
            lock: tokio::sync::Mutex::new(()),
        }
    }

    /// Pushes the metrics as they are now.
    pub(crate) async fn push(&self, metrics: &Metrics) {
        let _one = self.lock.lock().await;
        let body = metrics.encode().into_bytes();
        let answer = self
            .http
            .send(
                http::Method::PUT,
                &self.url,
                Some((
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    body,
                )),
            )
            .await;
        let error = match answer {
            Ok(a) if a.ok() => return,
            Ok(a) => a.words(),
            Err(e) => e.to_string(),
        };
        if !self.warned.swap(true, Ordering::Relaxed) {
            emit(
                &self.warnings,
                Event::Warning(Warning::MetricsNotPushed { error }),
            );
        }
    }

    /// Pushes in the background (a node's end: the roll does not wait).
    pub(crate) fn push_soon(self: &Arc<Self>, metrics: &Arc<Metrics>) {
        let (me, metrics) = (self.clone(), metrics.clone());
        tokio::spawn(async move { me.push(&metrics).await });
    }
}
