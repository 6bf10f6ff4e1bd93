//! `kubectl maintain uncordon`: undo exactly what the drain changed on each
//! node (crate::policy::maintenance); a node without our record is uncordoned as
//! kubectl would.

use crate::cli::exit::{self, Exit};
use crate::cli::{DryRunArg, UncordonArgs, drain_options};
use crate::client;
use crate::drain::{cordon, discover};
use crate::publish::{Publish, Publisher};

pub(crate) async fn run(args: UncordonArgs) -> anyhow::Result<u8> {
    let selection = drain_options::node_selection(&args.nodes, args.selector.as_ref(), None)?;
    let oos_limit = crate::duration::parse(&args.out_of_service_timeout)
        .map_err(|e| Exit::usage(format!("--out-of-service-timeout: {e}")))?;
    let clients = client::connect(&args.cluster).await?;
    let _retries = crate::ui::lines::retries(&clients);
    let nodes = match discover::resolve_nodes(&clients.main, &selection).await {
        // kubectl uncordon -l with nothing matching: silent, exit 0.
        Err(crate::vocabulary::DrainError::NoNodesMatch(selector)) => {
            crate::errln!("No nodes match the selector {selector:?}: nothing to uncordon.");
            return Ok(crate::exit_codes::NOTHING_TO_DO);
        }
        found => found.map_err(Exit::from)?,
    };
    let publisher = Publisher::start(
        &clients.main,
        Publish {
            conditions: true,
            events: true,
            reason: None,
        },
    );
    let mut kept = false;
    let mut failed = None;
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        // Pods sent back to a node whose kubelet is down would hang there.
        if !args.even_if_not_ready
            && let Some(down) = crate::drain::heartbeat::check(&clients.main, &node).await
        {
            crate::errln!(
                "error: unable to uncordon node {name:?}: it is {}: pods scheduled there would not start; rerun once it is Ready, or with --even-if-not-ready",
                crate::ui::words::dead_node::State(&down)
            );
            failed = Some(exit::FAILURE);
            continue;
        }
        if args.dry_run != DryRunArg::None {
            if let Err(code) = dry_run(&clients.main, &node, args.dry_run).await {
                failed = Some(code);
            }
            continue;
        }
        // Its out-of-service taint comes off only once nothing acts on it
        // (crate::drain::out_of_service::release); until then the node
        // stays as it is, record and all, for a rerun to finish.
        let waiting = |acting: &str| {
            crate::errln!(
                "{}",
                crate::ui::fit::for_stderr(format!(
                    "node/{name}: waiting to remove taint {}: {acting}; Pod GC and the attach/detach controller may still act on it (up to {}, --out-of-service-timeout; Ctrl-C leaves the node as it is)",
                    crate::policy::node_health::OUT_OF_SERVICE,
                    crate::duration::human(oos_limit)
                ))
            );
        };
        if releases_out_of_service(&node)
            && let Some(acting) =
                crate::drain::out_of_service::release(&clients.main, &name, oos_limit, waiting)
                    .await
        {
            crate::errln!(
                "{}",
                crate::ui::fit::for_stderr(format!(
                    "error: unable to uncordon node {name:?}: after {} (--out-of-service-timeout) still {acting}: its out-of-service taint stays, the node cordoned; rerun kubectl maintain uncordon {name} once they are gone",
                    crate::duration::human(oos_limit)
                ))
            );
            kept = true;
            continue;
        }
        // As kubectl uncordon: a node that cannot be returned is told and
        // the others are still returned; the exit code says one failed.
        let undo = match cordon::uncordon(&clients.main, node, &publisher).await {
            Ok(undo) => undo,
            Err(e) => {
                let e = Exit::from(e);
                // kubectl uncordon's words for it.
                crate::errln!("error: unable to uncordon node {name:?}: {e}");
                failed = Some(e.code);
                continue;
            }
        };
        kept |= undo.kept_for_another;
        let words = undo.words;
        publisher.uncordoned(&name, &words).await;
        crate::outln!("node/{name} {words}");
    }
    publisher.finish().await;
    // Conditions left showing a drain that is over mislead whoever follows
    // them (`kubectl wait --for=condition=Drained`): not a success.
    for name in publisher.unwritten() {
        crate::errln!(
            "error: node/{name}: its DrainInProgress/Drained conditions could not be written: they may still show the drain"
        );
        failed.get_or_insert(exit::FAILURE);
    }
    Ok(crate::exit_codes::of_uncordon(failed, kept))
}

/// Would this uncordon remove the node's out-of-service taint: ours (in
/// the record), still on it, and the node Ready (otherwise it stays)?
fn releases_out_of_service(node: &k8s_openapi::api::core::v1::Node) -> bool {
    use crate::policy::node_health::{OUT_OF_SERVICE, is_ready};
    let ours = crate::policy::maintenance::record_of(node)
        .is_some_and(|r| r.taints.iter().any(|t| t.key == OUT_OF_SERVICE));
    let on = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|ts| ts.iter().any(|t| t.key == OUT_OF_SERVICE));
    ours && on && is_ready(node)
}

/// `--dry-run`, as kubectl uncordon's: kubectl's line for the node, with
/// nothing changed; `server` sends the uncordon to the API server with
/// `dryRun=All`, which checks it (permissions, admission) and keeps nothing.
async fn dry_run(
    client: &kube::Client,
    node: &k8s_openapi::api::core::v1::Node,
    mode: DryRunArg,
) -> Result<(), u8> {
    use kube::api::{Api, Patch, PatchParams};
    let name = node.metadata.name.clone().unwrap_or_default();
    let cordoned = node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true)
        || crate::policy::maintenance::record_of(node).is_some();
    let suffix = if mode == DryRunArg::Server {
        let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
        let params = PatchParams {
            dry_run: true,
            field_manager: Some(crate::policy::maintenance::FIELD_MANAGER.into()),
            ..PatchParams::default()
        };
        let patch = serde_json::json!({"spec": {"unschedulable": null}});
        if let Err(e) = nodes.patch(&name, &params, &Patch::Merge(&patch)).await {
            let e = Exit::from(crate::vocabulary::api_error::api_error(
                "patch", "nodes", None, e,
            ));
            crate::errln!("error: unable to uncordon node {name:?}: {e}");
            return Err(e.code);
        }
        "(server dry run)"
    } else {
        "(dry run)"
    };
    let words = if cordoned {
        "uncordoned"
    } else {
        "already uncordoned"
    };
    crate::outln!("node/{name} {words} {suffix}");
    Ok(())
}
