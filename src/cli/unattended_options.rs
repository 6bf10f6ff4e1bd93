//! What a drain or a roll nobody watches takes (notifications, metrics,
//! alerts, windows), checked before the first API call.

use std::time::Duration;

use super::UnattendedArgs;
use super::exit::Exit;
use crate::pool::unattended::Unattended;

use super::drain_options::duration;

/// Notifications, metrics, alerts, windows: checked before the first API
/// call.
pub(crate) fn unattended(args: &UnattendedArgs) -> Result<Unattended, Exit> {
    let mut templates = crate::notify::notice::Templates::default();
    for t in &args.notify_template {
        templates.set(t).map_err(Exit::usage)?;
    }
    let resolve = |flag: &str, u: &str| crate::outbound::resolve(flag, u).map_err(Exit::usage);
    let endpoints = args
        .notify
        .iter()
        .map(|u| {
            crate::notify::endpoint::Endpoint::parse(&resolve("--notify", u)?).map_err(Exit::usage)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let url = |flag: &str, u: &str| {
        let flag = format!("--{flag}");
        crate::outbound::Url::parse(&flag, &resolve(&flag, u)?).map_err(Exit::usage)
    };
    let filter = args
        .alert_filter
        .as_deref()
        .map(|f| {
            regex::Regex::new(f).map_err(|e| Exit::usage(format!("--alert-filter {f:?}: {e}")))
        })
        .transpose()?;
    let alerts = args
        .block_on_alerts
        .as_deref()
        .map(|u| url("block-on-alerts", u))
        .transpose()?
        .map(|u| (u, filter));
    let windows = args
        .window
        .iter()
        .map(|w| crate::policy::window::Window::parse(w))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Exit::usage(e.to_string()))?;
    Ok(Unattended {
        notify: crate::notify::NotifyOptions {
            endpoints,
            after: duration("notify-after", &args.notify_after)?,
            templates,
        },
        metrics_addr: args.metrics_addr.clone(),
        pushgateway: args
            .pushgateway
            .as_deref()
            .map(|u| url("pushgateway", u))
            .transpose()?,
        alerts,
        alerts_every: duration("alert-check-interval", &args.alert_check_interval)?
            .max(Duration::from_secs(1)),
        windows,
        announce: args
            .announce
            .as_deref()
            .map(|a| duration("announce", a))
            .transpose()?,
        draino: false,
    })
}
