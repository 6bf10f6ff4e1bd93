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

/// A subcommand's help as kubectl lays it out: what it does, its examples,
/// then its usage and flags (clap puts `before_help` above the summary and
/// `after_help` below the flags).
const EXAMPLES_FIRST: &str =
    "{about-with-newline}\n{before-help}{usage-heading} {usage}\n\n{all-args}{after-help}";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Cordon nodes and evict their pods in priority waves (a drop-in for kubectl drain)
    #[command(help_template = EXAMPLES_FIRST, before_help = DRAIN_EXAMPLES)]
    Drain(DrainArgs),
    /// Show which pods each wave would evict, and what would be refused, without changing anything
    #[command(help_template = EXAMPLES_FIRST, before_help = PLAN_EXAMPLES)]
    Plan(DrainArgs),
    /// Maintain a pool node by node: lock, drain, act (--exec, --wait-for-reboot), Ready, uncordon, next; resumable
    #[command(help_template = EXAMPLES_FIRST, before_help = ROLL_EXAMPLES)]
    Roll(Box<RollArgs>),
    /// Return nodes to service, undoing exactly what the drain changed
    #[command(help_template = EXAMPLES_FIRST, before_help = UNCORDON_EXAMPLES)]
    Uncordon(UncordonArgs),
    /// List the nodes under maintenance: state, since when, why, what is still on them; -w follows a run handed to the cluster
    #[command(help_template = EXAMPLES_FIRST, before_help = STATUS_EXAMPLES)]
    Status(StatusArgs),
    /// Print the log of a run handed to the cluster (--in-cluster); -f follows it across its pods to its end
    #[command(help_template = EXAMPLES_FIRST, before_help = LOGS_EXAMPLES)]
    Logs(LogsArgs),
    /// Stop a run handed to the cluster after the node in progress, remove its Job, and say what is left
    #[command(help_template = EXAMPLES_FIRST, before_help = ABORT_EXAMPLES)]
    Abort(AbortArgs),
    /// Drain a node of a simulated cluster, to see what kubectl maintain does
    #[cfg(feature = "sandbox")]
    Demo(DemoArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell)
    #[command(help_template = EXAMPLES_FIRST, before_help = COMPLETION_HELP)]
    Completion { shell: clap_complete::Shell },
    /// Serve a simulated cluster on loopback, for rehearsals and tests
    #[cfg(feature = "sandbox")]
    #[command(help_template = EXAMPLES_FIRST, before_help = SANDBOX_EXAMPLES)]
    Sandbox(SandboxArgs),
}

#[cfg(feature = "sandbox")]
const SANDBOX_EXAMPLES: &str = "\
Examples:
  # Serve a dump of a real cluster and point kubectl at it
  kubectl get nodes,pods,pdb,deploy,rs,sts,ds,jobs -A -o yaml > cluster.yaml
  kubectl maintain sandbox --scenario cluster.yaml --kubeconfig-out sb.conf
  KUBECONFIG=sb.conf kubectl get nodes

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
    /// Address to listen on, a loopback one unless --expose; port 0 picks a free port
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Serve on a --listen address that is not loopback: anyone who reaches it and holds its kubeconfig may do anything to the simulated cluster
    #[arg(long)]
    pub expose: bool,
    /// Write the sandbox's kubeconfig (its CA and its owner's token, minted at each start) here, readable by you alone; without it, one is written in a private directory removed at exit
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Log every request as one JSON object per line to this file
    #[arg(long, value_name = "FILE")]
    pub request_log: Option<PathBuf>,
    /// Run containers of IMAGE (any tag or digest) as the local program
    /// PATH, with their arguments, environment, ServiceAccount token and
    /// volumes, as nobody unless the pod sets runAsUser (needs root). Repeatable
    #[arg(long, value_name = "IMAGE=PATH", value_parser = parse_local_image)]
    pub local_image: Vec<(String, PathBuf)>,
    /// Kubernetes version served at /version (major.minor)
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// Changes of each resource a watch can resume from before it gets 410 Expired
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

