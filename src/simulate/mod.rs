//! `kubectl maintain plan --simulate`: the drain predicted by running it,
//! with every flag and plan the real one gets, against an in-process copy of
//! the cluster (the sandbox, which schedules and disrupts as the control
//! plane does) on a simulated clock: a paused tokio runtime, where time jumps
//! to the next timer whenever nothing is ready, so pods' shutdowns and
//! readiness, budgets' waits and the drain's retries pass as fast as the work
//! allows (kube_sandbox::follow_tokio_clock). The live cluster is only read.

mod assume;
mod recovery;
mod snapshot;
mod times_file;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use kube_sandbox::{Sandbox, SandboxConfig, scenario};

use crate::cli::exit::{self, Exit};
use crate::cli::interaction::{self, Interaction};
use crate::cli::{DrainArgs, drain_options};
use crate::client;
use crate::drain::{Ended, Options};
use crate::policy::plan::Plan;
use crate::ui::listeners::Display;
use crate::vocabulary::outcome::{DrainOutcome, Prediction, Replacement};

/// How far a drain without `--timeout`, which would wait for ever, is
/// followed before the prediction stops.
const HORIZON: Duration = Duration::from_secs(3600);
/// Changes the copy remembers: every one the simulated drain makes.
const HISTORY: usize = 2_000_000;

/// `plan --simulate`: the predicted drain's report, and the exit code the
/// drain would have.
pub(crate) async fn run(args: DrainArgs) -> anyhow::Result<u8> {
    let output = args.format();
    match predict(&args, true).await? {
        Ok((outcome, prediction)) => {
            crate::out!(
                "{}",
                crate::ui::report::render_with(&outcome, Some(&prediction), output)?
            );
            Ok(crate::exit_codes::of_outcome(&outcome))
        }
        Err(code) => Ok(code),
    }
}

/// `drain --simulate`: the predicted drain in a few lines, to read before
/// the real one starts; or the exit code when it would not start.
pub(crate) async fn verdict(args: &DrainArgs) -> anyhow::Result<Result<String, u8>> {
    Ok(predict(args, false)
        .await?
        .map(|(outcome, prediction)| crate::ui::report::verdict(&outcome, &prediction)))
}

/// The drain `args` asks for, run on a copy of the cluster (or of the
/// `--from` file); `progress` shows its lines or bars as it runs.
async fn predict(
    args: &DrainArgs,
    progress: bool,
) -> anyhow::Result<Result<(DrainOutcome, Prediction), u8>> {
    // The real drain's plan and options, validated as the real drain's are.
    let (plan, mut options) = drain_options::validate(args, false)?;
    // Without --timeout the real drain may wait for ever: follow it this far.
    let horizon = options.timeout.is_none().then_some(HORIZON);
    options.timeout = options.timeout.or(horizon);
    let duration = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|d| crate::duration::parse(d).map_err(|e| Exit::usage(format!("{flag}: {e}"))))
            .transpose()
    };
    let workloads = match &args.assume_times {
        Some(path) => times_file::load(path).map_err(|e| Exit::usage(e.to_string()))?,
        None => Vec::new(),
    };
    let assumptions = assume::Assumptions {
        shutdown: duration("--assume-shutdown", &args.assume_shutdown)?,
        ready: duration("--assume-ready", &args.assume_ready)?,
        workloads,
    };
    // Long enough for the replacements to be found in it afterwards.
    let with_history = |config: SandboxConfig| SandboxConfig {
        watch_history: config.watch_history.max(HISTORY),
        ..config
    };
    // A thread of its own: the simulated clock must not stop the live one.
    // `defaulted`: the objects come from an API server (not a file).
    let run = move |objects: Box<dyn Iterator<Item = _> + Send>,
                    config,
                    failed,
                    source: String,
                    defaulted: bool| {
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .start_paused(true)
                .build()
                .context("a runtime for the simulation")?;
            let predicted = rt.block_on(simulate(
                objects, failed, config, plan, options, horizon, progress, &source, defaulted,
            ));
            // The copy is freed on a thread of its own: a large cluster's
            // took a quarter of a second before the report could be shown.
            std::thread::spawn(move || drop(rt));
            predicted
        })
    };
    let failed = Arc::new(AtomicBool::new(false));
    let simulation = if let Some(path) = &args.from {
        let s = scenario::load_file(path).map_err(|e| Exit::usage(e.to_string()))?;
        let mut objects = s.objects;
        assumptions.apply(&mut objects);
        let config = with_history(s.config.unwrap_or_default());
        run(
            Box::new(objects.into_iter()),
            config,
            failed,
            path.display().to_string(),
            false,
        )
    } else {
        let clients = client::connect(&args.cluster).await?;
        let version = clients
            .main
            .apiserver_version()
            .await
            .context("read /version")?;
        let config = with_history(SandboxConfig {
            kube_version: format!("{}.{}", version.major, version.minor.trim_end_matches('+')),
            ..SandboxConfig::default()
        });
        // The copy loads each page as it is read.
        let (pages, incoming) = std::sync::mpsc::sync_channel(4);
        let objects = snapshot::objects(incoming, failed.clone());
        let simulation = run(Box::new(objects), config, failed, "cluster".into(), true);
        let mut owners = std::collections::HashMap::new();
        let read = snapshot::read(&clients.main, &pages, |page| {
            assumptions.apply_in_order(page, &mut owners);
        })
        .await;
        drop(pages);
        if let Err(e) = read {
            let _ = simulation.join();
            return Err(e);
        }
        simulation
    };
    simulation
        .join()
        .map_err(|_| anyhow::anyhow!("the simulation panicked"))?
}

