//! The drain plan: which pods go in which wave, and which are left alone.
//! Read from a YAML DrainPlan (`file`) or built from flags (`defaults`),
//! always validated into the same `Plan`.

pub mod defaults;
pub mod file;
pub mod model;

pub use model::{Plan, PodType, Rule, RuleAction, Wave};