const DRAIN_EXAMPLES: &str = "\
Examples:
  # Drain a node as kubectl drain would, with waves, progress and a report
  kubectl maintain drain node-1 --ignore-daemonsets --delete-emptydir-data

  # Drain a node pool two nodes at a time, giving up after 20 minutes
  kubectl maintain drain -l pool=blue --max-parallel 2 --timeout 20m \\
    --ignore-daemonsets

  # Follow a drain plan, and print the report as JSON for a script
  kubectl maintain drain node-1 --plan plan.yaml -o json

  # Drain a pool unattended from CI: only inside a window, telling Slack,
  # metrics pushed
  kubectl maintain drain -l pool=blue --max-parallel 5 --ignore-daemonsets \\
    --yes --window 'Sat,Sun 02:00-06:00 Europe/Berlin' \\
    --notify env:SLACK_WEBHOOK --pushgateway http://pushgateway:9091

Exit codes: 0 drained, 1 API or unexpected failure, 2 invalid input (nothing
changed), 3 not drained (blocked, refused or timed out; the report says why),
130 interrupted (143 by SIGTERM).";

const UNCORDON_EXAMPLES: &str = "\
Examples:
  # Return a node to service: the cordon, taints and labels the drain added
  # are undone
  kubectl maintain uncordon node-1

  # Every node a pool drain left cordoned; first show what would change
  kubectl maintain uncordon -l pool=blue --dry-run
  kubectl maintain uncordon -l pool=blue

  # A node whose kubelet is not running yet (refused otherwise)
  kubectl maintain uncordon node-1 --even-if-not-ready";

const STATUS_EXAMPLES: &str = "\
Examples:
  # Every node under maintenance, with its state and the pods left
  kubectl maintain status

  # Why is node-1 stuck? Each pod left on it, and why (from another terminal)
  kubectl maintain status node-1

  # Follow a run handed to the cluster (--in-cluster) until it ends
  kubectl maintain status -w";

const LOGS_EXAMPLES: &str = "\
Examples:
  # The log of the latest run handed to the cluster, followed to its end
  kubectl maintain logs -f

  # A given run, with timestamps
  kubectl maintain logs kubectl-maintain-roll-1a2b3c4d --timestamps";

const ABORT_EXAMPLES: &str = "\
Examples:
  # Stop the latest run handed to the cluster after the node in progress
  kubectl maintain abort

  # A given run; then return what it left cordoned to service
  kubectl maintain abort kubectl-maintain-drain-1a2b3c4d
  kubectl maintain uncordon -l pool=blue";

const PLAN_EXAMPLES: &str = "\
Examples:
  # Which pods go in which wave, and what kubectl's filters would refuse
  kubectl maintain plan node-1 --ignore-daemonsets

  # Also ask the API server which evictions its PodDisruptionBudgets refuse
  # right now
  kubectl maintain plan node-1 --ignore-daemonsets --dry-run=server";

const ROLL_EXAMPLES: &str = "\
Examples:
  # Reboot a pool two nodes at a time, one zone after the other
  kubectl maintain roll -l pool=blue --ignore-daemonsets --max-parallel 2 \\
    --by-zone --exec 'ssh \"$NODE\" sudo systemctl reboot' \\
    --wait-for-reboot --wait-for-budgets

  # Let another actor (a cloud console, a PXE reimage) reboot each node;
  # show the order first
  kubectl maintain roll node-1 node-2 node-3 --ignore-daemonsets \\
    --wait-for-reboot --dry-run

An interrupted roll (Ctrl-C, a lost connection, kill -9) is taken up by running
the same command again: nodes done are skipped, the node in progress continues
from its phase. Each node is locked by a Lease (kubectl-maintain-NODE in
--lock-namespace) against a second run. Control-plane nodes are taken out only
while etcd keeps quorum (--allow-quorum-loss overrides), and never the last
schedulable node (--allow-no-schedulable-nodes overrides).

