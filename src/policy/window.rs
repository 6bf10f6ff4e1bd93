//! Maintenance windows (`--window "Sat,Sun 02:00-06:00 Europe/Berlin"`):
//! when a roll may start a node. kured's `--reboot-days`, `--start-time`,
//! `--end-time` and `--time-zone` in one value, and repeatable, as
//! system-upgrade-controller's `spec.window` and Karpenter's budget
//! schedules allow several. Pure: the clock is passed in.
//!
//! A window is days, a start and an end time of day, and a time zone (an
//! IANA name; UTC when left out). Days are `Mon`…`Sun` (or full names),
//! lists (`Sat,Sun`) and ranges (`Mon-Fri`); left out or `*`, every day.
//! Times are `HH:MM` or `HH:MM:SS`; an end at or before the start runs past
//! midnight into the next day (the day named is the day it opens). Across a
//! daylight-saving change, a time that does not exist or exists twice is
//! taken as RFC 9557's "compatible" rule does (the later of a gap, the
//! earlier of a fold).

use jiff::civil::{Date, Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--window {input:?}: {reason} (example: \"Sat,Sun 02:00-06:00 Europe/Berlin\")")]
pub struct WindowError {
    input: String,
    reason: String,
}

/// One maintenance window.
#[derive(Debug, Clone)]
pub struct Window {
    /// Monday first.
    days: [bool; 7],
    start: Time,
    end: Time,
    tz: TimeZone,
    zone: String,
    text: String,
}

/// Whether a roll may start a node now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Now {
    /// Inside a window, open until `until`.
    Open { until: Timestamp },
    /// Outside every window; the next opens at `opens` (the text of it).
    Closed { opens: Timestamp, window: String },
}

const DAYS: [(&str, &str, Weekday); 7] = [
    ("mon", "monday", Weekday::Monday),
    ("tue", "tuesday", Weekday::Tuesday),
    ("wed", "wednesday", Weekday::Wednesday),
    ("thu", "thursday", Weekday::Thursday),
    ("fri", "friday", Weekday::Friday),
    ("sat", "saturday", Weekday::Saturday),
    ("sun", "sunday", Weekday::Sunday),
];

fn day(word: &str) -> Option<usize> {
    let w = word.to_ascii_lowercase();
    DAYS.iter()
        .position(|(short, long, _)| w == *short || w == *long)
}

fn time(word: &str) -> Option<Time> {
    let parts: Vec<&str> = word.split(':').collect();
    let num = |s: &str| (s.len() == 2).then(|| s.parse::<i8>().ok()).flatten();
    match parts.as_slice() {
        [h, m] => Time::new(num(h)?, num(m)?, 0, 0).ok(),
        [h, m, s] => Time::new(num(h)?, num(m)?, num(s)?, 0).ok(),
        _ => None,
    }
}

impl Window {
    pub fn parse(input: &str) -> Result<Window, WindowError> {
        let err = |reason: String| WindowError {
            input: input.to_string(),
            reason,
        };
        let words: Vec<&str> = input.split_whitespace().collect();
        let is_times = |w: &str| w.contains('-') && w.contains(':');
        let at = words
            .iter()
            .position(|w| is_times(w))
            .ok_or_else(|| err("no times of day HH:MM-HH:MM".into()))?;
        let days = match &words[..at] {
            [] | ["*"] => [true; 7],
            [list] => days_of(list).map_err(err)?,
            _ => {
                return Err(err(
                    "the days are one word, such as Mon-Fri or Sat,Sun".into()
                ));
            }
        };
        let (start, end) = words[at].split_once('-').expect("has a dash");
        let start = time(start).ok_or_else(|| err(format!("{start:?} is not HH:MM[:SS]")))?;
        let end = time(end).ok_or_else(|| err(format!("{end:?} is not HH:MM[:SS]")))?;
        if start == end {
            return Err(err("the window starts and ends at the same time".into()));
        }
        let (tz, zone) = match &words[at + 1..] {
            [] => (TimeZone::UTC, "UTC".to_string()),
            [name] => (
                TimeZone::get(name).map_err(|_| {
                    err(format!(
                        "{name:?} is not a time zone (an IANA name such as Europe/Berlin, or UTC)"
                    ))
                })?,
                (*name).to_string(),
            ),
            _ => return Err(err("after the times, only a time zone".into())),
        };
        Ok(Window {
            days,
            start,
            end,
            tz,
            zone,
            text: input.trim().to_string(),
        })
    }

    /// Each opening of this window that starts on a day from `from` for
    /// `days` days, as (opens, closes).
    fn openings(&self, from: Date, days: i64) -> impl Iterator<Item = (Timestamp, Timestamp)> + '_ {
        (0..days).filter_map(move |d| {
            let date = from.checked_add(d.days()).ok()?;
            let weekday = date.weekday().to_monday_zero_offset() as usize;
            if !self.days[weekday] {
                return None;
            }
            let end_date = if self.end <= self.start {
                date.tomorrow().ok()?
            } else {
                date
            };
            let at = |date: Date, t: Time| {
                self.tz
                    .to_ambiguous_zoned(date.to_datetime(t))
                    .compatible()
                    .ok()
                    .map(|z| z.timestamp())
            };
            Some((at(date, self.start)?, at(end_date, self.end)?))
        })
    }
}

