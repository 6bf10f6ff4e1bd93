//! The validated plan every drain runs from.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use kube_conventions::selector::Selector;

/// KEP-4212 pod types, in the order their waves run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
pub enum PodType {
    #[default]
    Default,
    DaemonSet,
    Static,
}

impl fmt::Display for PodType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PodType::Default => "Default",
            PodType::DaemonSet => "DaemonSet",
            PodType::Static => "Static",
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Wave {
    pub name: String,
    pub pod_type: PodType,
    /// Pods with a priority at or below this belong here (first match wins).
    pub max_priority: i32,
    pub pod_selector: Option<Selector>,
    pub namespace_selector: Option<Selector>,
    /// How long this wave may take on one node.
    pub timeout: Option<Duration>,
}

impl Wave {
    pub fn has_selector(&self) -> bool {
        self.pod_selector.is_some() || self.namespace_selector.is_some()
    }

    /// The KEP-4212 order key: type, then priority, selectors first.
    pub fn order_key(&self) -> (PodType, i32, bool) {
        (self.pod_type, self.max_priority, !self.has_selector())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RuleAction {
    /// Never evicted, never waited for.
    Skip,
    /// Never evicted; the drain waits for the pod to finish on its own.
    WaitCompleted,
    /// Evicted, its Deployment surging first when its budget never allows
    /// a disruption (`--surge` for these pods only).
    Surge,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub name: String,
    pub action: RuleAction,
    pub pod_selector: Option<Selector>,
    pub namespace_selector: Option<Selector>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub waves: Vec<Wave>,
    pub rules: Vec<Rule>,
    /// Maintenance taints to add at cordon and remove at uncordon.
    pub taints: Vec<crate::policy::maintenance::TaintSpec>,
    /// `spec.deadline`: as `--deadline` (the flag wins).
    pub deadline: Option<Duration>,
    /// `spec.surge`: as `--surge` (either turns it on).
    pub surge: bool,
    /// Where it came from, for messages: a file path or "flags".
    pub source: String,
}

impl Plan {
    /// Does any wave or rule need namespace labels?
    pub fn uses_namespace_selectors(&self) -> bool {
        self.waves.iter().any(|w| w.namespace_selector.is_some())
            || self.rules.iter().any(|r| r.namespace_selector.is_some())
    }

    pub fn drains_daemonsets(&self) -> bool {
        self.waves.iter().any(|w| w.pod_type == PodType::DaemonSet)
    }
}