Exit codes: 0 every node done, 1 API or unexpected failure, 2 invalid input
(nothing changed), 3 some node not done (blocked, not started; the report says
why), 130 interrupted (143 by SIGTERM).";

pub use crate::client::flags::ClusterArgs;
use crate::client::flags::kubectl_bool;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DryRunArg {
    /// `false` is kubectl's deprecated spelling.
    #[value(alias = "false")]
    None,
    /// `true` (or no value) is kubectl's deprecated spelling.
    #[value(alias = "true")]
    Client,
    Server,
}

pub use crate::ui::formats::{LinesArg, OutputFormat};

#[derive(Debug, Args)]
pub struct DrainArgs {
    /// Nodes to drain: NAME, or node/NAME as `kubectl get nodes -o name` prints them
    #[arg(value_name = "NODE", value_parser = super::node_arg::parse)]
    pub nodes: Vec<String>,
    /// Select the nodes by label instead of naming them
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Choose the nodes whose kubelet reports a version in RANGE (<1.33, >=1.30,<1.33, 1.32), all or those -l selects
    #[arg(long, value_name = "RANGE", value_parser = crate::policy::kubelet_version::KubeletRange::parse)]
    pub kubelet_version: Option<crate::policy::kubelet_version::KubeletRange>,
    /// Continue even if there are pods that do not declare a controller
    #[arg(long, action = kubectl_bool!(), num_args = 0..=1, default_value_t = false, default_missing_value = "true", require_equals = true)]
    #[arg(help_heading = "kubectl drain's flags")]
    pub force: bool,
    /// Ignore DaemonSet-managed pods
    #[arg(long, action = kubectl_bool!(), num_args = 0..=1, default_value_t = false, default_missing_value = "true", require_equals = true)]
    #[arg(help_heading = "kubectl drain's flags")]
    pub ignore_daemonsets: bool,
    /// Continue even if there are pods using emptyDir (their data is deleted)
    #[arg(long, alias = "delete-local-data", action = kubectl_bool!(), num_args = 0..=1, default_value_t = false, default_missing_value = "true", require_equals = true)]
    #[arg(help_heading = "kubectl drain's flags")]
    pub delete_emptydir_data: bool,
    /// Seconds each pod gets to terminate; negative uses the pod's own
    #[arg(long, value_name = "SECONDS", default_value_t = -1, allow_negative_numbers = true)]
    #[arg(help_heading = "kubectl drain's flags")]
    pub grace_period: i64,
    /// Give up after this long (0: never), e.g. 5m
    #[arg(long, value_name = "DURATION", default_value = "0s")]
    #[arg(help_heading = "kubectl drain's flags")]
    pub timeout: String,
    /// After this long on a node, stop asking and delete what is left, bypassing PodDisruptionBudgets; each pod is deleted its grace period before the deadline, so that it still gets all of it. Pods held by drain markers are left unless --deadline-overrides-markers
    #[arg(long, value_name = "DURATION")]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub deadline: Option<String>,
    /// Do not wait, once a node's pods are gone, for the volumes they used to detach from it
    #[arg(long)]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub skip_wait_for_detach: bool,
    /// How long to wait for the evicted pods' volumes to detach before the node counts as timed out
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub detach_timeout: String,
    /// For a pod whose PodDisruptionBudget allows no disruption, scale its Deployment up by one first and let the pod go once the budget allows it; scaled back when the node is done
    #[arg(long)]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub surge: bool,
    /// With --deadline: delete pods held by drain markers at the deadline too
    #[arg(long, requires = "deadline")]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub deadline_overrides_markers: bool,
    /// With --deadline shorter than some pods' grace period: yes, delete those pods as soon as an eviction is refused (otherwise the drain refuses before any change)
    #[arg(long, requires = "deadline")]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub allow_short_deadline: bool,
    /// Only pods matching this label selector are drained
    #[arg(long, value_name = "SELECTOR", default_value = "")]
    #[arg(help_heading = "kubectl drain's flags")]
    pub pod_selector: String,
    /// Delete pods instead of evicting them, bypassing PodDisruptionBudgets
    #[arg(long, action = kubectl_bool!(), num_args = 0..=1, default_value_t = false, default_missing_value = "true", require_equals = true)]
    #[arg(help_heading = "kubectl drain's flags")]
    pub disable_eviction: bool,
    /// Which API evicts: auto (Kubernetes 1.37's EvictionRequest when the cluster serves it and its controller answers, so each pod's eviction responders act first; else the eviction subresource), request (EvictionRequest or fail before any change), eviction (the subresource, as kubectl drain)
    #[arg(long, value_enum, value_name = "API", default_value_t = crate::drain::evict::request::EvictionApi::Auto)]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub eviction_api: crate::drain::evict::request::EvictionApi,
    /// On a node whose kubelet is down (NotReady), a pod whose deletion was asked longer ago than this counts as gone, as Cluster API does; 0 waits for it, as kubectl drain does
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub lost_pod_timeout: String,
    /// Take nodes whose kubelet is down out of service (the node.kubernetes.io/out-of-service taint), so that their StatefulSet pods and volumes move at once; only with proof that they are powered off: the cloud's node.kubernetes.io/shutdown taint, --fence-command, or the node's name typed at the prompt
    #[arg(long)]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub node_shut_down: bool,
    /// With --node-shut-down: a command that powers the node off (IPMI, Redfish, a cloud CLI), run with NODE and NODE_ADDRESSES in its environment; exit 0 is the proof
    #[arg(long, value_name = "CMD", requires = "node_shut_down")]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub fence_command: Option<String>,
    /// Pods terminating for longer than this many seconds are not waited for (0: wait)
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    #[arg(help_heading = "kubectl drain's flags")]
    pub skip_wait_for_delete_timeout: i64,
    /// List pods in pages of this many (0: all at once)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 500,
        allow_negative_numbers = true
    )]
    #[arg(help_heading = "kubectl drain's flags")]
    pub chunk_size: i64,
    /// none, client (show the plan) or server (also ask the API server); no changes are made
    #[arg(long, value_enum, value_name = "MODE", default_value = "none", num_args = 0..=1, default_missing_value = "client", require_equals = true)]
    #[arg(help_heading = "kubectl drain's flags")]
    pub dry_run: DryRunArg,
    /// A DrainPlan file: waves and rules (docs/plan.md)
    #[arg(long, value_name = "FILE")]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub plan: Option<PathBuf>,
    /// Nodes drained at the same time
    #[arg(long, value_name = "N", default_value_t = 1)]
    #[arg(help_heading = "A pool of nodes")]
    pub max_parallel: usize,
    /// Finish the nodes of one zone (topology.kubernetes.io/zone) before starting the next zone's
    #[arg(long)]
    #[arg(help_heading = "A pool of nodes")]
    pub by_zone: bool,
    /// Stop starting nodes once more than N could not be drained (timed out, refused, failed); those not started stay cordoned. Default: go on, as kubectl drain does
    #[arg(long, value_name = "N")]
    #[arg(help_heading = "A pool of nodes")]
    pub max_blocked_nodes: Option<usize>,
    /// Ignore pods' drain markers (cluster.x-k8s.io/drain, karpenter.sh/do-not-disrupt) and drain those pods as kubectl drain does
    #[arg(long)]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub ignore_markers: bool,
    /// If kubectl's filters refuse a pod on any selected node, change nothing (kubectl cordons every node and drains the others)
    #[arg(long)]
    #[arg(help_heading = "Finishing a drain kubectl cannot")]
    pub all_or_nothing: bool,
    /// Predict the drain by running it on an in-process copy of the cluster, on a simulated clock, and read the cluster only; with drain, show the prediction before draining (docs/usage.md)
    #[arg(long)]
    #[arg(help_heading = "Predicting (--simulate)")]
    pub simulate: bool,
    /// With --simulate: copy the cluster from this file (`kubectl get ... -o yaml`, as the sandbox loads it) instead of reading the live one
    #[arg(long, value_name = "FILE", requires = "simulate")]
    #[arg(help_heading = "Predicting (--simulate)")]
    pub from: Option<PathBuf>,
    /// With --simulate: every pod takes this long to stop once deleted (within its grace period), instead of what its spec says
    #[arg(long, value_name = "DURATION", requires = "simulate")]
    #[arg(help_heading = "Predicting (--simulate)")]
    pub assume_shutdown: Option<String>,
    /// With --simulate: every new pod is Ready this long after it starts, instead of what its readiness probe says
    #[arg(long, value_name = "DURATION", requires = "simulate")]
    #[arg(help_heading = "Predicting (--simulate)")]
    pub assume_ready: Option<String>,
    /// With --simulate: shutdown and readiness times per workload, from a WorkloadTimes YAML file (docs/usage.md), over --assume-shutdown and --assume-ready
    #[arg(long, value_name = "FILE", requires = "simulate")]
    #[arg(help_heading = "Predicting (--simulate)")]
    pub assume_times: Option<PathBuf>,
    /// Report format on stdout (default: table; without a terminal and without -o, stdout carries kubectl drain's lines instead, see --lines)
    #[arg(short = 'o', long, value_enum)]
    #[arg(help_heading = "Output")]
    pub output: Option<OutputFormat>,
    /// What stdout and stderr carry: auto (kubectl drain's lines when stdout is not a terminal and no -o is given, else ours), kubectl (kubectl drain's lines on stdout and stderr, our report after them on stderr), report (our progress on stderr, our report on stdout)
    #[arg(long, value_enum, value_name = "MODE", default_value = "auto")]
    #[arg(help_heading = "Output")]
    pub lines: LinesArg,
    /// Do not ask for confirmation
    #[arg(short = 'y', long)]
    #[arg(help_heading = "Output")]
    pub yes: bool,
    /// Add this taint (key[=value]:Effect) at cordon; uncordon removes it. Repeatable
    #[arg(long = "taint", value_name = "TAINT")]
    #[arg(help_heading = "Marking the nodes")]
    pub taints: Vec<String>,
    /// Why: recorded on the node, shown by status
    #[arg(long, value_name = "TEXT")]
    #[arg(help_heading = "Marking the nodes")]
    pub reason: Option<String>,
    /// Write the DrainInProgress and Drained node conditions (KEP-5683) on nodes/status; =false to turn them off
    #[arg(long, action = kubectl_bool!(), num_args = 0..=1, default_value_t = true, default_missing_value = "true", require_equals = true)]
    #[arg(help_heading = "Marking the nodes")]
    pub node_conditions: bool,
    /// Label the node node.kubernetes.io/exclude-from-external-load-balancers at cordon, taking it out of cloud load balancers; uncordon removes the label (unless it was there before)
    #[arg(long)]
    #[arg(help_heading = "Marking the nodes")]
    pub exclude_from_load_balancers: bool,
    /// Set this label (KEY=VALUE) at cordon; uncordon puts back what the node had under KEY before (nothing, or its old value), unless it was changed since. Repeatable
    #[arg(long = "label-during", value_name = "KEY=VALUE", value_parser = crate::policy::maintenance::MarkSpec::label)]
    #[arg(help_heading = "Marking the nodes")]
    pub label_during: Vec<crate::policy::maintenance::MarkSpec>,
    /// Annotate the node so that cluster-autoscaler and Karpenter leave it alone while under maintenance (cluster-autoscaler.kubernetes.io/scale-down-disabled and karpenter.sh/do-not-disrupt, "true"); uncordon puts back what was there. Default: false for drain (a drained node may be on its way out), true for roll (the node comes back)
    #[arg(long, action = kubectl_bool!(), num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    #[arg(help_heading = "Marking the nodes")]
    pub protect_from_autoscalers: Option<bool>,
    /// Take a node only while at most this many nodes (N or P% of all nodes) are unavailable, counting cordoned and NotReady nodes and this run's; otherwise hold and say why (a drain then cordons each node at its turn)
    #[arg(long, value_name = "N|P%")]
    #[arg(help_heading = "A pool of nodes")]
    pub max_unavailable: Option<String>,
    /// Accepted for scripts written for v0.1.0; a drain no longer refuses these cases
    #[arg(long, hide = true)]
    pub allow_no_schedulable_nodes: bool,
    /// Accepted for scripts written for v0.1.0; a drain does not check etcd quorum
    #[arg(long, hide = true)]
    pub allow_quorum_loss: bool,
    /// Run this drain or roll in the cluster as a Job (in --namespace, default kube-system) under a ServiceAccount with exactly the permissions its flags need; prints how to follow it
    #[arg(long)]
    #[arg(help_heading = "Running in the cluster (--in-cluster)")]
    pub in_cluster: bool,
    /// With --in-cluster: print the objects as YAML and apply nothing (for GitOps)
    #[arg(long, requires = "in_cluster")]
    #[arg(help_heading = "Running in the cluster (--in-cluster)")]
    pub render: bool,
    /// With --in-cluster: the container image to run (default: this version's release image)
    #[arg(long, value_name = "IMAGE", requires = "in_cluster")]
    #[arg(help_heading = "Running in the cluster (--in-cluster)")]
    pub image: Option<String>,
    /// With --in-cluster: remove the ServiceAccount, ClusterRole, binding and ConfigMap a run of the same command made
    #[arg(long, requires = "in_cluster")]
    #[arg(help_heading = "Running in the cluster (--in-cluster)")]
    pub cleanup: bool,
    #[command(
        flatten,
        next_help_heading = "Unattended (notifications, metrics, what holds the next node)"
    )]
    pub unattended: UnattendedArgs,
    #[command(flatten, next_help_heading = "kubectl's global flags")]
    pub cluster: ClusterArgs,
}

