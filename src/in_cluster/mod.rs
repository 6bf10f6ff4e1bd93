//! `--in-cluster`: a drain or roll handed to the cluster as a Job. The flags
//! are checked as the run would check them (exit 2 before any request), the
//! objects are rendered (render.rs) with the permissions the flags need
//! (rbac.rs) and the command line the Job runs (argv.rs), then printed
//! (`--render`) or applied with server-side apply, the submitter's identity
//! (SelfSubjectReview) recorded on the Job and in an Event.

pub(crate) mod abort;
mod argv;
pub(crate) mod logs;
mod rbac;
mod render;
mod retire;
pub(crate) mod run;
mod submit;
pub(crate) mod watch;

use clap::CommandFactory;

use crate::cli::exit::Exit;
use crate::cli::{Cli, DrainArgs, RollArgs, drain_options, roll_options};
use crate::drain::Options;
use crate::policy::plan::Plan;

pub(crate) use retire::retire;
pub(crate) use submit::{submit, whoami};

/// What kind of run is handed over.
pub(crate) enum Run<'a> {
    Drain(&'a DrainArgs),
    Roll(&'a RollArgs),
}

impl Run<'_> {
    fn drain(&self) -> &DrainArgs {
        match self {
            Run::Drain(d) => d,
            Run::Roll(r) => &r.drain,
        }
    }

    fn verb(&self) -> &'static str {
        match self {
            Run::Drain(_) => "drain",
            Run::Roll(_) => "roll",
        }
    }
}

/// Refuses what cannot run in a pod, and checks the rest as the run will:
/// its plan and its drain's options.
fn validate(run: &Run<'_>) -> Result<(Plan, Options), Exit> {
    let d = run.drain();
    let refuse = |what: &str| {
        Err(Exit::usage(format!(
            "--in-cluster cannot be used with {what}"
        )))
    };
    if d.simulate {
        return refuse("--simulate (predict it here first, then submit it)");
    }
    if d.dry_run != crate::cli::DryRunArg::None {
        return refuse("--dry-run (--render shows what would be applied)");
    }
    let shell = match run {
        Run::Roll(r) if r.exec.is_some() => Some("--exec"),
        _ if d.fence_command.is_some() => Some("--fence-command"),
        _ => None,
    };
    if let Some(flag) = shell
        && d.image.is_none()
    {
        return Err(Exit::usage(format!(
            "{flag} runs through sh -c in the Job's container, and the kubectl-maintain image has no shell: give --image with one"
        )));
    }
    match run {
        Run::Drain(d) => drain_options::validate(d, false),
        Run::Roll(r) => roll_options::validate(r).map(|(plan, o)| (plan, o.drain)),
    }
}

/// Does this flag of the subcommand read the next argument as its value?
/// From clap's own definition; flags written `--flag=value` only (kubectl's
/// booleans) do not.
fn takes_value(verb: &str) -> impl Fn(&str) -> bool + use<> {
    let mut cli = Cli::command();
    cli.build();
    let valued: std::collections::HashSet<String> = cli
        .find_subcommand(verb)
        .into_iter()
        .flat_map(clap::Command::get_arguments)
        .filter(|a| a.get_action().takes_values() && !a.is_require_equals_set())
        .flat_map(|a| {
            let longs = a
                .get_long_and_visible_aliases()
                .into_iter()
                .flatten()
                .map(|l| format!("--{l}"));
            let shorts = a
                .get_short_and_visible_aliases()
                .into_iter()
                .flatten()
                .map(|s| format!("-{s}"));
            longs.chain(shorts).collect::<Vec<_>>()
        })
        .collect();
    move |flag| valued.contains(flag)
}
