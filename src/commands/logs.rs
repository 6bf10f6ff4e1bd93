//! `kubectl maintain logs [-f] [RUN]`: the log of a run handed to the
//! cluster (crate::in_cluster::logs).

use crate::cli::LogsArgs;
use crate::client;
use crate::in_cluster::{logs, run};

pub(crate) async fn run(args: LogsArgs) -> anyhow::Result<u8> {
    let clients = client::connect(&args.cluster).await?;
    let ns = run::namespace(args.cluster.namespace.as_ref());
    let job = run::find(&clients, &ns, args.run.as_deref()).await?;
    Ok(logs::logs(&clients, job, args.follow, args.timestamps).await?)
}
