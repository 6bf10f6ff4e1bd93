//! `--metrics-addr`: `/metrics` over HTTP while the run lasts, for a
//! Prometheus to scrape (an in-cluster run's pod, a long roll on a host).
//! Bound before the roll starts, so that a taken address stops it before
//! anything changes.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::Metrics;

/// The server; it stops when dropped.
pub(crate) struct Server {
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens on `addr` (`HOST:PORT`, `:PORT` for every address, as Go's
/// net.Listen reads it). Listening beyond this machine is said on stderr
/// before the run starts, with the address that keeps it to this machine:
/// the page names the nodes and what blocks them.
pub(crate) async fn bind(addr: &str) -> Result<TcpListener, String> {
    let full = if addr.starts_with(':') {
        format!("0.0.0.0{addr}")
    } else {
        addr.to_string()
    };
    let listener = TcpListener::bind(&full)
        .await
        .map_err(|e| format!("--metrics-addr {addr}: cannot listen there: {e}"))?;
    if let Ok(local) = listener.local_addr()
        && !local.ip().is_loopback()
    {
        crate::errln!(
            "--metrics-addr {addr}: /metrics is served on {}, reachable from other machines; --metrics-addr 127.0.0.1:{} keeps it to this one",
            if local.ip().is_unspecified() {
                format!("every interface, port {}", local.port())
            } else {
                local.to_string()
            },
            local.port()
        );
    }
    Ok(listener)
}

pub(crate) fn start(listener: TcpListener, metrics: Arc<Metrics>) -> Server {
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let metrics = metrics.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let metrics = metrics.clone();
                    async move {
                        if request.uri().path() == "/metrics" {
                            hyper::Response::builder()
                                .header(
                                    http::header::CONTENT_TYPE,
                                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                                )
                                .body(Full::new(Bytes::from(metrics.encode())))
                        } else {
                            hyper::Response::builder()
                                .status(404)
                                .body(Full::new(Bytes::from_static(b"only /metrics is served\n")))
                        }
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Server { task }
}
