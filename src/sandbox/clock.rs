//! Timestamps and identifiers the sandbox stamps on objects.

use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::jiff::Timestamp;

/// RFC 3339 with second precision, as `metav1.Time` serialises.
pub fn now_rfc3339() -> String {
    format_time(Timestamp::now())
}

/// RFC 3339 with microseconds, as `metav1.MicroTime` (event series) serialises.
pub fn now_rfc3339_micros() -> String {
    Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

pub fn format_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn parse_time(s: &str) -> Option<Timestamp> {
    s.parse().ok()
}

/// Seconds since `s`, for AGE columns and the 2-minute disrupted-pod window.
pub fn seconds_since(s: &str) -> Option<i64> {
    parse_time(s).map(|t| Timestamp::now().as_second() - t.as_second())
}

/// kubectl's `duration.HumanDuration`, used in AGE columns.
pub fn human_duration(secs: i64) -> String {
    let secs = secs.max(0);
    if secs < 120 {
        return format!("{secs}s");
    }
    let mins = secs / 60;
    if mins < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{mins}m")
        } else {
            format!("{mins}m{s}s")
        };
    }
    if mins < 180 {
        return format!("{mins}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = mins % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if days < 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{days}d")
        } else {
            format!("{days}d{h}h")
        };
    }
    if days < 365 * 2 {
        return format!("{days}d");
    }
    format!("{}y", days / 365)
}

/// splitmix64: unique-enough identifiers without a random-number dependency.
pub struct IdGen {
    state: AtomicU64,
}

impl IdGen {
    pub fn new(seed: u64) -> Self {
        IdGen {
            state: AtomicU64::new(seed),
        }
    }

    pub fn from_time() -> Self {
        let nanos = Timestamp::now().as_nanosecond() as u64;
        IdGen::new(nanos ^ u64::from(std::process::id()).rotate_left(32))
    }

    pub fn next(&self) -> u64 {
        let mut z = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn uid(&self) -> String {
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
    pub fn name_suffix(&self) -> String {
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
    fn human_durations_match_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(125), "2m5s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(30 * 3600), "30h");
        assert_eq!(human_duration(3 * 86400), "3d");
        assert_eq!(human_duration(400 * 86400), "400d");
    }

    #[test]
    fn ids_are_unique_and_shaped() {
        let g = IdGen::new(1);
        let a = g.uid();
        assert_ne!(a, g.uid());
        assert_eq!(a.len(), 36);
        assert_eq!(g.name_suffix().len(), 5);
    }
}
