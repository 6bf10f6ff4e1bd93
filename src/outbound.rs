//! HTTP to what is not the API server: notification webhooks, the
//! Pushgateway, Prometheus and Alertmanager. The hyper stack kube-rs
//! already uses, with the host's CA roots where it has them and Mozilla's
//! (webpki-roots) otherwise (the image is FROM scratch). Every request has
//! a timeout: nothing here may hang a roll.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// How long one request may take, connection included.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);

/// Whether a URL given for one of these is one they can be reached at:
/// http or https (`--notify`, `--pushgateway`, `--block-on-alerts`).
pub(crate) fn reachable(uri: &http::Uri) -> bool {
    matches!(uri.scheme_str(), Some("http" | "https"))
}

/// An answer: status and body.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Bytes,
}

/// Why a request got no answer, in one line.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Failed(pub(crate) String);

#[derive(Clone)]
pub(crate) struct Http {
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl Http {
    pub(crate) fn new() -> Http {
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        let builder = match builder.with_native_roots() {
            Ok(b) => b,
            Err(_) => hyper_rustls::HttpsConnectorBuilder::new().with_webpki_roots(),
        };
        let connector = builder.https_or_http().enable_http1().build();
        Http {
            client: Client::builder(TokioExecutor::new()).build(connector),
        }
    }

    /// One request; `body` with its content type.
    pub(crate) async fn send(
        &self,
        method: http::Method,
        url: &str,
        body: Option<(&str, Vec<u8>)>,
    ) -> Result<Answer, Failed> {
        let mut request = http::Request::builder().method(method).uri(url);
        let body = match body {
            Some((content_type, bytes)) => {
                request = request.header(http::header::CONTENT_TYPE, content_type);
                Full::new(Bytes::from(bytes))
            }
            None => Full::new(Bytes::new()),
        };
        let request = request
            .header(
                http::header::USER_AGENT,
                concat!("kubectl-maintain/", env!("CARGO_PKG_VERSION")),
            )
            .body(body)
            .map_err(|e| Failed(format!("{url}: {e}")))?;
        let exchange = async {
            let answer = self.client.request(request).await.map_err(|e| {
                let mut words = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    words = format!("{words}: {s}");
                    source = s.source();
                }
                Failed(words)
            })?;
            let status = answer.status().as_u16();
            let body = answer
                .into_body()
                .collect()
                .await
                .map_err(|e| Failed(e.to_string()))?
                .to_bytes();
            Ok(Answer { status, body })
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .map_err(|_| Failed(format!("no answer within {} s", TIMEOUT.as_secs())))?
    }

    pub(crate) async fn get(&self, url: &str) -> Result<Answer, Failed> {
        self.send(http::Method::GET, url, None).await
    }
}

impl Answer {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The status and the start of the body, for a message.
    pub(crate) fn words(&self) -> String {
        let body = String::from_utf8_lossy(&self.body);
        let body = body.trim();
        let short: String = body.chars().take(200).collect();
        if short.is_empty() {
            format!("HTTP {}", self.status)
        } else {
            format!("HTTP {}: {short}", self.status)
        }
    }
}
