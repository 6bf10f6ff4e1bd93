//! Unguessable strings, from the operating system's random source through
//! rustls's ring provider (already in the tree): the owner's token, the
//! names of private directories.

use std::fmt::Write as _;

/// `bytes` random bytes, in hex.
pub(crate) fn hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rustls::crypto::ring::default_provider()
        .secure_random
        .fill(&mut buf)
        .expect("the operating system's random source");
    buf.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
