//! `kubectl maintain uncordon`: undo exactly what the drain changed on each
//! node (crate::policy::maintenance); a node without our record is uncordoned as
//! kubectl would.

use crate::cli::exit::{self, Exit};
use crate::cli::{UncordonArgs, drain_options};
use crate::client;
use crate::drain::{cordon, discover};
use crate::publish::{Publish, Publisher};

pub(crate) async fn run(args: UncordonArgs) -> anyhow::Result<u8> {
    let selection = drain_options::node_selection(&args.nodes, args.selector.as_ref())?;
    let clients = client::connect(&args.cluster).await?;
    let _retries = crate::ui::lines::retries(&clients);
    let nodes = match discover::resolve_nodes(&clients.main, &selection).await {
        // kubectl uncordon -l with nothing matching: silent, exit 0.
        Err(crate::drain::DrainError::NoNodesMatch(selector)) => {
            eprintln!("No nodes match the selector {selector:?}: nothing to uncordon.");
            return Ok(exit::OK);
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
            eprintln!(
                "error: unable to uncordon node {name:?}: it is {}: pods scheduled there would not start; rerun once it is Ready, or with --even-if-not-ready",
                crate::ui::words::dead_node::State(&down)
            );
            failed = Some(exit::FAILURE);
            continue;
        }
        // As kubectl uncordon: a node that cannot be returned is told and
        // the others are still returned; the exit code says one failed.
        let undo = match cordon::uncordon(&clients.main, node, &publisher).await {
            Ok(undo) => undo,
            Err(e) => {
                let e = Exit::from(e);
                // kubectl uncordon's words for it.
                eprintln!("error: unable to uncordon node {name:?}: {e}");
                failed = Some(e.code);
                continue;
            }
        };
        kept |= undo.kept_for_another;
        let words = undo.words;
        publisher.uncordoned(&name, &words).await;
        println!("node/{name} {words}");
    }
    publisher.finish().await;
    // Conditions left showing a drain that is over mislead whoever follows
    // them (`kubectl wait --for=condition=Drained`): not a success.
    for name in publisher.unwritten() {
        eprintln!(
            "error: node/{name}: its DrainInProgress/Drained conditions could not be written: they may still show the drain"
        );
        failed.get_or_insert(exit::FAILURE);
    }
    // A node left cordoned for someone else is not what was asked: say so
    // in the exit code, so that a runbook does not go on as if it were back.
    Ok(match failed {
        Some(code) => code,
        None if kept => exit::INCOMPLETE,
        None => exit::OK,
    })
}
