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
    /// `spec.hooks`: what a roll waits on other operators for.
    pub hooks: Hooks,
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

/// Where in a node's roll a hook is waited on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookPoint {
    /// Before the node is cordoned and drained.
    PreDrain,
    /// After the action (`--exec`, the reboot), before waiting for Ready.
    PostAction,
    /// Ready again, before it is uncordoned.
    PreUncordon,
}

impl HookPoint {
    /// The annotation kubectl-maintain writes on the Node, whose value each
    /// hook's annotation must echo.
    pub fn annotation(self) -> &'static str {
        match self {
            HookPoint::PreDrain => "kubectl-maintain.io/pre-drain",
            HookPoint::PostAction => "kubectl-maintain.io/post-action",
            HookPoint::PreUncordon => "kubectl-maintain.io/pre-uncordon",
        }
    }

    /// Its name in the plan.
    pub fn as_str(self) -> &'static str {
        match self {
            HookPoint::PreDrain => "preDrain",
            HookPoint::PostAction => "postAction",
            HookPoint::PreUncordon => "preUncordon",
        }
    }
}

/// What a hook that does not answer in time does to the node's roll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum OnTimeout {
    /// The node's roll stops there: blocked, with the hook named.
    #[default]
    Fail,
    /// Said as a warning; the roll goes on.
    Continue,
}

/// One operator's hook: the annotation it sets on the Node to the value
/// kubectl-maintain wrote at the hook's point (Rancher's value echo).
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    pub annotation: String,
    pub timeout: Duration,
    pub on_timeout: OnTimeout,
}

/// The hooks of each point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hooks {
    pub pre_drain: Vec<Hook>,
    pub post_action: Vec<Hook>,
    pub pre_uncordon: Vec<Hook>,
}

impl Hooks {
    pub fn at(&self, point: HookPoint) -> &[Hook] {
        match point {
            HookPoint::PreDrain => &self.pre_drain,
            HookPoint::PostAction => &self.post_action,
            HookPoint::PreUncordon => &self.pre_uncordon,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pre_drain.is_empty() && self.post_action.is_empty() && self.pre_uncordon.is_empty()
    }
}
