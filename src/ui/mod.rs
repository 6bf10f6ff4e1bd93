//! What a person sees: live bars or plain lines while the drain runs, the
//! confirmation before it, the report after it, and Kubernetes Events for
//! whoever watches the nodes. They listen to the engine; they never drive it.

pub mod bars;
pub mod confirm;
pub mod lines;
pub mod node_events;
pub mod report;
