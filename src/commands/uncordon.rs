//! `kubectl maintain uncordon`: undo exactly what the drain changed on each
//! node (crate::policy::maintenance); a node without our record is uncordoned as
//! kubectl would.

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::{Patch, PatchParams};

use crate::cli::UncordonArgs;
use crate::cli::exit::{self, Exit};
use crate::client;
use crate::drain::prepare;
use crate::policy::maintenance;
use crate::ui::node_events::{self, Recorder};

pub(crate) async fn run(args: UncordonArgs) -> anyhow::Result<u8> {
    let selection = super::drain::node_selection(&args.nodes, args.selector.as_ref())?;
    let clients = client::connect(&args.cluster).await?;
    let (warnings, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(crate::ui::lines::run(rx));
    let nodes = prepare::resolve_nodes(&clients.main, &selection, &warnings)
        .await
        .map_err(super::drain::drain_error)?;
    let api: Api<Node> = Api::all(clients.main.clone());
    let params = PatchParams {
        field_manager: Some(maintenance::FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    let recorder = Recorder::new(clients.main.clone());
    let mut kept = false;
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        let mut current = node;
        let mut done = None;
        for _ in 0..5 {
            let undo = maintenance::uncordon_patch(&current);
            match api.patch(&name, &params, &Patch::Merge(undo.patch)).await {
                Ok(_) => {
                    kept |= undo.kept_for_another;
                    done = Some(undo.words);
                    break;
                }
                Err(kube::Error::Api(s)) if s.code == 409 => current = api.get(&name).await?,
                Err(kube::Error::Api(s)) if s.code == 403 => {
                    return Err(Exit {
                        code: exit::FAILURE,
                        message: format!(
                            "{}\n  uncordon needs permission to patch nodes",
                            s.message
                        ),
                    }
                    .into());
                }
                Err(e) => return Err(e.into()),
            }
        }
        let words = done.ok_or_else(|| anyhow::anyhow!("node {name} kept changing; try again"))?;
        recorder
            .node_event(
                &name,
                "Normal",
                node_events::UNCORDONED,
                &format!("Maintenance ended: {words}"),
            )
            .await;
        println!("node/{name} {words}");
    }
    // A node left cordoned for someone else is not what was asked: say so
    // in the exit code, so that a runbook does not go on as if it were back.
    Ok(if kept { exit::INCOMPLETE } else { exit::OK })
}
