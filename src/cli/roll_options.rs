//! The roll flags turned into a validated plan and options, checked
//! before the first API call.

use std::time::Duration;

use super::RollArgs;
use super::exit::Exit;
use crate::roll::{self, Action, RollOptions, Unattended};

fn duration(flag: &str, value: &str) -> Result<Duration, Exit> {
    crate::duration::parse(value).map_err(|e| Exit::usage(format!("--{flag}: {e}")))
}

/// Everything checked before the first API call.
pub(crate) fn validate(args: &RollArgs) -> Result<(crate::policy::plan::Plan, RollOptions), Exit> {
    let d = &args.drain;
    if d.simulate {
        return Err(Exit::usage(
            "--simulate predicts a drain; roll does not take it (predict each drain with `plan --simulate`)",
        ));
    }
    let (plan, mut drain) = super::drain_options::validate(d, false)?;
    // The roll keeps --max-unavailable as a budget of nodes out at once,
    // not as a refusal of the whole selection.
    let max_unavailable = drain.guards.max_unavailable.take();
    let lease_duration = duration("lease-duration", &args.lease_duration)?;
    if lease_duration < Duration::from_secs(3) {
        return Err(Exit::usage("--lease-duration must be at least 3s"));
    }
    let selection = if let Some(s) = &d.selector {
        format!("-l {s}")
    } else {
        let mut names = d.nodes.clone();
        names.sort();
        names.join(" ")
    };
    let action_words = format!(
        "exec={:?} wait-for-reboot={}",
        args.exec.as_deref().unwrap_or_default(),
        args.wait_for_reboot
    );
    let options = RollOptions {
        action: Action {
            exec: args.exec.clone(),
            wait_for_reboot: args.wait_for_reboot,
            ready_timeout: duration("ready-timeout", &args.ready_timeout)?,
            timeout: duration("action-timeout", &args.action_timeout)?,
            wait_for_budgets: args.wait_for_budgets,
            soak: args
                .soak
                .as_deref()
                .map(|s| duration("soak", s))
                .transpose()?,
        },
        max_unavailable,
        lock_namespace: args.lock_namespace.clone(),
        lease_duration,
        kured: args.kured_daemonset.clone(),
        fresh: args.fresh,
        allow_quorum_loss: d.allow_quorum_loss,
        allow_no_schedulable_nodes: d.allow_no_schedulable_nodes,
        identity: roll::phase::identity(&selection, &action_words),
        since: kube_conventions::time::now().as_millisecond(),
        drain,
        unattended: unattended(args)?,
    };
    Ok((plan, options))
}

/// Notifications, metrics, alerts, windows, hooks: checked before the
/// first API call.
fn unattended(args: &RollArgs) -> Result<Unattended, Exit> {
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
        draino: args.draino_pre_activities,
    })
}
