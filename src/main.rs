use std::process::ExitCode;

use clap::Parser;
use kubectl_maintain::{cli::Cli, commands, exit};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    exit::report(runtime.block_on(commands::run(cli)))
}
