//! Timestamps as `metav1.Time` serialises them, and kubectl's
//! `duration.HumanDuration` for AGE columns.

use std::sync::OnceLock;

use jiff::Timestamp;

static CLOCK: OnceLock<fn() -> Timestamp> = OnceLock::new();

/// Makes `now` read `clock` for the rest of the process (a simulation's
/// virtual time); false if a clock was already set.
pub fn set_clock(clock: fn() -> Timestamp) -> bool {
    CLOCK.set(clock).is_ok()
}

/// Now: the wall clock, or the clock `set_clock` installed. Everything that
/// stamps or ages an object reads this, so that a simulation's objects age
/// with its own time.
pub fn now() -> Timestamp {
    CLOCK.get().map_or_else(Timestamp::now, |clock| clock())
}

/// RFC 3339 with second precision, as `metav1.Time` serialises.
pub fn now_rfc3339() -> String {
    format_time(now())
}

/// RFC 3339 with microseconds, as `metav1.MicroTime` (event series) serialises.
pub fn now_rfc3339_micros() -> String {
    now().strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

pub fn format_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn parse_time(s: &str) -> Option<Timestamp> {
    s.parse().ok()
}

/// Seconds since `s`, for AGE columns and the 2-minute disrupted-pod window.
pub fn seconds_since(s: &str) -> Option<i64> {
    parse_time(s).map(|t| now().as_second() - t.as_second())
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
}
