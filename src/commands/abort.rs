//! `kubectl maintain abort [RUN]`: a run handed to the cluster stops after
//! the node in progress (crate::in_cluster::abort).

use crate::cli::AbortArgs;
use crate::client;
use crate::in_cluster::{abort, run};

pub(crate) async fn run(args: AbortArgs) -> anyhow::Result<u8> {
    let clients = client::connect(&args.cluster).await?;
    let ns = run::namespace(args.cluster.namespace.as_ref());
    let job = run::find(&clients, &ns, args.run.as_deref()).await?;
    let who = crate::in_cluster::whoami(&clients.main)
        .await
        .unwrap_or_else(|| "an unknown user".into());
    Ok(abort::abort(&clients, job, &who).await?)
}
