//! The answer a handler gives: JSON, JSON serialised already, or a watch to
//! stream.

use serde_json::Value;

use super::handlers::watch::WatchRequest;
use super::log_stream::LogRequest;
use crate::api_error::ApiError;

/// What a handler answers.
pub(crate) enum Reply {
    Json {
        status: u16,
        body: Value,
    },
    /// Pre-serialised JSON (large lists are serialised outside the lock).
    Raw {
        status: u16,
        body: Vec<u8>,
    },
    Watch(WatchRequest),
    /// A container's log, streamed while it is followed.
    Log(LogRequest),
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        Reply::Json {
            status: e.code,
            body: e.to_status(),
        }
    }
}

pub(crate) fn ok(body: Value) -> Reply {
    Reply::Json { status: 200, body }
}
