//! Whether a run may start its next node now, besides the pool's room:
//! `--announce` (`MaintenancePlanned` stands that long before the first
//! drain), `--window` (only inside a maintenance window; a node in progress
//! finishes), `--block-on-alerts` (no next node while a matching alert
//! fires; an alerts API that cannot be read holds too, said so). Each is a
//! hold: its own line, report entry and notification. The wall clock is
//! `kube_conventions::time::now`, which follows tokio's when the sandbox
//! runs in virtual time, so that a long wait can be tested.

use std::time::Duration;

use jiff::Timestamp;

use super::alerts::Alerts;
use crate::policy::window::{self, Window};

/// What the gate needs.
pub(crate) struct Gate {
    pub(crate) windows: Vec<Window>,
    pub(crate) alerts: Option<Alerts>,
    /// How often firing alerts are asked again.
    pub(crate) alerts_every: Duration,
    /// No drain before this (`--announce`).
    pub(crate) announced_until: Option<Timestamp>,
    /// The last answer about alerts, and when: asked again only every
    /// `alerts_every`, however often the roll looks.
    pub(crate) alerts_seen: std::sync::Mutex<Option<(tokio::time::Instant, Option<String>)>>,
}

/// The gate now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Open {
    Yes,
    No {
        /// `announce`, `window` or `alerts`.
        what: &'static str,
        reason: String,
        /// When to look again.
        again_in: Duration,
    },
}

/// The most a closed window is slept on before the clock is read again.
const WINDOW_NAP: Duration = Duration::from_secs(60);

fn until(t: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(t.duration_since(now)).unwrap_or(Duration::ZERO)
}

impl Gate {
    pub(crate) async fn check(&self) -> Open {
        let now = kube_conventions::time::now();
        if let Some(at) = self.announced_until
            && now < at
        {
            return Open::No {
                what: "announce",
                reason: format!(
                    "MaintenancePlanned was announced on every node; the first drain starts at {} (--announce)",
                    kube_conventions::time::format_time(at)
                ),
                again_in: until(at, now).min(WINDOW_NAP),
            };
        }
        if !self.windows.is_empty()
            && let window::Now::Closed { opens, window } = window::at(&self.windows, now)
        {
            let shown = self
                .windows
                .iter()
                .find(|w| w.to_string() == window)
                .map_or_else(|| opens.to_string(), |w| w.local(opens));
            return Open::No {
                what: "window",
                reason: format!(
                    "outside every --window: the next opens at {shown} ({window}); nodes in progress finish"
                ),
                again_in: until(opens, now).clamp(Duration::from_millis(100), WINDOW_NAP),
            };
        }
        if let Some(alerts) = &self.alerts {
            let fresh = self
                .alerts_seen
                .lock()
                .expect("alerts")
                .clone()
                .filter(|(at, _)| at.elapsed() < self.alerts_every);
            if let Some((at, seen)) = fresh {
                return match seen {
                    None => Open::Yes,
                    Some(reason) => Open::No {
                        what: "alerts",
                        reason,
                        again_in: self.alerts_every.saturating_sub(at.elapsed()),
                    },
                };
            }
            let reason = match alerts.firing().await {
                Ok(firing) if firing.is_empty() => {
                    *self.alerts_seen.lock().expect("alerts") =
                        Some((tokio::time::Instant::now(), None));
                    return Open::Yes;
                }
                Ok(firing) => {
                    let shown: Vec<&str> = firing.iter().take(3).map(String::as_str).collect();
                    let more = match firing.len() {
                        n if n > 3 => format!(" and {} more", n - 3),
                        _ => String::new(),
                    };
                    format!(
                        "{} alert{} firing: {}{more} (--block-on-alerts); no node starts until they clear",
                        firing.len(),
                        if firing.len() == 1 { "" } else { "s" },
                        shown.join(", ")
                    )
                }
                Err(e) => format!("{e}: holding until alerts can be read (--block-on-alerts)"),
            };
            *self.alerts_seen.lock().expect("alerts") =
                Some((tokio::time::Instant::now(), Some(reason.clone())));
            return Open::No {
                what: "alerts",
                reason,
                again_in: self.alerts_every,
            };
        }
        Open::Yes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_gate_is_open_and_a_far_window_is_closed_with_when() {
        let open = Gate {
            windows: Vec::new(),
            alerts: None,
            alerts_every: Duration::from_secs(1),
            announced_until: None,
            alerts_seen: std::sync::Mutex::new(None),
        };
        assert_eq!(open.check().await, Open::Yes);
        let now = kube_conventions::time::now();
        let later = now + jiff::SignedDuration::from_hours(3);
        let z = later.to_zoned(jiff::tz::TimeZone::UTC);
        let spec = format!(
            "{} {}-{} UTC",
            z.strftime("%a"),
            z.strftime("%H:%M:%S"),
            (z.clone() + jiff::SignedDuration::from_hours(1)).strftime("%H:%M:%S")
        );
        let closed = Gate {
            windows: vec![Window::parse(&spec).unwrap()],
            ..open
        };
        match closed.check().await {
            Open::No {
                what,
                reason,
                again_in,
            } => {
                assert_eq!(what, "window");
                assert!(reason.contains("the next opens at"), "{reason}");
                assert_eq!(again_in, WINDOW_NAP);
            }
            Open::Yes => panic!("closed"),
        }
    }
}
