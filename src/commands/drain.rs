//! `kubectl maintain drain` and `kubectl maintain plan`: check the input,
//! run the engine, print the report, choose the exit code.

use tokio::sync::watch;

use crate::cli::exit::{self, Exit};
use crate::cli::{DrainArgs, DryRunArg, OutputFormat};
use crate::client;
use crate::drain::outcome::{DrainOutcome, NodeStatus, PodResult};
use crate::drain::prepare::NodeSelection;
use crate::drain::{self, DrainError, DryRun, Options};
use crate::policy::classify::FilterFlags;
use crate::policy::plan::{self, Plan};
use crate::ui::listeners::{self, Display};
use crate::ui::{confirm, report};
use kube_conventions::selector::Selector;

/// Node names or a node selector, checked: one or the other, well formed.
pub(crate) fn node_selection(
    nodes: &[String],
    selector: Option<&String>,
) -> Result<NodeSelection, Exit> {
    Ok(match (selector, nodes.is_empty()) {
        (Some(_), false) => {
            return Err(Exit::usage("cannot specify both node names and --selector"));
        }
        (None, true) => {
            return Err(Exit::usage(
                "name at least one node, or select nodes with -l/--selector",
            ));
        }
        (Some(sel), true) => {
            Selector::parse(sel).map_err(|e| Exit::usage(format!("--selector: {e}")))?;
            NodeSelection::Selector(sel.clone())
        }
        (None, false) => {
            if let Some(bad) = nodes.iter().find(|n| n.is_empty() || n.contains('/')) {
                return Err(Exit::usage(format!("{bad:?} is not a node name")));
            }
            NodeSelection::Names(nodes.to_vec())
        }
    })
}

/// Everything checked before the first API call: any mistake here exits 2
/// and changes nothing.
pub(crate) fn validate(args: &DrainArgs, plan_only: bool) -> Result<(Plan, Options), Exit> {
    let nodes = node_selection(&args.nodes, args.selector.as_ref())?;
    if !args.pod_selector.is_empty() {
        Selector::parse(&args.pod_selector)
            .map_err(|e| Exit::usage(format!("--pod-selector: {e}")))?;
    }
    let timeout = crate::duration::parse(&args.timeout)
        .map_err(|e| Exit::usage(format!("--timeout: {e}")))?;
    let deadline = match &args.deadline {
        Some(d) => {
            Some(crate::duration::parse(d).map_err(|e| Exit::usage(format!("--deadline: {e}")))?)
        }
        None => None,
    };
    // kubectl reads a negative --skip-wait-for-delete-timeout as off and a
    // negative --chunk-size as no paging; so do we.
    if args.chunk_size > i64::from(u32::MAX) {
        return Err(Exit::usage(format!(
            "--chunk-size must be at most {}",
            u32::MAX
        )));
    }
    if args.max_parallel == 0 {
        return Err(Exit::usage("--max-parallel must be at least 1"));
    }
    let plan = match &args.plan {
        Some(path) => plan::file::load(path).map_err(|e| Exit::usage(e.to_string()))?,
        None => plan::defaults::plan(),
    };
    // The flag wins over the plan's.
    let deadline = deadline.or(plan.deadline);
    if let Some(d) = deadline
        && !timeout.is_zero()
        && d >= timeout
    {
        let which = match &args.deadline {
            Some(text) => format!("--deadline {text}"),
            None => format!("the plan's deadline {}", crate::duration::human(d)),
        };
        return Err(Exit::usage(format!(
            "{which} must be shorter than --timeout {}: the drain would give up before the deadline",
            args.timeout
        )));
    }
    let mut taints = plan.taints.clone();
    for t in &args.taints {
        let t = crate::policy::maintenance::TaintSpec::parse(t)
            .map_err(|e| Exit::usage(format!("--taint: {e}")))?;
        if !taints.contains(&t) {
            taints.push(t);
        }
    }
    let max_unavailable = args
        .max_unavailable
        .as_deref()
        .map(crate::policy::guard::MaxUnavailable::parse)
        .transpose()
        .map_err(|e| Exit::usage(format!("--max-unavailable: {e}")))?;
    let dry_run = match (args.dry_run, plan_only) {
        (DryRunArg::Server, _) => DryRun::Server,
        (DryRunArg::Client, _) | (DryRunArg::None, true) => DryRun::Client,
        (DryRunArg::None, false) => DryRun::None,
    };
    let options = Options {
        nodes,
        flags: FilterFlags {
            force: args.force,
            ignore_daemonsets: args.ignore_daemonsets,
            delete_emptydir_data: args.delete_emptydir_data,
            skip_wait_for_delete_timeout: u64::try_from(args.skip_wait_for_delete_timeout)
                .unwrap_or(0),
            ignore_markers: args.ignore_markers,
        },
        grace_period: (args.grace_period >= 0).then_some(args.grace_period),
        timeout: (!timeout.is_zero()).then_some(timeout),
        deadline,
        deadline_overrides_markers: args.deadline_overrides_markers,
        surge: args.surge || plan.surge,
        detach_wait: if args.skip_wait_for_detach {
            None
        } else {
            Some(
                crate::duration::parse(&args.detach_timeout)
                    .map_err(|e| Exit::usage(format!("--detach-timeout: {e}")))?,
            )
        },
        pod_selector: (!args.pod_selector.is_empty()).then(|| args.pod_selector.clone()),
        disable_eviction: args.disable_eviction,
        chunk_size: u32::try_from(args.chunk_size).unwrap_or(0),
        dry_run,
        max_parallel: args.max_parallel,
        by_zone: args.by_zone,
        max_blocked_nodes: args.max_blocked_nodes,
        all_or_nothing: args.all_or_nothing,
        taints,
        node_conditions: args.node_conditions,
        labels: if args.exclude_from_load_balancers {
            vec![(
                crate::policy::maintenance::EXCLUDE_FROM_LOAD_BALANCERS.to_string(),
                "true".to_string(),
            )]
        } else {
            Vec::new()
        },
        reason: args.reason.clone(),
        guards: crate::policy::guard::Guards { max_unavailable },
    };
    Ok((plan, options))
}

