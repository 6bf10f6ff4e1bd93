//! The command line: arguments as kubectl passes them to a plugin, shell
//! completion, and exit codes.

pub mod args;
pub mod completion;
pub mod exit;

pub use args::*;
