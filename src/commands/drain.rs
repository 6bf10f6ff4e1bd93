//! `kubectl maintain drain` and `kubectl maintain plan`: check the input,
//! run the drain, print the report, choose the exit code.

use crate::cli::exit::{self, Exit};
use crate::cli::interaction::{self, Interaction};
use crate::cli::{DrainArgs, drain_options};
use crate::client;
use crate::drain::Ended;
use crate::ui::report;

pub(crate) async fn run(args: DrainArgs, plan_only: bool) -> anyhow::Result<u8> {
    if args.simulate {
        drain_options::simulation_allowed(&args)?;
        #[cfg(feature = "sandbox")]
        if plan_only {
            return crate::simulate::run(args).await;
        }
    }
    let (plan, options) = drain_options::validate(&args, plan_only)?;
    // `drain --simulate`: the predicted drain's verdict first, read before
    // the confirmation (or, without a terminal, before the drain starts).
    #[cfg(feature = "sandbox")]
    if args.simulate {
        match crate::simulate::verdict(&args).await? {
            Ok(verdict) => eprint!("{verdict}"),
            Err(code) => return Ok(code),
        }
    }
    let clients = client::connect(&args.cluster).await?;
    let interaction = Interaction {
        assume_yes: args.yes,
        progress: true,
    };
    let ended = interaction::drain(clients, plan, options, interaction)
        .await
        .map_err(Exit::from)?;
    match &ended {
        Ended::Finished(outcome) => print!("{}", report::render(outcome, args.output)?),
        Ended::Stopped(stopped) => eprintln!("{stopped}"),
    }
    Ok(exit::of_ended(&ended))
}