/// The exit code a drain's outcome calls for.
pub(crate) fn exit_code(outcome: &DrainOutcome) -> u8 {
    let statuses: Vec<NodeStatus> = outcome.nodes.iter().map(|n| n.status).collect();
    if statuses.contains(&NodeStatus::Interrupted) {
        return exit::INTERRUPTED;
    }
    if statuses.contains(&NodeStatus::Failed) {
        return exit::FAILURE;
    }
    let blocked_dry_run = outcome.nodes.iter().any(|n| {
        n.status == NodeStatus::DryRun
            && (n.message.is_some()
                || n.pods
                    .iter()
                    .any(|p| matches!(p.result, PodResult::WouldBlock { .. })))
    });
    if blocked_dry_run
        || statuses.iter().any(|s| {
            matches!(
                s,
                NodeStatus::Refused | NodeStatus::TimedOut | NodeStatus::NotStarted
            )
        })
    {
        return exit::INCOMPLETE;
    }
    exit::OK
}

/// Ctrl-C once: stop evicting, report, exit 130. Twice: exit at once.
pub(crate) fn interrupt_on_ctrl_c() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("interrupted: stopping new evictions (Ctrl-C again to quit at once)");
            let _ = tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                // Leave the terminal as it was: the bars and the prompt
                // hide the cursor while they draw.
                let term = dialoguer::console::Term::stderr();
                if term.is_term() {
                    let _ = term.show_cursor();
                    eprintln!();
                }
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        }
    });
    rx
}

pub(crate) async fn run(args: DrainArgs, plan_only: bool) -> anyhow::Result<u8> {
    if args.simulate {
        simulation_allowed(&args)?;
        #[cfg(feature = "sandbox")]
        if plan_only {
            return crate::simulate::run(args).await;
        }
    }
    let (plan, options) = validate(&args, plan_only)?;
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
    execute(
        clients,
        plan,
        options,
        args.output,
        Interaction {
            assume_yes: args.yes,
            progress: true,
        },
    )
    .await
}

