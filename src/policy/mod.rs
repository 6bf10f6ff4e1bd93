//! Decisions, without I/O: the drain plan, each pod's fate, the guard rails,
//! the maintenance record a drain leaves on a node, the nodes a kubelet
//! version range chooses, and the order and pace
//! of a pool's nodes.

pub mod classify;
pub mod guard;
pub mod kubelet_version;
pub mod maintenance;
pub(crate) mod node_health;
pub mod plan;
pub mod pool;
pub mod window;
