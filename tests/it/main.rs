//! Integration tests: the sandbox driven by the real kubectl and by our
//! binary. One test target, so the crate builds once.

mod actions;
mod careless_input;
mod compression;
mod connecting;
mod credentials;
mod dead_node;
mod demo;
mod drain;
mod eviction_requests;
mod faults;
mod finishing;
mod fuzz;
mod harness;
mod image;
mod in_cluster;
mod in_cluster_job;
mod kubevirt;
mod lifecycle;
mod operator;
mod pool;
mod python_client;
mod rehearsal;
mod release;
mod reliability;
mod request_budget;
mod sandbox_cli;
mod sandbox_kubectl;
mod sandbox_watch;
mod scenario;
mod screen;
mod script_lines;
mod silent_servers;
mod simulate;
mod unattended;
mod virtual_time;
