//! kubectl-maintain: node drains in priority waves, PDB-aware, with a report
//! of what blocks; and the sandbox cluster it is tested against.

pub mod cli;
pub mod commands;
pub mod exit;
pub mod sandbox;
pub mod selector;
