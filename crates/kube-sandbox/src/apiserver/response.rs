//! Answers as HTTP: JSON with the status, `Retry-After` and `Warning`
//! headers, and a watch's chunked stream; each logged once it is sent.

use crate::objects::path::At;
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use serde_json::Value;
use tokio::sync::mpsc;

use super::audit::{Audit, WatchAudit};
use super::handlers::watch::WatchRequest;
use super::log_stream::LogRequest;
use super::reply::Reply;
use crate::api_error::ApiError;
use crate::shared::Shared;

pub(super) type Body = BoxBody<Bytes, Infallible>;

pub(super) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

pub(super) fn json_response(
    status: u16,
    body: Vec<u8>,
    retry_after: Option<u64>,
    warnings: &[String],
) -> Response<Body> {
    encoded_response(status, (body, None), retry_after, warnings)
}

/// A JSON answer as `compression::encode` gave it: the body to send and
/// its `Content-Encoding`.
fn encoded_response(
    status: u16,
    (body, encoding): (Vec<u8>, Option<&'static str>),
    retry_after: Option<u64>,
    warnings: &[String],
) -> Response<Body> {
    let mut r = Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .header("Audit-Id", "sandbox");
    if let Some(encoding) = encoding {
        r = r
            .header(header::CONTENT_ENCODING, encoding)
            .header(header::VARY, "Accept-Encoding");
    }
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

/// An error's Status, logged.
pub(super) fn error(shared: &Shared, audit: &Audit, e: &ApiError) -> Response<Body> {
    audit.write(shared, e.code, 0);
    error_response(e)
}

/// A handler's reply, logged (a watch when its stream ends); `gzip`: the
/// client accepts it, for answers large enough (`compression`).
pub(super) fn reply(
    shared: Arc<Shared>,
    reply: Reply,
    audit: Audit,
    warnings: &[String],
    gzip: bool,
) -> Response<Body> {
    match reply {
        Reply::Json { status, body } => {
            let retry = body
                .at("/details/retryAfterSeconds")
                .and_then(Value::as_u64)
                .filter(|_| status == 429 || status >= 500);
            let bytes = serde_json::to_vec(&body).unwrap_or_default();
            sent(&shared, &audit, status, bytes, retry, warnings, gzip)
        }
        Reply::Raw { status, body } => sent(&shared, &audit, status, body, None, warnings, gzip),
        Reply::Watch(w) => watch_response(shared, w, audit),
        Reply::Log(l) => log_response(shared, l, audit),
    }
}

/// A JSON body, compressed when asked for and large enough, logged with
/// the bytes that go on the wire.
fn sent(
    shared: &Shared,
    audit: &Audit,
    status: u16,
    body: Vec<u8>,
    retry_after: Option<u64>,
    warnings: &[String],
    gzip: bool,
) -> Response<Body> {
    let encoded = super::compression::encode(body, gzip);
    audit.write_encoded(shared, status, encoded.0.len() as u64, encoded.1);
    encoded_response(status, encoded, retry_after, warnings)
}

/// A container's log as text; followed, a stream that ends with the
/// container.
fn log_response(shared: Arc<Shared>, l: LogRequest, audit: Audit) -> Response<Body> {
    let (first, mut seen, done) = l.first();
    let builder = Response::builder()
        .status(200)
        .header(header::CONTENT_TYPE, "text/plain");
    let (Some(log), true, false) = (l.log.clone(), l.follow, done) else {
        audit.write(&shared, 200, first.len() as u64);
        return builder.body(full(first)).expect("valid response");
    };
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let mut stopping = shared.stopping.subscribe();
    shared.tasks.spawn(async move {
        let mut changed = log.subscribe();
        if tx.send(Bytes::from(first)).await.is_err() {
            return;
        }
        loop {
            let (lines, done) = log.since(seen);
            seen += lines.len();
            if !lines.is_empty() && tx.send(Bytes::from(l.format(&lines))).await.is_err() {
                return;
            }
            if done {
                return;
            }
            tokio::select! {
                c = changed.changed() => if c.is_err() { return },
                _ = stopping.wait_for(|s| *s) => return,
            }
        }
    });
    builder
        .body(streamed(shared, audit, rx))
        .expect("valid response")
}

/// A body of what arrives on `rx`, logged with its size once it ends.
///
/// What is waiting goes out as one chunk: kube-apiserver's watch server
/// flushes only once no event is left in its channel (`len(ch) == 0` in
/// `WatchServer.HandleHTTP`, staging/src/k8s.io/apiserver/pkg/endpoints/
/// handlers/watch.go), so a busy watch carries many events a chunk. One
/// chunk an event held a busy watch back at the pace of its client's body
/// channel, which takes one chunk at a time: the watch of every budget fell
/// two seconds behind a 5,000-node pool drain.
fn streamed(shared: Arc<Shared>, audit: Audit, rx: mpsc::Receiver<Bytes>) -> Body {
    let log = WatchAudit {
        shared,
        audit,
        streamed: 0,
    };
    let stream = futures::stream::unfold((rx, log), |(mut rx, mut log)| async move {
        let b = ready_chunk(rx.recv().await?, &mut rx);
        log.streamed += b.len() as u64;
        Some((Ok::<_, Infallible>(Frame::data(b)), (rx, log)))
    });
    BodyExt::boxed(StreamBody::new(stream))
}

/// `first` and whatever else is waiting on `rx`, as one chunk.
fn ready_chunk(first: Bytes, rx: &mut mpsc::Receiver<Bytes>) -> Bytes {
    let Ok(second) = rx.try_recv() else {
        return first;
    };
    let mut chunk = bytes::BytesMut::from(first);
    chunk.extend_from_slice(&second);
    while let Ok(more) = rx.try_recv() {
        chunk.extend_from_slice(&more);
    }
    chunk.freeze()
}

fn watch_response(shared: Arc<Shared>, w: WatchRequest, audit: Audit) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    shared.tasks.spawn(w.run(shared.clone(), tx));
    Response::builder()
        .status(200)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CACHE_CONTROL, "no-cache, private")
        .body(streamed(shared, audit, rx))
        .expect("valid response")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_waits_goes_out_as_one_chunk() {
        let (tx, mut rx) = mpsc::channel::<Bytes>(4);
        for line in ["a\n", "b\n", "c\n"] {
            tx.try_send(Bytes::from(line)).unwrap();
        }
        let first = rx.try_recv().unwrap();
        assert_eq!(&ready_chunk(first, &mut rx)[..], b"a\nb\nc\n");
        tx.try_send(Bytes::from("d\n")).unwrap();
        let first = rx.try_recv().unwrap();
        assert_eq!(&ready_chunk(first, &mut rx)[..], b"d\n");
    }
}
