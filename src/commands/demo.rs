//! `kubectl maintain demo`: a small cluster in the embedded sandbox, one of
//! its nodes drained with everything a real drain shows.

use std::time::Duration;

use anyhow::Context;
use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::cli::exit::{self, Exit};
use crate::cli::interaction::{self, Interaction};
use crate::cli::{DemoArgs, OutputFormat};
use crate::client;
use crate::drain::{DryRun, Ended, NodeSelection, Options};
use crate::policy::classify::FilterFlags;
use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use kube_sandbox::{Sandbox, scenario};

const SCENARIO: &str = include_str!("../../examples/scenarios/demo.yaml");
const NODE: &str = "worker-1";

pub(crate) async fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let timeout = crate::duration::parse(&args.timeout)
        .map_err(|e| Exit::usage(format!("--timeout: {e}")))?;
    let parsed = scenario::parse(std::path::Path::new("demo.yaml"), SCENARIO)
        .context("the demo scenario")?;
    let sandbox = Sandbox::start(parsed.objects, kube_sandbox::Options::default())
        .await
        .context("starting the sandbox")?;
    crate::errln!("demo: a sandbox cluster is serving at {}", sandbox.url());
    let result = demo_on(&sandbox, &args, timeout).await;
    // Every task of the sandbox ends before the runtime does.
    sandbox.shutdown().await;
    result
}

/// The demo's drain on the started sandbox.
async fn demo_on(
    sandbox: &Sandbox,
    args: &DemoArgs,
    timeout: std::time::Duration,
) -> anyhow::Result<u8> {
    wait_settled(sandbox).await;
    let clients = client::from_kubeconfig_yaml(&sandbox.kubeconfig()).await?;

    // Open the spare workers now that everything runs on worker-1.
    let nodes: Api<Node> = Api::all(clients.main.clone());
    for n in ["worker-2", "worker-3"] {
        nodes
            .patch(
                n,
                &PatchParams::default(),
                &Patch::Strategic(json!({"spec": {"unschedulable": null}})),
            )
            .await?;
    }
    crate::errln!(
        "demo: draining {NODE}: kubectl maintain drain {NODE} --ignore-daemonsets --delete-emptydir-data --force --timeout {}",
        args.timeout
    );
    crate::errln!(
        "demo: shop/db-0's PodDisruptionBudget allows no disruption, so the drain ends blocked and says why\n"
    );
    let options = Options {
        nodes: NodeSelection::Names(vec![NODE.into()]),
        flags: FilterFlags {
            force: true,
            ignore_daemonsets: true,
            delete_emptydir_data: true,
            skip_wait_for_delete_timeout: 0,
            ignore_markers: false,
        },
        grace_period: None,
        timeout: Some(timeout),
        pod_selector: None,
        disable_eviction: false,
        eviction_api: crate::drain::evict::request::EvictionApi::Auto,
        chunk_size: 500,
        dry_run: DryRun::None,
        max_parallel: 1,
        by_zone: false,
        max_blocked_nodes: None,
        all_or_nothing: false,
        taints: Vec::new(),
        labels: Vec::new(),
        marks: Vec::new(),
        deadline: None,
        deadline_overrides_markers: false,
        allow_short_deadline: false,
        surge: false,
        detach_wait: Some(Duration::from_secs(300)),
        lost_pod_timeout: Some(Duration::from_secs(1)),
        node_shut_down: None,
        node_conditions: true,
        reason: Some("demo".into()),
        max_unavailable: None,
        plan_reads_budgets: false,
    };
    let interaction = Interaction {
        assume_yes: true,
        display: crate::ui::listeners::Display::Auto,
        unattended: crate::pool::unattended::Unattended::default(),
        metrics: None,
    };
    let plan = crate::policy::plan::defaults::plan();
    let ended = interaction::drain(clients, plan, options, interaction)
        .await
        .0
        .map_err(Exit::from)?;
    if let Ended::Finished(outcome) = &ended {
        crate::out!(
            "{}",
            crate::ui::report::render(outcome, OutputFormat::Table)?
        );
    }
    let code = crate::exit_codes::of_ended(&ended);
    crate::errln!(
        "\ndemo: the drain would exit {code} (3: not drained, the report above says why)"
    );
    if args.keep_running {
        // Its kubeconfig holds the sandbox's token: where no one else can
        // read it, and gone with the sandbox (Ctrl-C or SIGTERM).
        let private = kube_sandbox::PrivateDir::create("kubectl-maintain-demo")
            .context("making a private directory for the kubeconfig")?;
        let path = private.path().join("kubeconfig");
        sandbox.write_kubeconfig(&path)?;
        let signals =
            crate::cli::interrupt::Signals::listen().context("listening for SIGINT and SIGTERM")?;
        crate::errln!(
            "demo: the sandbox keeps serving; try: KUBECONFIG={} kubectl get pods -A -o wide  (Ctrl-C to stop)",
            path.display()
        );
        signals.wait().await;
        // `run` shuts the sandbox down; the kubeconfig goes first.
        drop(private);
    }
    Ok(exit::OK)
}

/// Waits until every pod of the scenario runs and is Ready.
async fn wait_settled(sandbox: &Sandbox) {
    for _ in 0..200 {
        let pods = sandbox.view().list(Resource::Pods);
        let ready = !pods.is_empty()
            && pods
                .iter()
                .all(|p| pods::is_ready(p) && !pods::is_terminating(p));
        if ready {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