/// What a drain or a roll nobody watches takes: who to tell, metrics, and
/// what holds the next node besides the room.
#[derive(Debug, Args)]
pub struct UnattendedArgs {
    /// Tell this webhook when the run starts, a node starts, is done or is blocked, the run holds, finishes or fails (repeatable); Slack and Teams webhooks by their host, or json+URL, slack+URL, teams+URL (docs/notifications.md); env:NAME or file:PATH read the URL from there, off the command line
    #[arg(long, value_name = "URL")]
    pub notify: Vec<String>,
    /// How long a node or the run must be held before it is told as blocked or held
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub notify_after: String,
    /// A notification's text, as kured's message templates (%s is the node; also {node}, {run}, {command}, {reason}, {summary}); KIND is run.started, node.started, node.done, node.blocked, run.held, run.finished or run.failed (repeatable)
    #[arg(long, value_name = "KIND=TEXT")]
    pub notify_template: Vec<String>,
    /// Serve Prometheus metrics on /metrics at this address (HOST:PORT, or :PORT) while the run lasts (docs/metrics.md)
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<String>,
    /// Push the metrics to this Prometheus Pushgateway at each node's end and at the run's end (env:NAME or file:PATH read the URL from there)
    #[arg(long, value_name = "URL")]
    pub pushgateway: Option<String>,
    /// Take no next node while an alert fires: a Prometheus or Alertmanager URL (env:NAME or file:PATH read it from there)
    #[arg(long, value_name = "URL")]
    pub block_on_alerts: Option<String>,
    /// With --block-on-alerts, only alerts whose NAME{label="value",...} matches this regular expression hold the run
    #[arg(long, value_name = "REGEX", requires = "block_on_alerts")]
    pub alert_filter: Option<String>,
    /// With --block-on-alerts, how often firing alerts are asked again
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "15s",
        requires = "block_on_alerts"
    )]
    pub alert_check_interval: String,
    /// Start nodes only inside this maintenance window, such as "Sat,Sun 02:00-06:00 Europe/Berlin" (repeatable; a node in progress finishes)
    #[arg(long, value_name = "DAYS HH:MM-HH:MM [ZONE]")]
    pub window: Vec<String>,
    /// Set MaintenancePlanned on every node of the run this long before the first drain
    #[arg(long, value_name = "DURATION")]
    pub announce: Option<String>,
}

