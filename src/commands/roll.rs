//! `kubectl maintain roll`: check the input, show the order, confirm, run
//! the roll, print the report, choose the exit code.

use std::time::Duration;

use crate::cli::exit::{self, Exit};
use crate::cli::{DryRunArg, RollArgs};
use crate::client;
use crate::roll::{self, Action, RollOptions};
use crate::ui::listeners::{self, Display};
use crate::ui::{confirm, roll_report};

fn duration(flag: &str, value: &str) -> Result<Duration, Exit> {
    crate::duration::parse(value).map_err(|e| Exit::usage(format!("--{flag}: {e}")))
}

/// Everything checked before the first API call.
fn validate(args: &RollArgs) -> Result<(crate::policy::plan::Plan, RollOptions), Exit> {
    let d = &args.drain;
    if d.simulate {
        return Err(Exit::usage(
            "--simulate predicts a drain; roll does not take it (predict each drain with `plan --simulate`)",
        ));
    }
    let (plan, mut drain) = super::drain::validate(d, false)?;
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
    };
    Ok((plan, options))
}

pub(crate) async fn run(args: RollArgs) -> anyhow::Result<u8> {
    let (plan, options) = validate(&args)?;
    let clients = client::connect(&args.drain.cluster).await?;
    let dry_run = args.drain.dry_run != DryRunArg::None;
    let (events, listeners) = listeners::start(
        &clients.main,
        Display::Auto,
        !dry_run,
        options.drain.reason.clone(),
    );
    let order = roll::order(&clients, &options, &events)
        .await
        .map_err(super::drain::drain_error)?;
    let width = options.drain.max_parallel;
    let shown = roll_report::order(&order.groups, width, options.drain.by_zone);
    if order.all_done {
        eprintln!(
            "Every selected node was done by an earlier run of this roll ({}): nothing to do; --fresh rolls them again.",
            options.identity
        );
        return Ok(exit::OK);
    }
    if dry_run {
        println!(
            "Roll {} would take the nodes up to {width} at a time{} (nothing was changed):\n{shown}",
            options.identity,
            args.drain
                .max_unavailable
                .as_deref()
                .map(|m| format!(", within --max-unavailable {m}"))
                .unwrap_or_default()
        );
        return Ok(exit::OK);
    }
    if !args.drain.yes && confirm::interactive() {
        eprint!(
            "Roll {}, up to {width} nodes at a time:\n{shown}",
            options.identity
        );
        if !confirm::ask("Roll now?".into()).await {
            eprintln!("nothing was changed");
            return Ok(exit::INCOMPLETE);
        }
    }
    let interrupt = super::drain::interrupt_on_ctrl_c();
    let outcome = roll::run(clients, plan, options, order, events, interrupt).await;
    listeners.finish().await;
    let outcome = outcome.map_err(super::drain::drain_error)?;
    print!("{}", roll_report::render(&outcome, args.drain.output)?);
    Ok(outcome.exit_code())
}
