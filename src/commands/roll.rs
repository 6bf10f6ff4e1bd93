//! `kubectl maintain roll`: check the input, show the order, confirm, run
//! the roll, print the report, choose the exit code.

use crate::cli::exit::Exit;
use crate::cli::{DryRunArg, RollArgs, interrupt, roll_options};
use crate::client;
use crate::roll;
use crate::ui::listeners::{self, Display};
use crate::ui::{confirm, roll_report};

pub(crate) async fn run(args: RollArgs) -> anyhow::Result<u8> {
    if args.drain.in_cluster {
        return crate::in_cluster::submit(crate::in_cluster::Run::Roll(&args)).await;
    }
    let (plan, options) = roll_options::validate(&args)?;
    let metrics = (options.unattended.bind_metrics().await).map_err(Exit::usage)?;
    let clients = client::connect(&args.drain.cluster).await?;
    let dry_run = args.drain.dry_run != DryRunArg::None;
    let (events, listeners) = listeners::start(Display::Auto);
    let order = match roll::order(&clients, &options, &events).await {
        // As `drain -l` (and kubectl drain -l): nothing matching is
        // nothing to do, exit 0.
        Err(crate::vocabulary::DrainError::NoNodesMatch(selector)) => {
            listeners.finish().await;
            crate::errln!("No nodes match the selector {selector:?}: nothing to roll.");
            return Ok(crate::exit_codes::NOTHING_TO_DO);
        }
        order => order.map_err(Exit::from)?,
    };
    roll::refusals(&clients, &plan, &options, &events)
        .await
        .map_err(Exit::from)?;
    let width = options.drain.max_parallel;
    let shown = roll_report::order(&order.groups, width, options.drain.by_zone);
    if order.all_done {
        crate::errln!(
            "Every selected node was done by an earlier run of this roll ({}): nothing to do; --fresh rolls them again.",
            options.identity
        );
        return Ok(crate::exit_codes::NOTHING_TO_DO);
    }
    if dry_run {
        crate::outln!(
            "Roll {} would take the nodes up to {width} at a time{} (nothing was changed):\n{shown}",
            options.identity,
            args.drain
                .max_unavailable
                .as_deref()
                .map(|m| format!(", within --max-unavailable {m}"))
                .unwrap_or_default()
        );
        return Ok(crate::exit_codes::NOTHING_TO_DO);
    }
    if !args.drain.yes && confirm::interactive() {
        crate::err!(
            "Roll {}, up to {width} nodes at a time:\n{shown}",
            options.identity
        );
        if !confirm::ask("Roll now?".into()).await {
            crate::errln!("nothing was changed");
            return Ok(crate::exit_codes::DECLINED);
        }
    }
    let interrupt = interrupt::on_ctrl_c();
    let outcome = roll::run(clients, plan, options, order, events, interrupt, metrics).await;
    listeners.finish().await;
    let outcome = outcome.map_err(Exit::from)?;
    crate::out!("{}", roll_report::render(&outcome, args.drain.format())?);
    Ok(crate::exit_codes::of_roll(&outcome))
}
