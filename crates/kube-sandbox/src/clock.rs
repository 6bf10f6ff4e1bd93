//! Timestamps and identifiers the sandbox stamps on objects.

use std::sync::atomic::{AtomicU64, Ordering};

use jiff::Timestamp;

pub(crate) use kube_conventions::time::{
    format_time, human_duration, now, now_rfc3339, now_rfc3339_micros, seconds_since,
};

/// Makes every timestamp the sandbox stamps, and every age it reads, follow
/// tokio's clock from here on (`kube_conventions::time::now`, which the
/// drain engine reads too): under a paused runtime (`start_paused`), where
/// tokio's clock jumps to the next timer whenever nothing is ready, an hour
/// of shutdowns and readiness passes in as long as the work takes. Once per
/// process; false if a clock was already installed.
pub fn follow_tokio_clock() -> bool {
    static BASE: std::sync::OnceLock<(Timestamp, tokio::time::Instant)> =
        std::sync::OnceLock::new();
    BASE.get_or_init(|| (Timestamp::now(), tokio::time::Instant::now()));
    kube_conventions::time::set_clock(|| {
        let (wall, at) = BASE.get().expect("set before the clock is installed");
        wall.checked_add(tokio::time::Instant::now() - *at)
            .unwrap_or(*wall)
    })
}

pub(crate) use kube_conventions::fnv1a;

/// splitmix64: unique-enough identifiers without a random-number dependency.
pub(crate) struct IdGen {
    state: AtomicU64,
}

impl IdGen {
    pub(crate) fn new(seed: u64) -> Self {
        IdGen {
            state: AtomicU64::new(seed),
        }
    }

    pub(crate) fn from_time() -> Self {
        let nanos = Timestamp::now().as_nanosecond() as u64;
        IdGen::new(nanos ^ u64::from(std::process::id()).rotate_left(32))
    }

    pub(crate) fn next(&self) -> u64 {
        let mut z = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn uid(&self) -> String {
        let a = self.next();
        let b = self.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | ((b >> 48) & 0x3fff),
            b & 0xffff_ffff_ffff
        )
    }

    /// The 5-character suffix of `generateName` (apiserver's `SimpleNameGenerator`).
    pub(crate) fn name_suffix(&self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        let mut n = self.next();
        (0..5)
            .map(|_| {
                let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
                n /= ALPHABET.len() as u64;
                c
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_shaped() {
        let g = IdGen::new(1);
        let a = g.uid();
        assert_ne!(a, g.uid());
        assert_eq!(a.len(), 36);
        assert_eq!(g.name_suffix().len(), 5);
    }
}
