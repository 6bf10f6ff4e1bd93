//! One JSON object per request, one per line: what benchmarks count API
//! cost from and what tests read to see which requests a client made.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// One request the API server answered.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// RFC 3339 with milliseconds, when the request arrived.
    pub ts: String,
    /// The HTTP method.
    pub method: String,
    /// The URL path.
    pub path: String,
    /// The URL query, as sent.
    pub query: String,
    /// The answer's HTTP status.
    pub status: u16,
    /// The client's `User-Agent` (kubectl's names its version and command).
    pub user_agent: String,
    /// The `Accept` header: what representation the client asked for
    /// (a Table for `kubectl get`, metadata only, or plain JSON).
    #[serde(default)]
    pub accept: String,
    /// `Impersonate-User`, when the client impersonates someone (`--as`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub impersonate_user: String,
    /// `Impersonate-Group` headers, in order (`--as-group`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub impersonate_groups: Vec<String>,
    /// The kind of credentials sent (`x509`, `bearer`, `basic`, `none`), never their value.
    #[serde(default)]
    pub auth: String,
    /// The user the request acts as: the one its credentials name, or the
    /// one it impersonates; empty when it was refused before that.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user: String,
    /// Bytes of the request body.
    pub request_bytes: u64,
    /// Bytes of the response body as sent (for a watch, what was
    /// streamed; compressed, when `content_encoding` says so).
    pub response_bytes: u64,
    /// The answer's `Content-Encoding` (`gzip` for a large answer to a
    /// client that accepts it), empty when sent as it is.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content_encoding: String,
    /// Milliseconds from arrival to the end of the response.
    pub duration_ms: u64,
}

pub(crate) struct RequestLog {
    out: Mutex<BufWriter<File>>,
    path: std::path::PathBuf,
    /// Set at the first entry that could not be written: said once, on
    /// stderr, since every "no write was made" check reads this file.
    failed: std::sync::atomic::AtomicBool,
}

impl RequestLog {
    pub(crate) fn create(path: &Path) -> std::io::Result<Self> {
        Ok(RequestLog {
            out: Mutex::new(BufWriter::new(File::create(path)?)),
            path: path.to_path_buf(),
            failed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub(crate) fn write(&self, entry: &Entry) {
        let mut out = self
            .out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A line per request, flushed, so a reader sees requests as they end.
        let written = serde_json::to_writer(&mut *out, entry)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = written
            && !self.failed.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            eprintln!(
                "sandbox: the request log {} cannot be written ({e}): from now on it misses requests",
                self.path.display()
            );
        }
    }

    /// Has an entry been lost?
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Reads a request log back (tests and benchmarks).
pub fn read(path: &Path) -> std::io::Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}
