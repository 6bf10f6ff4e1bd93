//! One module per subcommand; each takes its parsed arguments and returns
//! the exit code.

pub mod sandbox;

use crate::cli::{Cli, Command};

pub async fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Sandbox(args) => sandbox::run(args).await,
    }
}