impl DrainArgs {
    /// The report's format: `-o`, else a table.
    pub fn format(&self) -> OutputFormat {
        self.output.unwrap_or(OutputFormat::Table)
    }
}

#[derive(Debug, Args)]
pub struct RollArgs {
    #[command(flatten)]
    pub drain: DrainArgs,
    /// Run this shell command on each drained node's turn, with NODE, NODE_ADDRESSES, NODE_INTERNAL_IP, NODE_EXTERNAL_IP and NODE_HOSTNAME in its environment; a failure leaves the node cordoned. env:NAME or file:PATH reads a command that carries a credential from there: it is never shown, and an in-cluster run keeps it in its Secret
    #[arg(long, value_name = "CMD")]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub exec: Option<String>,
    /// How long --exec may run; then it and every process it started are ended and the node is left cordoned
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub action_timeout: String,
    /// After --exec (or for an external actor), wait until the node reboots (NotReady, or a new boot ID) before waiting for Ready
    #[arg(long)]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub wait_for_reboot: bool,
    /// How long a node may take to reboot, and then to be Ready
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub ready_timeout: String,
    /// After uncordoning, wait until every PodDisruptionBudget of the evicted pods has all its pods healthy (at most --ready-timeout)
    #[arg(long)]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub wait_for_budgets: bool,
    /// After uncordoning (and the budgets), wait this long before the node counts as done
    #[arg(long, value_name = "DURATION")]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub soak: Option<String>,
    /// Namespace of the per-node Leases that lock nodes against a second run
    #[arg(long, value_name = "NAMESPACE", default_value = "kube-system")]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub lock_namespace: String,
    /// How long a lock lasts unless renewed (it is renewed every third of it)
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub lease_duration: String,
    /// kured's DaemonSet, whose reboot lock the roll honours and holds during each action
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        default_value = "kube-system/kured"
    )]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub kured_daemonset: String,
    /// Start the roll over, ignoring what an earlier run of the same command recorded
    #[arg(long)]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub fresh: bool,
    /// Wait for draino's pre-activity annotations (node-lifecycle.datadoghq.com/pre-activity-*) on each node to be done before its drain
    #[arg(long)]
    #[arg(help_heading = "Rolling: each node's action and return")]
    pub draino_pre_activities: bool,
}

