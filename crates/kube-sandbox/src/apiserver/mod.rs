//! The sandbox's kube-apiserver. This file is the HTTP side: one hyper
//! connection task per client, the request log, fault injection and refused
//! permissions in front of the handlers; `routes` maps a request to them.

mod access_review;
pub(crate) mod admission;
pub(crate) mod defaults;
pub(crate) mod deletion;
mod discovery;
pub(crate) mod eviction;
mod field_validation;
mod list;
mod managed_fields;
mod meta;
mod openapi;
pub(crate) mod patch;
pub(crate) mod protobuf;
pub(crate) mod query;
pub(crate) mod routes;
pub(crate) mod scale;
mod table;
mod validation;
pub(crate) mod watch;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch as tokio_watch};

use crate::api_error::ApiError;
use crate::clock::now_rfc3339_micros;
use crate::request_log::Entry;
use crate::shared::Shared;
use query::parse_query;
use routes::Reply;

type Body = BoxBody<Bytes, Infallible>;

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

fn json_response(
    status: u16,
    body: Vec<u8>,
    retry_after: Option<u64>,
    warnings: &[String],
) -> Response<Body> {
    let mut r = Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .header("Audit-Id", "sandbox");
    if let Some(s) = retry_after {
        r = r.header(header::RETRY_AFTER, s.to_string());
    }
    for w in warnings {
        r = r.header(header::WARNING, warning_value(w));
    }
    r.body(full(body)).expect("valid response")
}

/// A `Warning` header as the apiserver writes it (RFC 7234 code 299, no
/// agent, the text quoted): `299 - "unknown field \"spec.foo\""`.
fn warning_value(text: &str) -> String {
    let quoted: String = text
        .chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c if c.is_control() => vec![' '],
            c => vec![c],
        })
        .collect();
    format!("299 - \"{quoted}\"")
}

fn error_response(e: &ApiError) -> Response<Body> {
    json_response(
        e.code,
        serde_json::to_vec(&e.to_status()).unwrap_or_default(),
        e.retry_after,
        &[],
    )
}

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
        let mut conn_shutdown = shutdown.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(handle(shared, req).await) }
            });
            let conn = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = conn => {}
                _ = conn_shutdown.changed() => {}
            }
        });
    }
}

struct LogCtx {
    ts: String,
    method: String,
    path: String,
    query: String,
    user_agent: String,
    accept: String,
    impersonate_user: String,
    impersonate_groups: Vec<String>,
    auth: String,
    request_bytes: u64,
    started: Instant,
}

impl LogCtx {
    fn write(&self, shared: &Shared, status: u16, response_bytes: u64) {
        if let Some(log) = &shared.log {
            log.write(&Entry {
                ts: self.ts.clone(),
                method: self.method.clone(),
                path: self.path.clone(),
                query: self.query.clone(),
                status,
                user_agent: self.user_agent.clone(),
                accept: self.accept.clone(),
                impersonate_user: self.impersonate_user.clone(),
                impersonate_groups: self.impersonate_groups.clone(),
                auth: self.auth.clone(),
                request_bytes: self.request_bytes,
                response_bytes,
                duration_ms: self.started.elapsed().as_millis() as u64,
            });
        }
    }
}

