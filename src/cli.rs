//! The command line: `kubectl maintain SUBCOMMAND ...`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "kubectl maintain",
    bin_name = "kubectl maintain",
    version,
    about = "Drain nodes in priority waves, PDB-aware, with live progress and a report of what blocks",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a simulated cluster on loopback, for rehearsals and tests
    #[command(after_help = SANDBOX_EXAMPLES)]
    Sandbox(SandboxArgs),
}

const SANDBOX_EXAMPLES: &str = "\
Examples:
  # Serve a dump of a real cluster and point kubectl at it
  kubectl get nodes,pods,pdb,deploy,rs,sts,ds,jobs -A -o yaml > cluster.yaml
  kubectl maintain sandbox --scenario cluster.yaml --kubeconfig-out sandbox.kubeconfig
  KUBECONFIG=sandbox.kubeconfig kubectl get nodes

  # A synthetic cluster of 100 nodes, every request logged
  kubectl maintain sandbox --synthetic-nodes 100 --request-log requests.jsonl";

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["scenario", "synthetic_nodes"]))]
pub struct SandboxArgs {
    /// Scenario file: Kubernetes objects as YAML (several documents or a v1 List)
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Generate a synthetic cluster of this many nodes instead of reading a scenario
    #[arg(long, value_name = "N")]
    pub synthetic_nodes: Option<usize>,
    /// Pods per node of the synthetic cluster (its DaemonSet pod included)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 30,
        requires = "synthetic_nodes"
    )]
    pub pods_per_node: usize,
    /// Address to listen on; port 0 picks a free port
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Write a kubeconfig pointing at the sandbox here once it is ready
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Log every request as one JSON object per line to this file
    #[arg(long, value_name = "FILE")]
    pub request_log: Option<PathBuf>,
    /// Kubernetes version served at /version (major.minor)
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// Changes a watch can resume from before it gets 410 Expired
    #[arg(long, value_name = "N")]
    pub watch_history: Option<usize>,
    /// Share of resource requests answered 500 (0 to 1)
    #[arg(long, value_name = "RATE")]
    pub fault_500: Option<f64>,
    /// Share of resource requests answered 503 with Retry-After (0 to 1)
    #[arg(long, value_name = "RATE")]
    pub fault_503: Option<f64>,
    /// Share of resource requests answered 429 TooManyRequests (0 to 1)
    #[arg(long, value_name = "RATE")]
    pub fault_429: Option<f64>,
    /// Milliseconds added before every resource request is answered
    #[arg(long, value_name = "MS")]
    pub latency_ms: Option<u64>,
    /// Close every watch stream after this many events
    #[arg(long, value_name = "N")]
    pub watch_cut_after: Option<u64>,
    /// Seed for the fault dice, to repeat a run
    #[arg(long, value_name = "N")]
    pub fault_seed: Option<u64>,
}
