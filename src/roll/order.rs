//! The roll's nodes in the order they are taken, and where each is taken
//! up, read before anything changes; and the refusals that hold for the
//! whole selection.

use std::sync::Arc;

use tokio::sync::watch;

use super::lease::Locks;
use super::phase::{self, Phase};
use super::{RollOptions, node};
use crate::client::Clients;
use crate::drain::{DrainError, discover};
use crate::policy::plan::Plan;
use crate::policy::pool;
use crate::publish::{Publish, Publisher};
use crate::vocabulary::events::Sink;

/// The nodes of the roll in the order they are taken, and where each is
/// taken up.
pub(crate) struct Order {
    pub(crate) groups: Vec<Vec<(String, Phase)>>,
    /// Every selected node was done by an earlier run of this roll.
    pub(crate) all_done: bool,
}

impl Order {
    /// Every node in the order it is taken.
    pub(crate) fn names(&self) -> Vec<String> {
        self.groups
            .iter()
            .flatten()
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// Finds the nodes, and reads what their locks say of earlier runs. Makes
/// no change.
pub(crate) async fn order(
    clients: &Clients,
    options: &RollOptions,
    events: &Sink,
) -> Result<Order, DrainError> {
    let _told = crate::pool::retries_told::tell(clients, events);
    let nodes = discover::resolve_nodes(&clients.main, &options.drain.nodes).await?;
    let locks = Locks::new(
        &clients.main,
        &options.lock_namespace,
        options.lease_duration,
    );
    let names: Vec<String> = nodes
        .iter()
        .map(|n| n.metadata.name.clone().unwrap_or_default())
        .collect();
    let records = locks.records(&names).await?;
    let all_done = !options.fresh && phase::all_done(&records, &options.identity);
    let groups = pool::groups(&nodes, options.drain.by_zone)
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|i| {
                    let at = phase::resume(
                        records[i].as_ref(),
                        &options.identity,
                        &node::now_of(&nodes[i]),
                        options.fresh,
                        options.since,
                    );
                    (names[i].clone(), at)
                })
                .collect()
        })
        .collect();
    Ok(Order { groups, all_done })
}

/// Refusals that hold for the whole selection, checked on every node
/// before the roll changes anything: a `--deadline` shorter than a grace
/// period it would cut (`policy::guard::short_deadline`). Each node's drain
/// checks again when its turn comes.
pub(crate) async fn refusals(
    clients: &Clients,
    plan: &Plan,
    options: &RollOptions,
    events: &Sink,
) -> Result<(), DrainError> {
    let drain = &options.drain;
    if drain.deadline.is_none()
        || drain.allow_short_deadline
        || drain.dry_run != crate::vocabulary::DryRun::None
    {
        return Ok(());
    }
    let (_never, interrupt) = watch::channel(false);
    let quiet = Arc::new(Publisher::start(&clients.main, Publish::default()));
    crate::drain::prepare(
        clients.clone(),
        plan.clone(),
        drain.clone(),
        events.clone(),
        interrupt,
        quiet,
    )
    .await
    .map(drop)
}
