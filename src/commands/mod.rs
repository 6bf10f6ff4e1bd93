//! One module per subcommand; each takes its parsed arguments and returns
//! the exit code.

pub(crate) mod abort;
#[cfg(feature = "sandbox")]
pub(crate) mod demo;
pub(crate) mod drain;
pub(crate) mod logs;
pub(crate) mod roll;
#[cfg(feature = "sandbox")]
pub(crate) mod sandbox;
pub(crate) mod status;
pub(crate) mod uncordon;

use crate::cli::{Cli, Command};

/// Runs one subcommand; the exit code it calls for.
pub async fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        #[cfg(feature = "sandbox")]
        Command::Sandbox(args) => sandbox::run(args).await,
        #[cfg(feature = "sandbox")]
        Command::Demo(args) => demo::run(args).await,
        Command::Roll(args) => {
            let cluster = args.drain.cluster.clone();
            let code = Box::pin(roll::run(*args)).await?;
            crate::in_cluster::retire(&cluster, code).await;
            Ok(code)
        }
        Command::Uncordon(args) => uncordon::run(args).await,
        Command::Status(args) => status::run(args).await,
        Command::Logs(args) => logs::run(args).await,
        Command::Abort(args) => abort::run(args).await,
        Command::Completion { shell } => {
            crate::out!("{}", crate::cli::completion::script(shell));
            Ok(crate::cli::exit::OK)
        }
        Command::Drain(args) => {
            let cluster = args.cluster.clone();
            let code = drain::run(args, false).await?;
            crate::in_cluster::retire(&cluster, code).await;
            Ok(code)
        }
        Command::Plan(args) => drain::run(args, true).await,
    }
}