#[derive(Debug, Args)]
pub struct UncordonArgs {
    /// Nodes to return to service: NAME, or node/NAME
    #[arg(value_name = "NODE", value_parser = super::node_arg::parse)]
    pub nodes: Vec<String>,
    /// Select the nodes by label instead of naming them
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Uncordon a node that is not Ready too (its out-of-service taint stays until it is Ready)
    #[arg(long)]
    pub even_if_not_ready: bool,
    /// How long to wait, on a node taken out of service and Ready again, for its terminating pods and VolumeAttachments to be gone before its out-of-service taint is removed; past it, the node is left as it is
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub out_of_service_timeout: String,
    /// none, client (say what would be uncordoned) or server (also ask the API server); no changes are made
    #[arg(long, value_enum, value_name = "MODE", default_value = "none", num_args = 0..=1, default_missing_value = "client", require_equals = true)]
    pub dry_run: DryRunArg,
    #[command(flatten, next_help_heading = "kubectl's global flags")]
    pub cluster: ClusterArgs,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Show only these nodes (NAME, or node/NAME); all under maintenance when none are named
    #[arg(value_name = "NODE", value_parser = super::node_arg::parse)]
    pub nodes: Vec<String>,
    /// Show only the nodes whose kubelet reports a version in RANGE (<1.33, >=1.30,<1.33, 1.32)
    #[arg(long, value_name = "RANGE", value_parser = crate::policy::kubelet_version::KubeletRange::parse)]
    pub kubelet_version: Option<crate::policy::kubelet_version::KubeletRange>,
    /// Follow a run handed to the cluster (the newest, or --run) until it ends: its pod, each node's phase, holds and blockers
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// The run to show (its Job's name); implies showing the run rather than the nodes
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// Output format
    #[arg(short = 'o', long, value_enum, default_value = "table")]
    pub output: OutputFormat,
    #[command(flatten, next_help_heading = "kubectl's global flags")]
    pub cluster: ClusterArgs,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The run's Job (kubectl-maintain-roll-…); the newest run in the namespace when left out
    #[arg(value_name = "RUN")]
    pub run: Option<String>,
    /// Stream the log, across the run's pod restarts and replacements, until the run ends
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// Prefix each line with its time, as kubectl logs --timestamps
    #[arg(long)]
    pub timestamps: bool,
    #[command(flatten, next_help_heading = "kubectl's global flags")]
    pub cluster: ClusterArgs,
}

