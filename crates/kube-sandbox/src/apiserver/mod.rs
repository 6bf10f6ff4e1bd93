//! The sandbox's kube-apiserver, laid out like k8s.io/apiserver: this file
//! is the HTTP side (one hyper connection task per client, and the chain a
//! request goes through); `audit` logs it, `filters` may refuse it,
//! `non_resource` answers discovery and health, `request` parses it,
//! `routes` picks its handler in `handlers/`, and `response` writes the
//! answer. The rest is what the registry and admission do to objects.

mod access_review;
pub(crate) mod admission;
mod audit;
mod compression;
pub(crate) mod defaults;
pub(crate) mod deletion;
mod discovery;
pub(crate) mod eviction;
mod eviction_request;
mod field_validation;
mod filters;
pub(crate) mod handlers;
mod log_stream;
mod managed_fields;
mod meta;
mod non_resource;
mod openapi;
pub(crate) mod patch;
pub(crate) mod pod_security;
pub(crate) mod protobuf;
pub(crate) mod query;
mod reply;
pub(crate) mod request;
mod response;
mod routes;
pub(crate) mod scale;
mod table;
pub(crate) mod tls;
mod validation;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http::{Request, Response, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch as tokio_watch;

use crate::api_error::ApiError;
use crate::auth::x509::Presented;
use crate::shared::Shared;
use audit::{Audit, header_str};
use response::Body;

/// The certificates a client presented in its handshake, leaf first.
type ClientChain = Arc<Vec<rustls::pki_types::CertificateDer<'static>>>;

/// Runs until `shutdown` turns true.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: tokio_watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => return,
        };
        let Ok((stream, _)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let conn_shutdown = shutdown.clone();
        tokio::spawn(async move {
            match &shared.tls {
                Some(tls) => {
                    // A failed handshake (a client that distrusts the CA)
                    // ends the connection; the client says why.
                    if let Ok(stream) = tls.acceptor.accept(stream).await {
                        // Taken as presented; verified at each request.
                        let client = stream
                            .get_ref()
                            .1
                            .peer_certificates()
                            .map(|chain| Arc::new(chain.to_vec()));
                        let io = TokioIo::new(stream);
                        connection(io, shared.clone(), client, conn_shutdown).await;
                    }
                }
                None => connection(TokioIo::new(stream), shared.clone(), None, conn_shutdown).await,
            }
        });
    }
}

/// One client's connection, served until it closes or the server stops;
/// `client` is the certificate chain it presented.
async fn connection<I>(
    io: I,
    shared: Arc<Shared>,
    client: Option<ClientChain>,
    mut shutdown: tokio_watch::Receiver<bool>,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = service_fn(move |req| {
        let (shared, client) = (shared.clone(), client.clone());
        async move { Ok::<_, Infallible>(handle(shared, client, req).await) }
    });
    let conn = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, service);
    tokio::select! {
        _ = conn => {}
        _ = shutdown.changed() => {}
    }
}

/// `uri` without the path prefix it must begin with (a whole segment).
fn unprefixed(uri: &http::Uri, prefix: &str) -> Option<http::Uri> {
    let path = uri.path();
    let rest = path.strip_prefix(prefix)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let rest = if rest.is_empty() { "/" } else { rest };
    let with_query = match uri.query() {
        Some(q) => format!("{rest}?{q}"),
        None => rest.to_string(),
    };
    with_query.parse().ok()
}

/// The largest request body kube-apiserver reads (its
/// `MaxRequestBodyBytes`, 3 MiB; staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go
/// `limitedReadBody`): a larger one is refused with 413, unread.
pub(crate) const MAX_REQUEST_BODY: u64 = 3 * 1024 * 1024;

