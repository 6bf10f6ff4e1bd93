//! The roll flags turned into a validated plan and options, checked
//! before the first API call.

use std::time::Duration;

use super::RollArgs;
use super::exit::Exit;
use crate::roll::{Action, RollOptions};

use super::drain_options::duration;

/// Everything checked before the first API call.
pub(crate) fn validate(args: &RollArgs) -> Result<(crate::policy::plan::Plan, RollOptions), Exit> {
    let d = &args.drain;
    if d.simulate {
        return Err(Exit::usage(
            "--simulate predicts a drain; roll does not take it (predict each drain with `plan --simulate`)",
        ));
    }
    let (plan, mut drain) = super::drain_options::validate(d, false)?;
    // A rolled node comes back: autoscalers are kept off it by default.
    drain.marks = super::drain_options::marks(d, true);
    let lease_duration = duration("lease-duration", &args.lease_duration)?;
    if lease_duration < Duration::from_secs(3) {
        return Err(Exit::usage("--lease-duration must be at least 3s"));
    }
    let selection = drain.nodes.words();
    let action_words = format!(
        "exec={:?} wait-for-reboot={}",
        args.exec.as_deref().unwrap_or_default(),
        args.wait_for_reboot
    );
    let options = RollOptions {
        action: Action {
            exec: args
                .exec
                .as_deref()
                .map(crate::roll::Exec::from_flag)
                .transpose()
                .map_err(Exit::usage)?,
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
        lock_namespace: args.lock_namespace.clone(),
        lease_duration,
        kured: args.kured_daemonset.clone(),
        fresh: args.fresh,
        allow_quorum_loss: d.allow_quorum_loss,
        allow_no_schedulable_nodes: d.allow_no_schedulable_nodes,
        identity: crate::pool::unattended::identity(&selection, &action_words),
        since: kube_conventions::time::now().as_millisecond(),
        unattended: crate::pool::unattended::Unattended {
            draino: args.draino_pre_activities,
            ..super::unattended_options::unattended(&d.unattended)?
        },
        drain,
    };
    Ok((plan, options))
}
