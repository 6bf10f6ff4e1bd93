//! What a run nobody watches needs, a drain's as a roll's (#31, #53): who
//! to tell, metrics, and what to wait for besides the pool's room.

use std::time::Duration;

use super::gate::Gate;

#[derive(Debug, Clone, Default)]
pub(crate) struct Unattended {
    pub(crate) notify: crate::notify::NotifyOptions,
    pub(crate) metrics_addr: Option<String>,
    pub(crate) pushgateway: Option<crate::outbound::Url>,
    /// `--block-on-alerts` and `--alert-filter`.
    pub(crate) alerts: Option<(crate::outbound::Url, Option<regex::Regex>)>,
    pub(crate) alerts_every: Duration,
    pub(crate) windows: Vec<crate::policy::window::Window>,
    pub(crate) announce: Option<Duration>,
    pub(crate) draino: bool,
}

impl Unattended {
    /// Does anything hold the next node besides the room (a gate)?
    pub(crate) fn gated(&self) -> bool {
        self.alerts.is_some() || !self.windows.is_empty() || self.announce.is_some()
    }

    /// The gate of the next node.
    pub(crate) fn gate(&self) -> Gate {
        Gate {
            windows: self.windows.clone(),
            alerts: self
                .alerts
                .as_ref()
                .map(|(url, filter)| super::alerts::Alerts::new(url, filter.clone())),
            alerts_every: self.alerts_every,
            announced_until: self.announce.map(|d| {
                kube_conventions::time::now()
                    .checked_add(jiff::SignedDuration::try_from(d).unwrap_or_default())
                    .unwrap_or_else(|_| kube_conventions::time::now())
            }),
            alerts_seen: std::sync::Mutex::new(None),
        }
    }

    /// Binds `--metrics-addr` before anything else: a taken address stops
    /// the run before it changes anything.
    pub(crate) async fn bind_metrics(&self) -> Result<Option<tokio::net::TcpListener>, String> {
        match &self.metrics_addr {
            Some(addr) => crate::metrics::serve::bind(addr).await.map(Some),
            None => Ok(None),
        }
    }
}

/// A run's identity: the same command (its nodes and what it does) gives
/// the same one, so that a rerun resumes a roll and is the same series.
pub(crate) fn identity(selection: &str, what: &str) -> String {
    let text = format!("{selection}\n{what}");
    format!("{:016x}", kube_conventions::fnv1a(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_command_is_the_same_run() {
        use super::identity;
        assert_eq!(identity("-l a=b", "x"), identity("-l a=b", "x"));
        assert_ne!(identity("-l a=b", "x"), identity("-l a=b", "y"));
    }
}
