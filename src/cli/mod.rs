//! The command line: arguments as kubectl passes them to a plugin, the
//! options they become, shell completion, Ctrl-C, how a drain meets the
//! person running it, and exit codes.

pub mod args;
pub mod completion;
pub(crate) mod drain_options;
pub mod exit;
pub(crate) mod interaction;
pub(crate) mod interrupt;
pub mod node_arg;
pub(crate) mod roll_options;
pub(crate) mod unattended_options;

pub use args::*;
