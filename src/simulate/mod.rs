//! `kubectl maintain plan --simulate`: the drain predicted by running it,
//! with every flag and plan the real one gets, against an in-process copy of
//! the cluster (the sandbox, which schedules and disrupts as the control
//! plane does) on a simulated clock: a paused tokio runtime, where time jumps
//! to the next timer whenever nothing is ready, so pods' shutdowns and
//! readiness, budgets' waits and the drain's retries pass as fast as the work
//! allows (kube_sandbox::follow_tokio_clock). The live cluster is only read.

mod snapshot;

use std::time::Duration;

use anyhow::Context;
use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use kube_sandbox::{Sandbox, SandboxConfig, scenario};

use crate::cli::exit::Exit;
use crate::cli::{DrainArgs, OutputFormat};
use crate::client;
use crate::drain::Options;
use crate::policy::plan::Plan;

/// How far a drain without `--timeout`, which would wait for ever, is
/// followed before the prediction stops.
const HORIZON: Duration = Duration::from_secs(3600);

pub(crate) async fn run(args: DrainArgs) -> anyhow::Result<u8> {
    // The real drain's plan and options, validated as the real drain's are.
    let (plan, mut options) = crate::commands::drain::validate(&args, false)?;
    if options.timeout.is_none() {
        options.timeout = Some(HORIZON);
    }
    let (objects, config, source) = if let Some(path) = &args.from {
        let s = scenario::load_file(path).map_err(|e| Exit::usage(e.to_string()))?;
        (
            s.objects,
            s.config.unwrap_or_default(),
            path.display().to_string(),
        )
    } else {
        let clients = client::connect(&args.cluster).await?;
        let version = clients
            .main
            .apiserver_version()
            .await
            .context("read /version")?;
        let objects = snapshot::read(&clients.main).await?;
        let config = SandboxConfig {
            kube_version: format!("{}.{}", version.major, version.minor.trim_end_matches('+')),
            ..SandboxConfig::default()
        };
        (objects, config, "the cluster".to_string())
    };
    let output = args.output;
    // A thread of its own: the simulated clock must not stop the live one.
    let simulation = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .context("a runtime for the simulation")?;
        rt.block_on(simulate(objects, config, plan, options, output, &source))
    });
    simulation
        .join()
        .map_err(|_| anyhow::anyhow!("the simulation panicked"))?
}

async fn simulate(
    objects: Vec<(Resource, serde_json::Value)>,
    config: SandboxConfig,
    plan: Plan,
    options: Options,
    output: OutputFormat,
    source: &str,
) -> anyhow::Result<u8> {
    kube_sandbox::follow_tokio_clock();
    let sandbox = Sandbox::start(
        objects,
        kube_sandbox::Options {
            config,
            ..kube_sandbox::Options::default()
        },
    )
    .await
    .context("loading the copy of the cluster")?;
    sandbox.wait_idle().await;
    let clients = client::from_kubeconfig_yaml(&sandbox.kubeconfig()).await?;
    let horizon = options.timeout.filter(|t| *t == HORIZON);
    eprintln!(
        "prediction: the drain run on a copy of {source} on a simulated clock; nothing is changed{}",
        if horizon.is_some() {
            " (no --timeout: followed for 1h of simulated time)"
        } else {
            ""
        }
    );
    let wall = std::time::Instant::now();
    let code = crate::commands::drain::execute(clients, plan, options, output, true).await?;
    for p in sandbox.view().list(Resource::Pods) {
        if let Some(why) = pods::condition(&p, "PodScheduled")
            .filter(|c| c["status"] == "False")
            .and_then(|c| c["message"].as_str())
        {
            let m = &p["metadata"];
            eprintln!(
                "prediction: {}/{} would stay Pending: {why}",
                m["namespace"].as_str().unwrap_or_default(),
                m["name"].as_str().unwrap_or_default()
            );
        }
    }
    eprintln!("prediction: computed in {:.1?}", wall.elapsed());
    sandbox.stop();
    Ok(code)
}
