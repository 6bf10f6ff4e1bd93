//! kubectl-maintain: node drains in priority waves, PDB-aware, with a report
//! of what blocks.
//!
//! The data flows one way: `cli` parses flags, `policy` turns them and a
//! plan file into decisions, `drain` carries them out against the API, and
//! `ui` shows what happens. `commands` wires one subcommand each.

pub mod cli;
mod client;
mod commands;
mod drain;
mod duration;
mod exit_codes;
mod files;
mod in_cluster;
mod metrics;
mod notify;
mod outbound;
pub mod policy;
mod pool;
mod publish;
mod roll;
#[cfg(feature = "sandbox")]
mod simulate;
mod ui;
mod vocabulary;

pub use commands::run;