/// One request: logged, filtered, answered by a non-resource endpoint or
/// routed to its handler. As kube-apiserver's filter chain does, it is
/// authenticated on its headers before its body is read, and a body is
/// read only up to [`MAX_REQUEST_BODY`].
async fn handle(
    shared: Arc<Shared>,
    client: Option<ClientChain>,
    req: Request<Incoming>,
) -> Response<Body> {
    let (mut parts, body) = req.into_parts();
    let presented = match (&client, &shared.tls) {
        (Some(chain), Some(tls)) => {
            crate::auth::x509::authenticate(chain, |chain, now| tls.verify(chain, now))
        }
        _ => Presented::Nothing,
    };
    let x509 = matches!(presented, Presented::User(_));
    // Behind a path prefix (a Rancher-like proxy), served without it.
    let prefix = shared.path_prefix();
    if !prefix.is_empty() {
        let Some(uri) = unprefixed(&parts.uri, prefix) else {
            let audit = Audit::of(&parts, 0, x509);
            let e = ApiError::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            );
            return response::error(&shared, &audit, &e);
        };
        parts.uri = uri;
    }
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    // Logged with the size declared until the body is read.
    let mut audit = Audit::of(&parts, declared.map_or(0, |n| n as usize), x509);
    if let Some(e) = filters::refuse_any(&shared) {
        return response::error(&shared, &audit, &e);
    }
    let identity = match crate::auth::authenticate(&shared, &parts, presented) {
        Ok(identity) => identity,
        Err(e) => return response::error(&shared, &audit, &e),
    };
    audit.authenticated(identity.name());
    let body = match read_body(body, declared).await {
        Ok(body) => body,
        Err(e) => return response::error(&shared, &audit, &e),
    };
    audit.body_read(body.len());
    let path = parts.uri.path();
    // The sandbox's own user reads discovery and asks its reviews whatever
    // its rehearsed Role says (those are the bootstrap roles' to allow).
    if matches!(identity, crate::auth::Identity::User(_))
        && let Some(attrs) = non_resource::attributes(&parts)
        && let Some(e) = filters::refuse(&shared, &identity, &attrs)
    {
        return response::error(&shared, &audit, &e);
    }
    if let Some((answer, status, size)) = non_resource::serve(&shared, &parts, &body, &identity) {
        audit.write(&shared, status, size);
        return answer;
    }
    let Some(target) = request::parse_target(path)
        .filter(|t| t.resource.since_minor() <= shared.config.minor_number())
    else {
        return response::error(&shared, &audit, &ApiError::path_not_found());
    };
    let query = query::parse_query(parts.uri.query());
    let watch = query
        .iter()
        .any(|(k, v)| k == "watch" && (v == "true" || v == "1"));
    let verb = target.verb(&parts.method, watch);
    if let Some(e) = filters::refuse_resource(&shared, &identity, &target, verb, &query).await {
        return response::error(&shared, &audit, &e);
    }
    let request = request::Request {
        method: &parts.method,
        target,
        query: &query,
        content_type: header_str(&parts, header::CONTENT_TYPE),
        accept: header_str(&parts, header::ACCEPT),
        user_agent: &audit.user_agent,
        body: &body,
        warnings: std::cell::RefCell::default(),
    };
    let reply = routes::handle(&shared, &request);
    let warnings = request.warnings.take();
    let gzip = compression::accepts_gzip(header_str(&parts, header::ACCEPT_ENCODING));
    response::reply(shared, reply, audit, &warnings, gzip)
}

/// The body, read up to [`MAX_REQUEST_BODY`]: a larger one (declared, or
/// found while reading) is kube-apiserver's 413.
async fn read_body(body: Incoming, declared: Option<u64>) -> Result<bytes::Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {MAX_REQUEST_BODY}"),
        )
    };
    if declared.is_some_and(|n| n > MAX_REQUEST_BODY) {
        return Err(too_large());
    }
    let limit = usize::try_from(MAX_REQUEST_BODY).unwrap_or(usize::MAX);
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        // A client gone mid-body: nothing to answer it with.
        Err(_) => Ok(bytes::Bytes::new()),
    }
}

/// Binds the listener (port 0 picks a free one).
pub(crate) async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}

#[cfg(test)]
mod prefix_tests {
    #[test]
    fn a_prefix_is_taken_off_a_whole_segment_and_the_query_kept() {
        let uri = |s: &str| s.parse::<http::Uri>().unwrap();
        let p = "/k8s/clusters/c1";
        let off = |s: &str| super::unprefixed(&uri(s), p).map(|u| u.to_string());
        assert_eq!(
            off("/k8s/clusters/c1/api/v1/pods?watch=1").as_deref(),
            Some("/api/v1/pods?watch=1")
        );
        assert_eq!(off("/k8s/clusters/c1").as_deref(), Some("/"));
        assert_eq!(off("/k8s/clusters/c12/api"), None, "not a whole segment");
        assert_eq!(off("/api/v1/pods"), None, "without the prefix");
    }
}
