//! HTTP to what is not the API server: notification webhooks, the
//! Pushgateway, Prometheus and Alertmanager. The hyper stack kube-rs
//! already uses, with the host's CA roots where it has them and Mozilla's
//! (webpki-roots) otherwise (the image is FROM scratch), through the proxy
//! kubectl's rules choose (proxy.rs, which chooses the API server's too). Every request has a
//! timeout: nothing here may hang a roll. URLs are `Url`s, whose logins
//! and paths are never shown.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::{SocksV5, Tunnel};
use hyper_util::rt::TokioExecutor;

pub(crate) mod proxy;
mod url;
pub(crate) use url::{Url, login, resolve};

/// How long one request may take, connection included.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);

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

/// The client for these endpoints: direct, or through the proxy the
/// environment names for that endpoint (crate::outbound::proxy, kubectl's
/// rules). A proxied request gets a client of its own: they are few.
#[derive(Clone)]
pub(crate) struct Http {
    direct: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
}

/// TLS over `connector`: the host's CA roots where it has them, Mozilla's
/// otherwise.
fn https<C>(connector: C) -> hyper_rustls::HttpsConnector<C> {
    let builder = hyper_rustls::HttpsConnectorBuilder::new();
    let builder = match builder.with_native_roots() {
        Ok(b) => b,
        Err(_) => hyper_rustls::HttpsConnectorBuilder::new().with_webpki_roots(),
    };
    builder
        .https_or_http()
        .enable_http1()
        .wrap_connector(connector)
}

impl Http {
    pub(crate) fn new() -> Http {
        Http {
            direct: Client::builder(TokioExecutor::new()).build(https(HttpConnector::new())),
        }
    }

    /// One request; `body` with its content type. Only the URL's scheme,
    /// host and port are ever in an error.
    pub(crate) async fn send(
        &self,
        method: http::Method,
        url: &Url,
        body: Option<(&str, Vec<u8>)>,
    ) -> Result<Answer, Failed> {
        let mut request = http::Request::builder()
            .method(method)
            .uri(url.uri().clone());
        if let Some(auth) = url.authorization() {
            request = request.header(http::header::AUTHORIZATION, auth.clone());
        }
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
        let proxy = crate::outbound::proxy::for_target(
            url.uri(),
            None,
            &crate::outbound::proxy::environment,
        )
        .map_err(|e| Failed(e.to_string()))?;
        let exchange = async {
            match proxy {
                None => exchange(&self.direct, request).await,
                Some(proxy) if proxy.scheme_str() == Some("socks5") => {
                    let mut socks = SocksV5::new(proxy.clone(), HttpConnector::new());
                    if let Some((user, password)) = url::login(&proxy) {
                        socks = socks.with_auth(user, password);
                    }
                    let client = Client::builder(TokioExecutor::new()).build(https(socks));
                    exchange(&client, request).await
                }
                Some(proxy) => {
                    let mut tunnel = Tunnel::new(proxy.clone(), https(HttpConnector::new()));
                    // Percent-decoded, as kube-rs decodes the API server's
                    // proxy login.
                    if let Some((user, password)) = url::login(&proxy) {
                        tunnel = tunnel.with_auth(url::basic(&user, &password));
                    }
                    let client = Client::builder(TokioExecutor::new()).build(https(tunnel));
                    exchange(&client, request).await
                }
            }
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .map_err(|_| Failed(format!("no answer within {} s", TIMEOUT.as_secs())))?
    }

    pub(crate) async fn get(&self, url: &Url) -> Result<Answer, Failed> {
        self.send(http::Method::GET, url, None).await
    }
}

/// Sends the request and reads the whole answer; the error's causes in one
/// line (they name hosts and reasons, never the path).
async fn exchange<C>(
    client: &Client<C, Full<Bytes>>,
    request: http::Request<Full<Bytes>>,
) -> Result<Answer, Failed>
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    let answer = client.request(request).await.map_err(|e| {
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
