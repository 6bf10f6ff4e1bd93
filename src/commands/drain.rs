//! `kubectl maintain drain` and `kubectl maintain plan`: check the input,
//! run the drain, print the report, choose the exit code.

use crate::cli::exit::Exit;
use crate::cli::interaction::{self, Interaction};
use crate::cli::{DrainArgs, LinesArg, drain_options, unattended_options};
use crate::client;
use crate::drain::{Ended, Options};
use crate::ui::kubectl::{self, Script};
use crate::ui::listeners::Display;
use crate::ui::report;

pub(crate) async fn run(args: DrainArgs, plan_only: bool) -> anyhow::Result<u8> {
    if args.in_cluster {
        if plan_only {
            return Err(
                Exit::usage("--in-cluster runs a drain or a roll; plan changes nothing").into(),
            );
        }
        return crate::in_cluster::submit(crate::in_cluster::Run::Drain(&args)).await;
    }
    if args.simulate {
        drain_options::simulation_allowed(&args)?;
        #[cfg(feature = "sandbox")]
        if plan_only {
            return crate::simulate::run(args).await;
        }
    }
    if args.lines == LinesArg::Kubectl && args.output.is_some() {
        return Err(Exit::usage(
            "--lines=kubectl and -o cannot be used together: -o puts the report alone on stdout",
        )
        .into());
    }
    let (plan, options) = drain_options::validate(&args, plan_only)?;
    let unattended = unattended_options::unattended(&args.unattended)?;
    // A taken --metrics-addr stops the drain before it changes anything.
    let metrics = if plan_only {
        None
    } else {
        unattended.bind_metrics().await.map_err(Exit::usage)?
    };
    if !plan.hooks.is_empty() {
        crate::errln!(
            "warning: {}: spec.hooks are waited on by `kubectl maintain roll`; this drain does not wait on them",
            plan.source
        );
    }
    // `drain --simulate`: the predicted drain's verdict first, read before
    // the confirmation (or, without a terminal, before the drain starts).
    #[cfg(feature = "sandbox")]
    if args.simulate {
        match crate::simulate::verdict(&args).await? {
            Ok(verdict) => crate::err!("{verdict}"),
            Err(code) => return Ok(code),
        }
    }
    let clients = client::connect(&args.cluster).await?;
    // `plan` is ours alone; a drain read by a script speaks kubectl's lines.
    let script = if !plan_only && kubectl::wanted(args.lines, args.output.is_some()) {
        Some(script(&clients, &options).await?)
    } else {
        None
    };
    let interaction = Interaction {
        assume_yes: args.yes,
        display: match script {
            Some(script) => Display::Kubectl(Box::new(script)),
            None => Display::Auto,
        },
        unattended,
        metrics,
    };
    let (ended, script) = interaction::drain(clients, plan, options, interaction).await;
    let ended = ended.map_err(Exit::from)?;
    match (&ended, script) {
        (Ended::Finished(outcome), Some(mut script)) => {
            kubectl::write(&script.end(Some(outcome)));
            // Our report after kubectl's last line, where a script's
            // stdout does not meet it.
            crate::err!("{}", report::render_for_script(outcome));
        }
        (Ended::Finished(outcome), None) => {
            crate::out!("{}", report::render(outcome, args.format())?);
        }
        (Ended::Stopped(stopped), _) => crate::errln!("{stopped}"),
    }
    Ok(crate::exit_codes::of_ended(&ended))
}

/// kubectl's lines for this drain, in the words of the server's minor.
async fn script(clients: &client::Clients, options: &Options) -> Result<Script, kube::Error> {
    Ok(Script::new(kubectl::Config {
        dialect: kubectl::dialect(clients).await?,
        dry_run: options.dry_run,
        disable_eviction: options.disable_eviction,
        timeout: options.timeout,
    }))
}
