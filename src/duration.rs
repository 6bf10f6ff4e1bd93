//! Go-style durations (`90s`, `5m`, `1h30m`, `0`), as kubectl's `--timeout`
//! and the plan's `timeout` fields take them.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {input:?}: {reason} (examples: 30s, 5m, 1h30m)")]
pub(crate) struct DurationError {
    pub(crate) input: String,
    pub(crate) reason: &'static str,
}

pub(crate) fn parse(input: &str) -> Result<Duration, DurationError> {
    let err = |reason| DurationError {
        input: input.to_string(),
        reason,
    };
    // Go's time.ParseDuration, which kubectl uses, takes a leading '+'.
    let s = input.trim();
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.starts_with('-') {
        return Err(err("a duration cannot be negative"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(err("empty"));
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| err("a number needs a unit (ns, us, ms, s, m, h)"))?;
        if num_end == 0 {
            return Err(err("expected a number"));
        }
        let value: f64 = rest[..num_end].parse().map_err(|_| err("bad number"))?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(err("unknown unit (ns, us, ms, s, m, h)")),
        };
        total += value * factor;
        rest = &rest[unit_end..];
    }
    Ok(Duration::from_secs_f64(total))
}

/// Short human form: `850ms`, `12s`, `3m05s`, `1h02m`.
pub(crate) fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = d.as_secs();
    if s < 60 {
        return format!("{:.1}s", d.as_secs_f64());
    }
    if s < 3600 {
        return format!("{}m{:02}s", s / 60, s % 60);
    }
    format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
}

/// Go's `time.Duration.String()`, as kubectl prints a duration in its
/// messages: `8s`, `1m30s`, `5m0s`, `1h0m0s`, `1.5s`, `250ms`, `0s`.
pub(crate) fn go(d: Duration) -> String {
    let nanos = d.as_nanos();
    let decimal = |whole: u128, frac: u128, digits: u32| {
        let frac = format!("{frac:0width$}", width = digits as usize);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            whole.to_string()
        } else {
            format!("{whole}.{frac}")
        }
    };
    if nanos == 0 {
        return "0s".into();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", decimal(nanos / 1_000, nanos % 1_000, 3));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", decimal(nanos / 1_000_000, nanos % 1_000_000, 6));
    }
    let secs = nanos / 1_000_000_000;
    let seconds = decimal(secs % 60, nanos % 1_000_000_000, 9);
    let (h, m) = (secs / 3600, (secs % 3600) / 60);
    match (h, m) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_forms() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_secs(8), "8s"),
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(300), "5m0s"),
            (Duration::from_secs(3600), "1h0m0s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(250), "250ms"),
            (Duration::from_micros(1500), "1.5ms"),
            (Duration::from_nanos(1500), "1.5µs"),
            (Duration::from_nanos(15), "15ns"),
            (parse("1h2m3.25s").unwrap(), "1h2m3.25s"),
        ];
        for (d, want) in cases {
            assert_eq!(go(d), want, "{d:?}");
        }
    }

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse("0").unwrap(), Duration::ZERO);
        assert_eq!(parse("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse("250ms").unwrap(), Duration::from_millis(250));
        for bad in ["-5s", "5", "5x", "", "s"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn human_forms() {
        assert_eq!(human(Duration::from_millis(850)), "850ms");
        assert_eq!(human(Duration::from_millis(12_300)), "12.3s");
        assert_eq!(human(Duration::from_secs(185)), "3m05s");
        assert_eq!(human(Duration::from_secs(3720)), "1h02m");
    }
}
