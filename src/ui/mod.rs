//! What a person sees: live bars or plain lines while the drain runs, the
//! confirmation before it, the report after it, kubectl drain's own lines
//! for scripts, and Kubernetes Events for whoever watches the nodes. They listen to the engine; they never drive it.

pub(crate) mod bars;
pub(crate) mod confirm;
pub(crate) mod fit;
pub(crate) mod formats;
pub(crate) mod frame;
pub(crate) mod glyphs;
pub(crate) mod kubectl;
pub(crate) mod lines;
pub(crate) mod listeners;
pub(crate) mod report;
pub(crate) mod roll_report;
pub(crate) mod streams;
pub(crate) mod words;
