//! kubectl-maintain: node drains in priority waves, PDB-aware, with a report
//! of what blocks; and the sandbox cluster it is tested against.

pub mod classify;
pub mod cli;
pub mod client;
pub mod commands;
pub mod completion;
pub mod confirm;
pub mod drain;
pub mod duration;
pub mod exit;
pub mod guard;
pub mod k8s_events;
pub mod log;
pub mod maintenance;
pub mod plan;
pub mod progress;
pub mod report;
pub mod sandbox;
pub mod selector;
