//! How Kubernetes writes things down, shared by the plugin and the sandbox:
//! label selectors, `metav1.Time` and kubectl's human durations, and
//! positions of YAML errors.

pub mod selector;
pub mod time;
pub mod yaml;
