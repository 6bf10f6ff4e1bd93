//! Decisions, without I/O: the drain plan, each pod's fate, the guard rails,
//! and the maintenance record a drain leaves on a node.

pub mod classify;
pub mod guard;
pub mod maintenance;
pub mod plan;