#[allow(clippy::too_many_lines)] // left over: to split with the handler per verb (issue #26, the sandbox's layout)
async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let header = |name: header::HeaderName| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let ts = {
        // RFC 3339 with milliseconds.
        let micros = now_rfc3339_micros();
        format!("{}Z", &micros[..micros.len().saturating_sub(4)])
    };
    let ctx = LogCtx {
        ts,
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or_default().to_string(),
        user_agent: header(header::USER_AGENT),
        accept: header(header::ACCEPT),
        impersonate_user: header(header::HeaderName::from_static("impersonate-user")),
        impersonate_groups: parts
            .headers
            .get_all("impersonate-group")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect(),
        auth: header(header::AUTHORIZATION)
            .split_whitespace()
            .next()
            .map_or_else(|| "none".to_string(), str::to_lowercase),
        request_bytes: body.len() as u64,
        started,
    };
    let query = parse_query(parts.uri.query());
    let path = parts.uri.path();

    if let Some(why) = shared.failure() {
        let e = ApiError::new(500, "InternalError", why);
        ctx.write(&shared, 500, 0);
        return error_response(&e);
    }

    if let Some(token) = &shared.config.require_token
        && !matches!(path, "/version" | "/healthz" | "/livez" | "/readyz")
        && header(header::AUTHORIZATION) != format!("Bearer {token}")
    {
        let e = ApiError::new(401, "Unauthorized", "Unauthorized");
        ctx.write(&shared, 401, 0);
        return error_response(&e);
    }

    // Discovery and /version: never faulted, so the kubectl dispatcher and
    // discovery caches behave; faults are for the requests a drain makes.
    if parts.method == Method::GET {
        if let Some(doc) = discovery::discovery(&shared, path) {
            let bytes = serde_json::to_vec(&doc).unwrap_or_default();
            ctx.write(&shared, 200, bytes.len() as u64);
            return json_response(200, bytes, None, &[]);
        }
        if let Some(doc) = openapi::document(path, &header(header::ACCEPT), shared.config.minor()) {
            ctx.write(&shared, 200, doc.bytes.len() as u64);
            return Response::builder()
                .header(header::CONTENT_TYPE, doc.content_type)
                .body(full(doc.bytes))
                .expect("valid response");
        }
        if matches!(path, "/healthz" | "/livez" | "/readyz") {
            ctx.write(&shared, 200, 2);
            return Response::builder()
                .header(header::CONTENT_TYPE, "text/plain")
                .body(full("ok"))
                .expect("valid response");
        }
    }
    let review = || {
        if header(header::CONTENT_TYPE).starts_with(protobuf::CONTENT_TYPE) {
            protobuf::access_review(&body).ok()
        } else {
            serde_json::from_slice::<Value>(&body).ok()
        }
    };
    if parts.method == Method::POST
        && access_review::is_review(path)
        && let Some(review) = review()
        && let Some(answer) = access_review::answer(&shared, path, &review)
    {
        let bytes = serde_json::to_vec(&answer).unwrap_or_default();
        ctx.write(&shared, 201, bytes.len() as u64);
        return json_response(201, bytes, None, &[]);
    }
    let Some(target) = routes::parse_target(path) else {
        let e = ApiError::path_not_found();
        ctx.write(&shared, 404, 0);
        return error_response(&e);
    };

    let watch = query
        .iter()
        .any(|(k, v)| k == "watch" && (v == "true" || v == "1"));
    let verb = target.verb(&parts.method, watch);
    if let Some(e) = injected_fault(&shared, verb, &target.rbac_resource()).await {
        ctx.write(&shared, e.code, 0);
        return error_response(&e);
    }
    let ns = target.namespace.clone().unwrap_or_default();
    if shared.denies(verb, &target.rbac_resource(), &ns) {
        let e = forbidden(&target, verb);
        ctx.write(&shared, 403, 0);
        return error_response(&e);
    }

    let content_type = header(header::CONTENT_TYPE);
    let accept = header(header::ACCEPT);
    let request = routes::Request {
        method: &parts.method,
        target,
        query: &query,
        content_type: &content_type,
        accept: &accept,
        user_agent: &ctx.user_agent,
        body: &body,
        warnings: std::cell::RefCell::default(),
    };
    let reply = routes::handle(&shared, &request);
    let warnings = request.warnings.take();
    match reply {
        Reply::Json { status, body } => {
            let retry = body
                .pointer("/details/retryAfterSeconds")
                .and_then(Value::as_u64)
                .filter(|_| status == 429 || status >= 500);
            let bytes = serde_json::to_vec(&body).unwrap_or_default();
            ctx.write(&shared, status, bytes.len() as u64);
            json_response(status, bytes, retry, &warnings)
        }
        Reply::Raw { status, body } => {
            ctx.write(&shared, status, body.len() as u64);
            json_response(status, body, None, &warnings)
        }
        Reply::Watch(w) => watch_response(shared, w, ctx),
    }
}

fn watch_response(
    shared: Arc<Shared>,
    w: crate::apiserver::watch::WatchRequest,
    ctx: LogCtx,
) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(w.run(shared.clone(), tx));
    let log = WatchLog {
        shared,
        ctx,
        streamed: 0,
    };
    let stream = futures::stream::unfold((rx, log), |(mut rx, mut log)| async move {
        let b = rx.recv().await?;
        log.streamed += b.len() as u64;
        Some((Ok::<_, Infallible>(Frame::data(b)), (rx, log)))
    });
    Response::builder()
        .status(200)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CACHE_CONTROL, "no-cache, private")
        .body(BodyExt::boxed(StreamBody::new(stream)))
        .expect("valid response")
}

/// A watch's request-log entry, written when the stream ends: when the
/// server closes it, and also when the client goes away (hyper then drops
/// the stream), so every watch is logged with the bytes it streamed.
struct WatchLog {
    shared: Arc<Shared>,
    ctx: LogCtx,
    streamed: u64,
}

impl Drop for WatchLog {
    fn drop(&mut self) {
        self.ctx.write(&self.shared, 200, self.streamed);
    }
}

async fn injected_fault(shared: &Shared, verb: &str, resource: &str) -> Option<ApiError> {
    let f = shared.faults();
    if !f.any() || !f.applies_to(verb, resource) {
        return None;
    }
    if f.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(f.latency_ms)).await;
    }
    let roll = shared.roll();
    let faulted = roll < f.error500 + f.error503 + f.throttle429;
    if faulted && !shared.take_fault(f.times) {
        return None;
    }
    if roll < f.error500 {
        return Some(ApiError::new(
            500,
            "InternalError",
            "Internal error occurred: injected by the sandbox",
        ));
    }
    if roll < f.error500 + f.error503 {
        let mut e = ApiError::new(
            503,
            "ServiceUnavailable",
            "the server is currently unable to handle the request (injected by the sandbox)",
        );
        e.retry_after = Some(1);
        return Some(e);
    }
    if roll < f.error500 + f.error503 + f.throttle429 {
        let mut e = ApiError::new(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
        );
        e.retry_after = Some(1);
        return Some(e);
    }
    None
}

/// The message RBAC's authorizer gives, so clients can name what to grant.
fn forbidden(t: &routes::Target, verb: &str) -> ApiError {
    let info = t.resource.info();
    let object = match &t.name {
        Some(n) => format!("{} \"{n}\"", info.plural),
        None => info.plural.to_string(),
    };
    let scope = match &t.namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    ApiError::new(
        403,
        "Forbidden",
        format!(
            "{object} is forbidden: User \"system:anonymous\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
            t.rbac_resource(),
            info.group
        ),
    )
    .with_details(serde_json::json!({"name": t.name.clone().unwrap_or_default(), "group": info.group, "kind": info.plural}))
}

/// Binds the listener (port 0 picks a free one).
pub(crate) async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}
