//! Response compression, as kube-apiserver does it
//! (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/
//! writers.go: `negotiateContentEncoding`, `deferredResponseWriter`): an
//! answer to a resource request is gzipped, at level 1, when the client's
//! `Accept-Encoding` names `gzip` as one of its comma-separated tokens and
//! the body is over 128 KiB. Smaller answers, watches (whose events are
//! written one by one) and non-resource paths are sent as they are.
//! client-go asks for gzip unless `disable-compression` is set (Go's
//! transport adds the header), so kubectl's large lists come compressed
//! from a real cluster, and from the sandbox alike.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;

/// Bodies larger than this are compressed (`defaultGzipThresholdBytes`).
const THRESHOLD: usize = 128 * 1024;

/// Whether the request's `Accept-Encoding` asks for gzip: one of its
/// tokens, trimmed, is exactly `gzip` (a token with parameters, such as
/// `gzip;q=1`, is not, as upstream's loop compares whole tokens).
pub(super) fn accepts_gzip(accept_encoding: &str) -> bool {
    accept_encoding.split(',').any(|t| t.trim() == "gzip")
}

/// The body to send and its `Content-Encoding`, if any.
pub(super) fn encode(body: Vec<u8>, gzip: bool) -> (Vec<u8>, Option<&'static str>) {
    if !gzip || body.len() <= THRESHOLD {
        return (body, None);
    }
    let mut out = GzEncoder::new(Vec::with_capacity(body.len() / 4), Compression::new(1));
    match out.write_all(&body).and_then(|()| out.finish()) {
        Ok(compressed) => (compressed, Some("gzip")),
        Err(_) => (body, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
    use std::io::Read;

    #[test]
    fn gzip_is_one_whole_token() {
        assert!(accepts_gzip("gzip"));
        assert!(accepts_gzip("deflate, gzip"));
        assert!(accepts_gzip(" gzip ,br"));
        assert!(!accepts_gzip(""));
        assert!(!accepts_gzip("identity"));
        assert!(!accepts_gzip("gzip;q=1"));
        assert!(!accepts_gzip("x-gzip"));
    }

    #[test]
    fn only_large_bodies_asked_for_are_compressed() {
        let small = vec![b'a'; THRESHOLD];
        assert_eq!(encode(small.clone(), true), (small, None));
        let large = br#"{"kind":"Pod"},"#.repeat(THRESHOLD / 10);
        assert_eq!(encode(large.clone(), false), (large.clone(), None));
        let (sent, encoding) = encode(large.clone(), true);
        assert_eq!(encoding, Some("gzip"));
        assert!(sent.len() < large.len() / 10);
        let mut back = Vec::new();
        GzDecoder::new(&sent[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, large);
    }
}
