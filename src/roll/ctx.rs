//! What every node's roll shares: the clients, the plan and options, the
//! budget broker and watches, the pool's watch of the nodes, the publisher,
//! the lines and holds of the run, and kured's lock, held while any node
//! of the roll is in its action.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::{Action, HookRun, kured};
use crate::client::Clients;
use crate::drain::{DrainError, Options};
use crate::policy::plan::Plan;
use crate::pool::Tell;
use crate::pool::node_watch::Nodes;
use crate::publish::Publisher;
use crate::vocabulary::events::{Event, Sink, emit};
use crate::vocabulary::warning::Warning;

/// What every node's roll shares.
pub(crate) struct Ctx {
    pub(crate) clients: Clients,
    pub(crate) plan: Plan,
    pub(crate) drain: Options,
    pub(crate) action: Action,
    pub(crate) events: Sink,
    pub(crate) interrupt: watch::Receiver<bool>,
    pub(crate) roll: String,
    /// Lines with the pool's count, and holds, timed from the roll's start.
    pub(crate) tell: Tell,
    /// Budget watches shared by every node's drain, so that nodes drained
    /// at once share each budget's disruptions.
    pub(crate) budgets: crate::drain::budgets::Broker,
    /// The VolumeAttachments every node's drain waits on, watched once.
    pub(crate) attachments: Arc<crate::drain::detach::Attachments>,
    /// Every node, watched: the next node's room, each node's waits.
    pub(crate) nodes: Nodes,
    /// Node conditions and Events, for every node's drain; the
    /// conditions are reset at each uncordon.
    pub(crate) publisher: Arc<Publisher>,
    pub(super) kured: kured::Kured,
    /// Nodes of this roll holding kured's lock (it is taken by the first).
    pub(super) kured_users: tokio::sync::Mutex<KuredUsers>,
    pub(crate) unattended: HookRun,
}

impl Ctx {
    /// A node's phase on screen, with the pool's count.
    pub(crate) fn say(&self, node: &str, phase: &str, detail: String) {
        self.tell.say(node, phase, detail);
    }

    /// The roll (no node) or a node's hook holds, for this reason.
    pub(crate) fn hold(&self, node: Option<&str>, what: &str, reason: &str) {
        self.tell.hold(node, what, reason);
    }

    pub(crate) fn hold_ended(&self, node: Option<&str>, what: &str) {
        self.tell.hold_ended(node, what);
    }

    /// Holds kured's lock for one more node, waiting while kured holds it.
    pub(super) async fn hold_kured(&self, node: &str) -> Result<(), DrainError> {
        let mut users = self.kured_users.lock().await;
        if users.nodes == 0 {
            let mut said = false;
            loop {
                match self.kured.take().await? {
                    kured::Taking::Taken => {
                        users.taken = true;
                        break;
                    }
                    kured::Taking::Absent => {
                        users.taken = false;
                        break;
                    }
                    kured::Taking::HeldBy(by) => {
                        if !said {
                            said = true;
                            self.say(
                                node,
                                "action",
                                format!(
                                    "waiting: kured holds its reboot lock ({}); the roll goes on when kured gives it back",
                                    by.join(", ")
                                ),
                            );
                        }
                        if *self.interrupt.borrow() {
                            return Ok(());
                        }
                        tokio::time::sleep(Duration::from_secs(2)).await;
                    }
                }
            }
        }
        users.nodes += 1;
        Ok(())
    }

    pub(super) async fn release_kured(&self) {
        let mut users = self.kured_users.lock().await;
        users.nodes = users.nodes.saturating_sub(1);
        // No kured DaemonSet when the lock was taken: nothing to give back
        // (one GET a node saved; the next node's take looks again).
        if users.nodes == 0
            && std::mem::take(&mut users.taken)
            && let Err(e) = self.kured.give_back().await
        {
            let warning = Warning::KuredLockNotReturned {
                error: e.to_string(),
            };
            emit(&self.events, Event::Warning(warning));
        }
    }
}

/// The roll's nodes holding kured's lock, and whether it was taken
/// (kured's DaemonSet was there when the first of them asked).
#[derive(Default)]
pub(super) struct KuredUsers {
    nodes: usize,
    taken: bool,
}
