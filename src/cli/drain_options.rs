//! The drain flags turned into a validated plan and options: everything
//! checked before the first API call, so any mistake here exits 2 and
//! changes nothing.

use super::exit::Exit;
use super::{DrainArgs, DryRunArg};
use crate::drain::{DryRun, NodeSelection, Options};
use crate::policy::classify::FilterFlags;
use crate::policy::kubelet_version::KubeletRange;
use crate::policy::plan::{self, Plan};
use kube_conventions::selector::Selector;

/// A flag's duration, or exit 2 naming the flag.
pub(super) fn duration(flag: &str, value: &str) -> Result<std::time::Duration, Exit> {
    crate::duration::parse(value).map_err(|e| Exit::usage(format!("--{flag}: {e}")))
}

/// Node names, a node selector or a kubelet version range (narrowed by a
/// selector), checked: names or the others, each well formed.
pub(crate) fn node_selection(
    nodes: &[String],
    selector: Option<&String>,
    kubelet: Option<&KubeletRange>,
) -> Result<NodeSelection, Exit> {
    if let Some(range) = kubelet {
        if !nodes.is_empty() {
            return Err(Exit::usage(
                "cannot specify both node names and --kubelet-version: it chooses the nodes (narrow it with -l)",
            ));
        }
        return Ok(NodeSelection::Kubelet {
            selector: selector.map(|sel| node_selector(sel)).transpose()?,
            range: range.clone(),
        });
    }
    Ok(match (selector, nodes.is_empty()) {
        (Some(_), false) => {
            return Err(Exit::usage("cannot specify both node names and --selector"));
        }
        (None, true) => {
            return Err(Exit::usage(
                "name at least one node, or select nodes with -l/--selector or --kubelet-version",
            ));
        }
        (Some(sel), true) => NodeSelection::Selector(node_selector(sel)?),
        // Each name was checked by crate::cli::node_arg as clap read it.
        (None, false) => NodeSelection::Names(nodes.to_vec()),
    })
}

/// A node selector, well formed and selecting less than every node.
fn node_selector(sel: &str) -> Result<String, Exit> {
    let parsed = Selector::parse(sel).map_err(|e| Exit::usage(format!("--selector: {e}")))?;
    // kubectl's resource builder ignores a selector that is empty once
    // trimmed, and then has nothing to act on (`You must provide one or
    // more resources`): `-l "$POOL"` with POOL unset must never read as
    // every node. Whatever spelling selects every node is refused: the
    // empty one, and anything that parses to no requirement.
    if parsed.is_everything() {
        return Err(Exit::usage(format!(
            "You must provide one or more resources by argument or filename: -l/--selector {sel:?} is empty, which would select every node; name the nodes, or give a selector that says which (-l 'node-role.kubernetes.io/worker' for every worker)"
        )));
    }
    Ok(sel.to_string())
}

/// Everything checked before the first API call: any mistake here exits 2
/// and changes nothing.
pub(crate) fn validate(args: &DrainArgs, plan_only: bool) -> Result<(Plan, Options), Exit> {
    let nodes = node_selection(
        &args.nodes,
        args.selector.as_ref(),
        args.kubelet_version.as_ref(),
    )?;
    if !args.pod_selector.is_empty() {
        Selector::parse(&args.pod_selector)
            .map_err(|e| Exit::usage(format!("--pod-selector: {e}")))?;
    }
    let timeout = duration("timeout", &args.timeout)?;
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
    let deadline = deadline(args, &plan, timeout)?;
    let taints = taints(args, &plan)?;
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
        allow_short_deadline: args.allow_short_deadline,
        surge: args.surge || plan.surge,
        detach_wait: if args.skip_wait_for_detach {
            None
        } else {
            Some(duration("detach-timeout", &args.detach_timeout)?)
        },
        lost_pod_timeout: Some(duration("lost-pod-timeout", &args.lost_pod_timeout)?)
            .filter(|d| !d.is_zero()),
        node_shut_down: args.node_shut_down.then(|| match &args.fence_command {
            Some(cmd) => crate::drain::out_of_service::Proof::Fence(cmd.clone()),
            None => crate::drain::out_of_service::Proof::Typed,
        }),
        pod_selector: (!args.pod_selector.is_empty()).then(|| args.pod_selector.clone()),
        disable_eviction: args.disable_eviction,
        eviction_api: args.eviction_api,
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
        marks: marks(args, false),
        reason: args.reason.clone(),
        max_unavailable,
        plan_reads_budgets: plan_only && args.dry_run == DryRunArg::None,
    };
    Ok((plan, options))
}

/// `--label-during`'s labels, then `--protect-from-autoscalers`'
/// annotations, on by default when `protect` is (a roll's nodes come back).
pub(super) fn marks(args: &DrainArgs, protect: bool) -> Vec<crate::policy::maintenance::MarkSpec> {
    let mut marks = args.label_during.clone();
    if args.protect_from_autoscalers.unwrap_or(protect) {
        marks.extend(crate::policy::maintenance::MarkSpec::autoscalers());
    }
    marks
}

/// `--deadline` or the plan's (the flag wins), shorter than `--timeout`.
fn deadline(
    args: &DrainArgs,
    plan: &Plan,
    timeout: std::time::Duration,
) -> Result<Option<std::time::Duration>, Exit> {
    let flag = match &args.deadline {
        Some(d) => Some(duration("deadline", d)?),
        None => None,
    };
    let deadline = flag.or(plan.deadline);
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
    Ok(deadline)
}

/// The maintenance taints: the plan's, then each `--taint` not among them.
fn taints(
    args: &DrainArgs,
    plan: &Plan,
) -> Result<Vec<crate::policy::maintenance::TaintSpec>, Exit> {
    let mut taints = plan.taints.clone();
    for t in &args.taints {
        let t = crate::policy::maintenance::TaintSpec::parse(t)
            .map_err(|e| Exit::usage(format!("--taint: {e}")))?;
        if !taints.contains(&t) {
            taints.push(t);
        }
    }
    Ok(taints)
}

/// `--simulate` (a drain predicted on a copy of the cluster) goes without
/// `--dry-run`, in a build with the sandbox.
pub(crate) fn simulation_allowed(args: &DrainArgs) -> Result<(), Exit> {
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