fn days_of(list: &str) -> Result<[bool; 7], String> {
    let mut days = [false; 7];
    for part in list.split(',') {
        let bad = || format!("{part:?} is not a day (Mon…Sun) nor a range (Mon-Fri)");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (day(a).ok_or_else(bad)?, day(b).ok_or_else(bad)?);
                // A range may wrap the week: Fri-Mon.
                let mut d = a;
                loop {
                    days[d] = true;
                    if d == b {
                        break;
                    }
                    d = (d + 1) % 7;
                }
            }
            None => days[day(part).ok_or_else(bad)?] = true,
        }
    }
    Ok(days)
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl Window {
    /// The zone the window is read in, for saying when it opens.
    pub fn zone(&self) -> &str {
        &self.zone
    }

    /// A time as this window's zone reads it.
    pub fn local(&self, t: Timestamp) -> String {
        t.to_zoned(self.tz.clone())
            .strftime("%a %Y-%m-%d %H:%M:%S %Z")
            .to_string()
    }
}

/// Where `now` stands against the windows (at least one). Inside several
/// at once, open until the last of them closes.
pub fn at(windows: &[Window], now: Timestamp) -> Now {
    let mut open_until: Option<Timestamp> = None;
    let mut next: Option<(Timestamp, &Window)> = None;
    for w in windows {
        // From the day before (a window past midnight) to a week ahead.
        let today = now.to_zoned(w.tz.clone()).date();
        let from = today.yesterday().unwrap_or(today);
        for (opens, closes) in w.openings(from, 9) {
            if opens <= now && now < closes {
                open_until = Some(open_until.map_or(closes, |u| u.max(closes)));
            } else if opens > now && next.is_none_or(|(t, _)| opens < t) {
                next = Some((opens, w));
            }
        }
    }
    match (open_until, next) {
        (Some(until), _) => Now::Open { until },
        (None, Some((opens, w))) => Now::Closed {
            opens,
            window: w.to_string(),
        },
        // A window of no day cannot be parsed; every window opens within a week.
        (None, None) => unreachable!("every window opens within a week"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn w(s: &str) -> Window {
        Window::parse(s).unwrap()
    }

    #[test]
    fn a_weekend_night_in_berlin() {
        let berlin = [w("Sat,Sun 02:00-06:00 Europe/Berlin")];
        // Friday 2026-11-27 12:00 UTC: next is Saturday 02:00 CET = 01:00 UTC.
        assert_eq!(
            at(&berlin, ts("2026-11-27T12:00:00Z")),
            Now::Closed {
                opens: ts("2026-11-28T01:00:00Z"),
                window: "Sat,Sun 02:00-06:00 Europe/Berlin".into()
            }
        );
        assert_eq!(
            at(&berlin, ts("2026-11-28T03:00:00Z")),
            Now::Open {
                until: ts("2026-11-28T05:00:00Z")
            }
        );
        // Sunday 06:00 CET is the end: next Saturday.
        assert_eq!(
            at(&berlin, ts("2026-11-29T05:00:00Z")),
            Now::Closed {
                opens: ts("2026-12-05T01:00:00Z"),
                window: "Sat,Sun 02:00-06:00 Europe/Berlin".into()
            }
        );
        // In summer Berlin is UTC+2.
        assert!(matches!(
            at(&berlin, ts("2026-07-04T00:30:00Z")),
            Now::Open { until } if until == ts("2026-07-04T04:00:00Z")
        ));
    }

    #[test]
    fn a_window_past_midnight_opens_on_the_day_named() {
        let night = [w("Fri 22:00-04:00")];
        // Saturday 01:00 UTC is inside Friday's window.
        assert_eq!(
            at(&night, ts("2026-11-28T01:00:00Z")),
            Now::Open {
                until: ts("2026-11-28T04:00:00Z")
            }
        );
        // Saturday 22:00 is not a Friday.
        assert!(matches!(
            at(&night, ts("2026-11-28T22:00:00Z")),
            Now::Closed { opens, .. } if opens == ts("2026-12-04T22:00:00Z")
        ));
    }

    #[test]
    fn ranges_lists_every_day_and_seconds() {
        let weekdays = [w("Mon-Fri 09:00-17:00 UTC")];
        assert!(matches!(
            at(&weekdays, ts("2026-11-28T10:00:00Z")),
            Now::Closed { opens, .. } if opens == ts("2026-11-30T09:00:00Z")
        ));
        let wraps = w("Fri-Mon 00:00-01:00");
        assert_eq!(wraps.days, [true, false, false, false, true, true, true]);
        let daily = [w("12:00:30-12:00:45")];
        assert!(matches!(
            at(&daily, ts("2026-11-24T12:00:31Z")),
            Now::Open { until } if until == ts("2026-11-24T12:00:45Z")
        ));
        // Two windows: the earliest next opening.
        let two = [w("Sun 01:00-02:00"), w("Wed 01:00-02:00")];
        assert!(matches!(
            at(&two, ts("2026-11-24T12:00:00Z")),
            Now::Closed { opens, window } if opens == ts("2026-11-25T01:00:00Z") && window == "Wed 01:00-02:00"
        ));
    }

    #[test]
    fn bad_windows_say_what_is_wrong() {
        for (bad, says) in [
            ("Sat", "no times of day"),
            ("Sat 2:00-06:00", "not HH:MM"),
            ("Sat 25:00-06:00", "not HH:MM"),
            ("Sta 02:00-06:00", "not a day"),
            ("Sat 02:00-06:00 Mars/Olympus", "not a time zone"),
            ("Sat 02:00-02:00", "same time"),
            ("Sat 02:00-06:00 UTC extra", "only a time zone"),
        ] {
            let e = Window::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
