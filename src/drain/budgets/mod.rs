//! The PodDisruptionBudgets a drain shares across every node it drains at
//! once (and every node of a roll): one home for the hardest behaviour of
//! the tool.
//!
//! - `budget`: a budget's numbers and key, plain data the pure node
//!   machine reads;
//! - `broker`: the façade a node asks "may I evict this pod now?" and tells
//!   what it sent and what it got;
//! - `ledger`: the tickets each budget's disruptions are handed out as
//!   (pure), served in start order by `queue` (pure);
//! - `watch`: the watches that hand them out anew at each change;
//! - `every`: every budget of the cluster as its one watch keeps it;
//! - `lookup`: which budgets select which pods.

mod broker;
mod budget;
pub(crate) mod every;
mod ledger;
pub(crate) mod lookup;
mod queue;
mod tell;
mod watch;

pub(crate) use broker::{Broker, Go, NodeBudgets};
pub(crate) use budget::{Budget, Key, UNWATCHED_RETRY};
pub(crate) use ledger::Spent;
pub(crate) use tell::Signal;
