//! The drain library: select nodes, snapshot and classify their pods,
//! cordon, then drain up to `--max-parallel` nodes at once, wave by wave.
//!
//! `session::run` is the whole drain as one call; `options` is what it is
//! asked to do (why it could not is crate::vocabulary's `DrainError`). Each
//! node's drain is a pure state machine (`machine`) whose effects `driver`
//! performs, a pod's eviction through `evict/` (the subresource, 1.37's
//! EvictionRequest, gangs and KubeVirt); `engine` is the pipeline
//! around them, `preview` the drains that change nothing, `conclude` the
//! outcome they end with. README.md's layout names every file here.

pub(crate) mod budgets;
pub(crate) mod conclude;
mod context;
pub(crate) mod cordon;
mod dead_node;
pub(crate) mod detach;
pub(crate) mod discover;
mod draining;
mod driver;
mod engine;
pub(crate) mod evict;
pub(crate) mod heartbeat;
mod machine;
pub(crate) mod mirror;
mod node_plan;
mod options;
pub(crate) mod out_of_service;
mod packed_pods;
pub(crate) mod pod_watch;
mod pool_budgets;
mod prepare;
mod preview;
mod session;
mod slim_pod;
pub(crate) mod surge;

pub(crate) use crate::vocabulary::DrainError;
pub(crate) use crate::vocabulary::DryRun;
pub(crate) use crate::vocabulary::outcome::Ended;
pub(crate) use engine::Prepared;
pub(crate) use options::{NodeSelection, Options};
pub(crate) use prepare::{Shared, prepare, prepare_sharing};
pub(crate) use session::{Session, run};