#[derive(Debug, Args)]
pub struct AbortArgs {
    /// The run's Job (kubectl-maintain-roll-…); the newest run in the namespace when left out
    #[arg(value_name = "RUN")]
    pub run: Option<String>,
    #[command(flatten, next_help_heading = "kubectl's global flags")]
    pub cluster: ClusterArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the sandbox serving after the drain, to look around with kubectl
    #[arg(long)]
    pub keep_running: bool,
    /// Give up on the blocked pods after this long
    #[arg(long, value_name = "DURATION", default_value = "12s")]
    pub timeout: String,
}

const COMPLETION_HELP: &str = "\
Examples:
  # Completion for the kubectl-maintain executable
  kubectl maintain completion bash > /etc/bash_completion.d/kubectl-maintain

  # Through kubectl (1.26+): node names come from the cluster. Put this on PATH:
  #   kubectl_complete-maintain  (shipped next to the binary; it runs
  #   `kubectl-maintain __complete \"$@\"`)
  kubectl maintain drain <TAB>";

/// `IMAGE=PATH`: an image reference and an existing local program.
fn parse_local_image(s: &str) -> Result<(String, PathBuf), String> {
    let (image, path) = s
        .split_once('=')
        .filter(|(i, p)| !i.is_empty() && !p.is_empty())
        .ok_or_else(|| format!("{s:?}: expected IMAGE=PATH"))?;
    let path = std::fs::canonicalize(path).map_err(|e| format!("{path}: {e}"))?;
    Ok((image.to_string(), path))
}

#[cfg(test)]
mod help_tests {
    use clap::CommandFactory as _;

    /// Each subcommand's examples come first, as kubectl's help has them,
    /// and fit 80 columns, so that a copy and paste never breaks.
    #[test]
    fn examples_come_first_and_fit_80_columns() {
        let mut cli = super::Cli::command();
        let names: Vec<String> = cli
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        let mut with_examples = 0;
        for name in names {
            let sub = cli.find_subcommand_mut(&name).expect("a subcommand");
            let help = sub.render_long_help().to_string();
            let Some(examples) = help.find("Examples:") else {
                continue;
            };
            with_examples += 1;
            let usage = help.find("Usage:").expect("usage");
            assert!(
                examples < usage,
                "{name}: examples after the usage:\n{help}"
            );
            for line in help[examples..usage].lines() {
                assert!(
                    line.chars().count() <= 80,
                    "{name}: {line:?} is over 80 columns"
                );
            }
        }
        assert!(with_examples >= 7, "{with_examples}");
    }
}
