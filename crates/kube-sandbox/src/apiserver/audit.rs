//! The request log (the sandbox's audit log): one entry per request, with
//! who asked, what, the answer's status and size, and how long it took.

use std::sync::Arc;
use std::time::Instant;

use http::header;
use http::request::Parts;

use crate::clock::now_rfc3339_micros;
use crate::request_log::Entry;
use crate::shared::Shared;

/// What the log says of a request, gathered when it arrives.
pub(super) struct Audit {
    ts: String,
    method: String,
    path: String,
    query: String,
    pub(super) user_agent: String,
    accept: String,
    impersonate_user: String,
    impersonate_groups: Vec<String>,
    auth: String,
    user: String,
    request_bytes: u64,
    started: Instant,
}

impl Audit {
    /// `x509`: the connection presented a client certificate, which comes
    /// before any Authorization header (auth/x509.rs).
    pub(super) fn of(parts: &Parts, request_bytes: usize, x509: bool) -> Audit {
        let header = |name| header_str(parts, name).to_string();
        let micros = now_rfc3339_micros();
        Audit {
            // RFC 3339 with milliseconds.
            ts: format!("{}Z", &micros[..micros.len().saturating_sub(4)]),
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
            auth: if x509 {
                "x509".to_string()
            } else {
                header_str(parts, header::AUTHORIZATION)
                    .split_whitespace()
                    .next()
                    .map_or_else(|| "none".to_string(), str::to_lowercase)
            },
            user: String::new(),
            request_bytes: request_bytes as u64,
            started: Instant::now(),
        }
    }

    /// Who the request was authenticated as.
    pub(super) fn authenticated(&mut self, user: &str) {
        self.user = user.to_string();
    }

    /// The body as read: its size replaces the size the headers declared.
    pub(super) fn body_read(&mut self, request_bytes: usize) {
        self.request_bytes = request_bytes as u64;
    }

    pub(super) fn write(&self, shared: &Shared, status: u16, response_bytes: u64) {
        self.write_encoded(shared, status, response_bytes, None);
    }

    /// An answer sent with a `Content-Encoding`: `response_bytes` are those
    /// on the wire.
    pub(super) fn write_encoded(
        &self,
        shared: &Shared,
        status: u16,
        response_bytes: u64,
        encoding: Option<&str>,
    ) {
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
                user: self.user.clone(),
                request_bytes: self.request_bytes,
                response_bytes,
                content_encoding: encoding.unwrap_or_default().to_string(),
                duration_ms: self.started.elapsed().as_millis() as u64,
            });
        }
    }
}

/// A header's value as text ("" when absent or not text).
pub(super) fn header_str(parts: &Parts, name: header::HeaderName) -> &str {
    parts
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// A watch's entry, written when the stream ends: when the server closes
/// it, and also when the client goes away (hyper then drops the stream), so
/// every watch is logged with the bytes it streamed.
pub(super) struct WatchAudit {
    pub(super) shared: Arc<Shared>,
    pub(super) audit: Audit,
    pub(super) streamed: u64,
}

impl Drop for WatchAudit {
    fn drop(&mut self) {
        self.audit.write(&self.shared, 200, self.streamed);
    }
}