/// `--simulate` (a drain predicted on a copy of the cluster) goes without
/// `--dry-run`, in a build with the sandbox.
fn simulation_allowed(args: &DrainArgs) -> Result<(), Exit> {
    if args.dry_run != DryRunArg::None {
        return Err(Exit::usage(
            "--simulate and --dry-run are two different previews: give one",
        ));
    }
    if cfg!(not(feature = "sandbox")) {
        return Err(Exit::usage(
            "--simulate needs the sandbox, which this build leaves out (the `sandbox` feature)",
        ));
    }
    Ok(())
}

#[allow(clippy::needless_pass_by_value)] // used as map_err(drain_error)
pub(crate) fn drain_error(e: drain::DrainError) -> Exit {
    let code = if e.is_usage() {
        exit::USAGE
    } else {
        exit::FAILURE
    };
    // The whole chain, as kubectl prints an error: "list pods: <why>".
    let mut message = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        message = format!("{message}: {s}");
        source = s.source();
    }
    Exit { code, message }
}

/// How a drain meets the person running it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Interaction {
    /// `--yes`: never ask before draining.
    pub(crate) assume_yes: bool,
    /// Progress on stderr, as bars on a terminal or as lines; off for the
    /// prediction `drain --simulate` shows before the real drain.
    pub(crate) progress: bool,
}

/// Runs a validated drain against a cluster and prints its report.
pub(crate) async fn execute(
    clients: client::Clients,
    plan: Plan,
    options: Options,
    output: OutputFormat,
    interaction: Interaction,
) -> anyhow::Result<u8> {
    match run_drain(clients, plan, options, interaction).await? {
        Ok(outcome) => {
            print!("{}", report::render(&outcome, output)?);
            Ok(exit_code(&outcome))
        }
        Err(code) => Ok(code),
    }
}

/// Runs a validated drain: its outcome, or the exit code when it ended
/// before draining (no node matched, the operator said no).
pub(crate) async fn run_drain(
    clients: client::Clients,
    plan: Plan,
    options: Options,
    interaction: Interaction,
) -> anyhow::Result<Result<DrainOutcome, u8>> {
    let display = if interaction.progress {
        Display::Auto
    } else {
        Display::Quiet
    };
    let (events, listeners) = listeners::start(
        &clients.main,
        display,
        options.dry_run == DryRun::None,
        options.reason.clone(),
    );
    let interrupt = interrupt_on_ctrl_c();
    let dry_run = options.dry_run;
    let all_or_nothing = options.all_or_nothing;
    let deadline = options.deadline.is_some();
    let prepared = match drain::prepare(clients, plan.clone(), options, events, interrupt).await {
        Ok(p) => p,
        // kubectl drain -l exits 0 when nothing matches; loops over pools rely on it.
        Err(DrainError::NoNodesMatch(selector)) => {
            eprintln!("No nodes match the selector {selector:?}: nothing to drain.");
            return Ok(Err(exit::OK));
        }
        Err(e) => return Err(drain_error(e).into()),
    };
    let nothing_changes = prepared.refused() && all_or_nothing;
    let confirming = dry_run == DryRun::None
        && !interaction.assume_yes
        && !nothing_changes
        && confirm::interactive();
    if !confirming {
        for w in prepared.warnings() {
            eprintln!("warning: {w}");
        }
    }
    if confirming {
        let preview = prepared.preview();
        let tight = prepared.tight_budgets().await;
        eprint!(
            "{}",
            confirm::describe(&preview, &tight, prepared.warnings(), deadline)
        );
        if !confirm::ask("Drain now?".into()).await {
            eprintln!("nothing was changed");
            return Ok(Err(exit::INCOMPLETE));
        }
    }
    let result = prepared.execute().await;
    // The engine dropped its sender: the listeners drain what is left and end.
    listeners.finish().await;
    Ok(Ok(result.map_err(drain_error)?))
}
