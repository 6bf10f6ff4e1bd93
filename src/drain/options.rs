//! What a drain is asked to do, once the flags and the plan file are read
//! and checked (crate::cli::drain_options turns the flags into these).

use std::time::Duration;

use crate::vocabulary::outcome::DryRun;

/// The nodes to drain: by name, by a label selector, or by the version
/// their kubelet reports (`--kubelet-version`, narrowed by a selector).
#[derive(Debug, Clone)]
pub(crate) enum NodeSelection {
    Names(Vec<String>),
    Selector(String),
    Kubelet {
        selector: Option<String>,
        range: crate::policy::kubelet_version::KubeletRange,
    },
}

impl NodeSelection {
    /// The selection as a run's identity reads it: `-l SELECTOR`, or the
    /// names sorted (the same nodes in another order are the same run).
    pub(crate) fn words(&self) -> String {
        match self {
            NodeSelection::Selector(s) => format!("-l {s}"),
            NodeSelection::Kubelet {
                selector: Some(s),
                range,
            } => format!("-l {s} --kubelet-version {range}"),
            NodeSelection::Kubelet {
                selector: None,
                range,
            } => format!("--kubelet-version {range}"),
            NodeSelection::Names(names) => {
                let mut names = names.clone();
                names.sort();
                names.join(" ")
            }
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) nodes: NodeSelection,
    pub(crate) flags: crate::policy::classify::FilterFlags,
    /// `--grace-period`; `None` for the pod's own.
    pub(crate) grace_period: Option<i64>,
    /// `--timeout`; `None` for no limit.
    pub(crate) timeout: Option<Duration>,
    /// `--deadline`: then what is left is deleted, budgets bypassed.
    pub(crate) deadline: Option<Duration>,
    /// `--deadline-overrides-markers`.
    pub(crate) deadline_overrides_markers: bool,
    /// `--allow-short-deadline`: a deadline may cut grace periods.
    pub(crate) allow_short_deadline: bool,
    /// `--surge`.
    pub(crate) surge: bool,
    /// `--detach-timeout`; None with `--skip-wait-for-detach`.
    pub(crate) detach_wait: Option<Duration>,
    /// `--lost-pod-timeout`: on a node whose kubelet is down, pods whose
    /// deletion was asked longer ago count as gone (None: 0, off).
    pub(crate) lost_pod_timeout: Option<Duration>,
    /// `--node-shut-down`: take down nodes out of service, with proof
    /// that they are powered off (crate::drain::out_of_service).
    pub(crate) node_shut_down: Option<crate::drain::out_of_service::Proof>,
    pub(crate) pod_selector: Option<String>,
    pub(crate) disable_eviction: bool,
    /// `--eviction-api`: EvictionRequests, the eviction subresource, or
    /// whichever the cluster serves.
    pub(crate) eviction_api: crate::drain::evict::request::EvictionApi,
    pub(crate) chunk_size: u32,
    pub(crate) dry_run: DryRun,
    pub(crate) max_parallel: usize,
    /// `--by-zone`: finish one zone's nodes before starting the next zone's.
    pub(crate) by_zone: bool,
    /// `--max-blocked-nodes`: stop starting nodes once more than this many
    /// could not be drained; `None` goes on, as kubectl drain does.
    pub(crate) max_blocked_nodes: Option<usize>,
    /// `--all-or-nothing`: if kubectl's filters refuse a pod on any selected
    /// node, change nothing anywhere.
    pub(crate) all_or_nothing: bool,
    /// Maintenance taints added at cordon (`--taint` and the plan's).
    pub(crate) taints: Vec<crate::policy::maintenance::TaintSpec>,
    /// Write the DrainInProgress and Drained node conditions (KEP-5683).
    pub(crate) node_conditions: bool,
    /// Labels added at cordon (`--exclude-from-load-balancers`).
    pub(crate) labels: Vec<(String, String)>,
    /// Labels and annotations set at cordon and put back as they were at
    /// uncordon (`--label-during`, `--protect-from-autoscalers`).
    pub(crate) marks: Vec<crate::policy::maintenance::MarkSpec>,
    /// `--reason`, recorded on the node.
    pub(crate) reason: Option<String>,
    /// `plan`: a pod whose budget allows no disruption now is shown
    /// blocked, read from the budgets' status (no eviction is asked).
    pub(crate) plan_reads_budgets: bool,
    /// `--max-unavailable`: the pool runner holds the next node past it.
    pub(crate) max_unavailable: Option<crate::policy::guard::MaxUnavailable>,
}

impl Options {
    /// What a drain (or a roll's drains) with these options publishes:
    /// nothing for a dry run, which changes nothing and tells no one.
    pub(crate) fn publish(&self) -> crate::publish::Publish {
        if self.dry_run != DryRun::None {
            return crate::publish::Publish::default();
        }
        crate::publish::Publish {
            conditions: self.node_conditions,
            events: true,
            reason: self.reason.clone(),
        }
    }
}