#[allow(clippy::too_many_arguments)] // the drain's own inputs, and where the copy comes from
async fn simulate(
    objects: Box<dyn Iterator<Item = (Resource, serde_json::Value)> + Send>,
    failed: Arc<AtomicBool>,
    config: SandboxConfig,
    plan: Plan,
    options: Options,
    horizon: Option<Duration>,
    progress: bool,
    source: &str,
    defaulted: bool,
) -> anyhow::Result<Result<(DrainOutcome, Prediction), u8>> {
    kube_sandbox::follow_tokio_clock();
    let sandbox = Sandbox::start(
        objects,
        kube_sandbox::Options {
            config,
            // A copy of the whole cluster on the operator's machine: a
            // third less memory for about a tenth more time, spent loading
            // and settling the copy (docs/benchmarks-history.md).
            compact_workloads: true,
            defaulted,
            ..kube_sandbox::Options::default()
        },
    )
    .await
    .context("loading the copy of the cluster")?;
    if failed.load(Ordering::Relaxed) {
        // Reading the cluster failed; the reader says why.
        sandbox.shutdown().await;
        return Ok(Err(exit::FAILURE));
    }
    sandbox.wait_idle().await;
    // The first pass rewrote the status of every workload and budget; the
    // versions it replaced are not the drain's to look back on (its
    // replacements and recovery are found after `before`).
    sandbox.compact_history();
    let clients = client::from_kubeconfig_yaml(&sandbox.kubeconfig()).await?;
    let copy_of = crate::vocabulary::outcome::copy_of(source);
    crate::errln!(
        "prediction: the drain runs on a copy of {copy_of} on a simulated clock; nothing is changed{}",
        if horizon.is_some() {
            " (no --timeout: followed for 1h of simulated time)"
        } else {
            ""
        }
    );
    let interaction = Interaction {
        assume_yes: true,
        display: if progress {
            Display::Auto
        } else {
            Display::Quiet
        },
        unattended: crate::pool::unattended::Unattended::default(),
        metrics: None,
    };
    let wall = std::time::Instant::now();
    let before = sandbox.view().resource_version();
    let started = kube_conventions::time::now().as_second();
    let ended = interaction::drain(clients.clone(), plan, options, interaction)
        .await
        .0
        .map_err(Exit::from)?;
    let outcome = match ended {
        Ended::Finished(outcome) => outcome,
        Ended::Stopped(stopped) => {
            crate::errln!("{stopped}");
            return Ok(Err(crate::exit_codes::of_stopped(&stopped)));
        }
    };
    let replacements = replacements(&sandbox, before)?;
    let recovery = recovery::predict(&sandbox, &clients.main, &outcome, started, before).await?;
    let prediction = Prediction {
        source: source.to_string(),
        computed_ms: u64::try_from(wall.elapsed().as_millis()).unwrap_or(u64::MAX),
        horizon_ms: horizon.map(|h| u64::try_from(h.as_millis()).unwrap_or(u64::MAX)),
        replacements,
        recovery,
    };
    sandbox.shutdown().await;
    // The copy, too, is freed on a thread of its own (a fifth of a second
    // for a large cluster's, after the prediction is known).
    std::thread::spawn(move || drop(sandbox));
    Ok(Ok((outcome, prediction)))
}

/// The pods the controllers made while the drain ran, where they run or
/// why they would wait.
fn replacements(sandbox: &Sandbox, before: u64) -> anyhow::Result<Vec<Replacement>> {
    // Found in the copy's change history: parsing all of a large cluster's
    // pods to find the new ones took seconds.
    let made = sandbox
        .view()
        .created_since(Resource::Pods, before)
        .context("the copy's change history no longer reaches back to the drain's start")?;
    let mut out: Vec<Replacement> = made
        .iter()
        .filter(|p| !pods::is_terminal(p))
        .map(|p| {
            let m = &p["metadata"];
            let pending = pods::condition(p, "PodScheduled")
                .filter(|c| c["status"] == "False")
                .and_then(|c| c["message"].as_str())
                .map(str::to_string);
            Replacement {
                pod: format!(
                    "{}/{}",
                    m["namespace"].as_str().unwrap_or_default(),
                    m["name"].as_str().unwrap_or_default()
                ),
                owner: pods::controller_of(p)
                    .map(|o| format!("{}/{}", o.kind, o.name))
                    .unwrap_or_default(),
                node: pods::node_name(p).map(str::to_string),
                pending,
            }
        })
        .collect();
    out.sort_by(|a, b| a.pod.cmp(&b.pod));
    Ok(out)
}
