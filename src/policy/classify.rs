//! What happens to each pod on a node: which wave evicts it, or why it is
//! left alone, waited for, or refused. Pure: the caller fetched everything
//! it needs (DaemonSets that exist, namespace labels) beforehand.
//!
//! kubectl's filters and their order and messages follow
//! kubernetes/kubectl pkg/drain/filters.go.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use crate::policy::plan::{Plan, PodType, RuleAction};
use kube_conventions::selector::Selector;

pub const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
pub const CAPI_DRAIN_LABEL: &str = "cluster.x-k8s.io/drain";
pub const KARPENTER_DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";

/// The flags that decide kubectl's filters.
#[derive(Debug, Clone, Default)]
pub struct FilterFlags {
    pub force: bool,
    pub ignore_daemonsets: bool,
    pub delete_emptydir_data: bool,
    /// `--skip-wait-for-delete-timeout` in seconds (0: off).
    pub skip_wait_for_delete_timeout: u64,
    /// `--ignore-markers`: pods' drain markers (`cluster.x-k8s.io/drain`,
    /// `karpenter.sh/do-not-disrupt`) are ignored, as kubectl ignores them.
    pub ignore_markers: bool,
}

/// A pod kubectl would refuse to drain; any of these stops its node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "detail")]
pub enum Refusal {
    DaemonSet,
    /// The owning DaemonSet could not be read (kubectl's message).
    DaemonSetMissing(String),
    LocalStorage,
    Unmanaged,
}

impl Refusal {
    /// kubectl's error text for this filter.
    pub fn kubectl_message(&self) -> String {
        match self {
            Refusal::DaemonSet => {
                "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)".into()
            }
            Refusal::DaemonSetMissing(e) => format!("cannot delete {e}"),
            Refusal::LocalStorage => {
                "cannot delete Pods with local storage (use --delete-emptydir-data to override)"
                    .into()
            }
            Refusal::Unmanaged => {
                "cannot delete Pods that declare no controller (use --force to override)".into()
            }
        }
    }
}

/// kubectl's warning for a DaemonSet pod `--ignore-daemonsets` leaves.
pub const DAEMONSET_WARNING: &str = "ignoring DaemonSet-managed Pods";
/// kubectl's warning for a pod `--force` deletes without a controller.
pub const UNMANAGED_WARNING: &str = "deleting Pods that declare no controller";

/// The warning kubectl's filters end with for a pod (pkg/drain/filters.go):
/// only the last filter's word stays, so the only ones a drain ever shows
/// are the DaemonSet pods it ignores and the pods with no controller it
/// deletes (the local-storage and orphaned-DaemonSet warnings are always
/// overwritten by the controller filter after them).
pub fn kubectl_warning(skip: Option<&SkipReason>, warning: Option<&str>) -> Option<&'static str> {
    match (skip, warning) {
        (Some(SkipReason::DaemonSet), _) => Some(DAEMONSET_WARNING),
        (None, Some(UNMANAGED_WARNING)) => Some(UNMANAGED_WARNING),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "detail")]
pub enum SkipReason {
    /// A plan rule with `action: skip`.
    Rule(String),
    /// Label `cluster.x-k8s.io/drain: skip`.
    DrainLabel,
    /// A static pod's mirror: the API cannot evict it.
    MirrorPod,
    /// DaemonSet-managed, ignored as `--ignore-daemonsets` asks.
    DaemonSet,
    /// Terminating for longer than `--skip-wait-for-delete-timeout`.
    DeletedLongAgo,
    /// Came to the node after the drain began (tolerates the cordon); not chased.
    ArrivedDuringDrain,
}

/// One line for tables.
pub fn describe_skip(r: &SkipReason) -> String {
    match r {
        SkipReason::Rule(name) => format!("rule {name}"),
        SkipReason::DrainLabel => format!(
            "marker: label {CAPI_DRAIN_LABEL}=skip (kubectl drain evicts it; --ignore-markers does too)"
        ),
        SkipReason::MirrorPod => "static pod: the kubelet owns it, the API cannot evict it".into(),
        SkipReason::DaemonSet => "DaemonSet-managed (--ignore-daemonsets)".into(),
        SkipReason::DeletedLongAgo => {
            "terminating longer than --skip-wait-for-delete-timeout".into()
        }
        SkipReason::ArrivedDuringDrain => {
            "arrived after the drain began (tolerates the cordon); not chased".into()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "detail")]
pub enum WaitReason {
    /// A plan rule with `action: waitCompleted`.
    Rule(String),
    /// Label `cluster.x-k8s.io/drain: wait-completed`.
    DrainLabel,
    /// Annotation `karpenter.sh/do-not-disrupt: "true"`.
    DoNotDisrupt,
}

impl WaitReason {
    /// What holds the pod, in a few words.
    pub fn describe(&self) -> String {
        match self {
            WaitReason::Rule(name) => format!("rule {name} of the plan"),
            WaitReason::DrainLabel => format!("marker: label {CAPI_DRAIN_LABEL}=wait-completed"),
            WaitReason::DoNotDisrupt => {
                format!("marker: annotation {KARPENTER_DO_NOT_DISRUPT}=true")
            }
        }
    }

    /// How the operator lets the drain evict the pod.
    pub fn release(&self) -> &'static str {
        match self {
            WaitReason::Rule(_) => "change the plan's rule",
            WaitReason::DrainLabel => {
                "remove the label (kubectl label pod NAME -n NS cluster.x-k8s.io/drain-) or rerun with --ignore-markers"
            }
            WaitReason::DoNotDisrupt => {
                "remove the annotation (kubectl annotate pod NAME -n NS karpenter.sh/do-not-disrupt-) or rerun with --ignore-markers"
            }
        }
    }

    /// `release` for one pod, its command ready to paste.
    pub fn release_for(&self, namespace: &str, name: &str) -> String {
        self.release()
            .replace("pod NAME -n NS", &format!("pod {name} -n {namespace}"))
    }

    /// Is it a marker on the pod (which kubectl drain ignores), not a rule?
    pub fn is_marker(&self) -> bool {
        !matches!(self, WaitReason::Rule(_))
    }
}

/// A marker kubectl drain ignores that decides this pod's fate, if any.
pub fn marker(d: &Disposition) -> Option<String> {
    match d {
        Disposition::WaitCompleted { reason, .. } if reason.is_marker() => {
            Some(format!("{}: waits until it completes", reason.describe()))
        }
        Disposition::Skip {
            reason: SkipReason::DrainLabel,
        } => Some(format!("label {CAPI_DRAIN_LABEL}=skip: left on the node")),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "action")]
pub enum Disposition {
    Evict {
        wave: usize,
        /// kubectl's warning for a pod it drains anyway (`--force`, emptyDir).
        #[serde(skip_serializing_if = "Option::is_none")]
        warning: Option<String>,
        /// A `surge` rule took it: its Deployment surges if its budget
        /// never allows a disruption (crate::drain::surge).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        surge: bool,
    },
    /// Not evicted; its wave waits for it to finish.
    WaitCompleted {
        wave: usize,
        reason: WaitReason,
    },
    Skip {
        reason: SkipReason,
    },
    Refuse {
        refusal: Refusal,
    },
}

impl Disposition {
    /// The drain evicts the pod (in some wave).
    pub fn evicts(&self) -> bool {
        matches!(self, Disposition::Evict { .. })
    }
}

/// Whether each DaemonSet named by a pod's controllerRef could be read.
pub type DaemonSets = HashMap<(String, String), Result<(), String>>;

pub struct Context<'a> {
    pub plan: &'a Plan,
    pub flags: &'a FilterFlags,
    pub namespace_labels: &'a HashMap<String, BTreeMap<String, String>>,
    pub daemonsets: &'a DaemonSets,
    pub now: Timestamp,
}

pub fn controller_kind(pod: &Pod) -> Option<(&str, &str)> {
    controller_of(&pod.metadata)
}

/// An object's controller (the owner reference marked `controller`), as
/// (kind, name): the API allows at most one.
pub fn controller_of(meta: &ObjectMeta) -> Option<(&str, &str)> {
    meta.owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))
        .map(|o| (o.kind.as_str(), o.name.as_str()))
}

/// Succeeded or Failed: kubectl's filters let such a pod go without checks.
pub fn is_finished(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// The PersistentVolumeClaims a pod's volumes name.
pub fn claim_names(pod: &Pod) -> impl Iterator<Item = &str> {
    pod.spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| c.claim_name.as_str())
}

fn has_empty_dir(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.volumes.as_ref())
        .is_some_and(|vs| vs.iter().any(|v| v.empty_dir.is_some()))
}

fn label<'p>(pod: &'p Pod, key: &str) -> Option<&'p str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

fn annotation<'p>(pod: &'p Pod, key: &str) -> Option<&'p str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

pub fn priority(pod: &Pod) -> i32 {
    pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0)
}

pub fn pod_type(pod: &Pod) -> PodType {
    if annotation(pod, MIRROR_ANNOTATION).is_some() {
        PodType::Static
    } else if controller_kind(pod).is_some_and(|(k, _)| k == "DaemonSet") {
        PodType::DaemonSet
    } else {
        PodType::Default
    }
}

fn selector_matches(sel: Option<&Selector>, labels: Option<&BTreeMap<String, String>>) -> bool {
    let empty = BTreeMap::new();
    sel.is_none_or(|s| s.matches(labels.unwrap_or(&empty)))
}

impl Context<'_> {
    fn namespace_labels(&self, pod: &Pod) -> Option<&BTreeMap<String, String>> {
        self.namespace_labels
            .get(pod.metadata.namespace.as_deref().unwrap_or_default())
    }

    fn matches(&self, pod: &Pod, pod_sel: Option<&Selector>, ns_sel: Option<&Selector>) -> bool {
        selector_matches(pod_sel, pod.metadata.labels.as_ref())
            && selector_matches(ns_sel, self.namespace_labels(pod))
    }

    /// The first wave whose type, priority bound and selectors take the pod.
    pub fn wave_for(&self, pod: &Pod) -> Option<usize> {
        let t = pod_type(pod);
        let prio = priority(pod);
        self.plan.waves.iter().position(|w| {
            w.pod_type == t
                && prio <= w.max_priority
                && self.matches(pod, w.pod_selector.as_ref(), w.namespace_selector.as_ref())
        })
    }

    fn deleted_long_ago(&self, pod: &Pod) -> bool {
        let limit = self.flags.skip_wait_for_delete_timeout;
        limit > 0
            && pod.metadata.deletion_timestamp.as_ref().is_some_and(|t| {
                let age = self.now.as_second() - t.0.as_second();
                age > limit as i64
            })
    }

    #[allow(clippy::too_many_lines)] // long on purpose: kubectl drain's filter chain in its order (pkg/drain/filters.go), then the plan's rules
    pub fn classify(&self, pod: &Pod) -> Disposition {
        if self.deleted_long_ago(pod) {
            return Disposition::Skip {
                reason: SkipReason::DeletedLongAgo,
            };
        }
        if annotation(pod, MIRROR_ANNOTATION).is_some() {
            return Disposition::Skip {
                reason: SkipReason::MirrorPod,
            };
        }
        // Rules and per-pod markers come before kubectl's filters: a pod the
        // operator said to leave alone must not block its node.
        let wave = self.wave_for(pod);
        let mut surge = false;
        for rule in &self.plan.rules {
            if self.matches(
                pod,
                rule.pod_selector.as_ref(),
                rule.namespace_selector.as_ref(),
            ) {
                if rule.action == RuleAction::Surge {
                    // Evicted as any pod, its workload surging first.
                    surge = true;
                    break;
                }
                return match (rule.action, wave) {
                    (RuleAction::Skip, _) | (RuleAction::WaitCompleted, None) => {
                        Disposition::Skip {
                            reason: SkipReason::Rule(rule.name.clone()),
                        }
                    }
                    (RuleAction::WaitCompleted, Some(wave)) => Disposition::WaitCompleted {
                        wave,
                        reason: WaitReason::Rule(rule.name.clone()),
                    },
                    (RuleAction::Surge, _) => unreachable!("taken above"),
                };
            }
        }
        let markers = if self.flags.ignore_markers {
            None
        } else {
            label(pod, CAPI_DRAIN_LABEL)
        };
        match (markers, wave) {
            (Some("skip"), _) => {
                return Disposition::Skip {
                    reason: SkipReason::DrainLabel,
                };
            }
            (Some("wait-completed"), Some(wave)) => {
                return Disposition::WaitCompleted {
                    wave,
                    reason: WaitReason::DrainLabel,
                };
            }
            _ => {}
        }
        if !self.flags.ignore_markers
            && annotation(pod, KARPENTER_DO_NOT_DISRUPT) == Some("true")
            && let Some(wave) = wave
        {
            return Disposition::WaitCompleted {
                wave,
                reason: WaitReason::DoNotDisrupt,
            };
        }

        let finished = is_finished(pod);
        let mut warning = None;
        if let Some(("DaemonSet", name)) = controller_kind(pod)
            && !finished
        {
            let ns = pod.metadata.namespace.clone().unwrap_or_default();
            match self.daemonsets.get(&(ns, name.to_string())) {
                Some(Err(e)) if self.flags.force => warning = Some(e.clone()),
                Some(Err(e)) => {
                    return Disposition::Refuse {
                        refusal: Refusal::DaemonSetMissing(e.clone()),
                    };
                }
                _ => {}
            }
            if warning.is_none() && !self.plan.drains_daemonsets() {
                return if self.flags.ignore_daemonsets {
                    Disposition::Skip {
                        reason: SkipReason::DaemonSet,
                    }
                } else {
                    Disposition::Refuse {
                        refusal: Refusal::DaemonSet,
                    }
                };
            }
        }
        if has_empty_dir(pod) && !finished {
            if !self.flags.delete_emptydir_data {
                return Disposition::Refuse {
                    refusal: Refusal::LocalStorage,
                };
            }
            warning = Some("deleting Pods with local storage".into());
        }
        if controller_kind(pod).is_none() && !finished {
            if !self.flags.force {
                return Disposition::Refuse {
                    refusal: Refusal::Unmanaged,
                };
            }
            warning = Some(UNMANAGED_WARNING.into());
        }
        match wave {
            Some(wave) => Disposition::Evict {
                wave,
                warning,
                surge,
            },
            // An orphaned DaemonSet pod under --force, with no DaemonSet
            // wave: kubectl deletes it, so it goes with the first wave.
            None => Disposition::Evict {
                wave: 0,
                warning,
                surge,
            },
        }
    }
}

/// The operator that takes a pod's eviction over, when one does: the drain
/// then waits for it instead of reading the refusal as a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandledBy {
    /// KubeVirt evacuates the VM a launcher pod runs.
    KubeVirt { vmi: String },
    /// Strimzi's Drain Cleaner hands a Kafka broker or ZooKeeper pod to the
    /// Strimzi Cluster Operator, which rolls it elsewhere.
    Strimzi { cluster: String },
}

/// Who handles the pod's eviction, if an operator does.
pub fn handled_by(pod: &Pod) -> Option<HandledBy> {
    if let Some(vmi) = vmi_name(pod) {
        return Some(HandledBy::KubeVirt { vmi });
    }
    strimzi_cluster(pod).map(|cluster| HandledBy::Strimzi { cluster })
}

/// The Kafka cluster of a pod Strimzi's Drain Cleaner takes evictions of
/// (kube_conventions::strimzi), as its `strimzi.io/cluster` label names it.
pub fn strimzi_cluster(pod: &Pod) -> Option<String> {
    let labels = pod.metadata.labels.as_ref()?;
    let label = |k: &str| labels.get(k).map(String::as_str);
    let cluster = kube_conventions::strimzi::drain_cleaner_cluster(
        label("strimzi.io/kind"),
        label("strimzi.io/name"),
    )?;
    Some(label("strimzi.io/cluster").unwrap_or(cluster).to_string())
}

/// The VMI a launcher pod runs, if the pod is one.
pub fn vmi_name(pod: &Pod) -> Option<String> {
    let launcher = pod
        .metadata
        .labels
        .as_ref()?
        .get("kubevirt.io")
        .map(String::as_str)
        == Some("virt-launcher");
    match controller_kind(pod) {
        Some(("VirtualMachineInstance", name)) if launcher => Some(name.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::plan::defaults;
    use serde_json::json;

    fn pod(v: &serde_json::Value) -> Pod {
        let mut pod =
            json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": []}});
        json_patch::merge(&mut pod, v);
        serde_json::from_value(pod).expect("pod")
    }

    fn rs_owned() -> serde_json::Value {
        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1", "controller": true}])
    }

    fn ds_owned() -> serde_json::Value {
        json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "2", "controller": true}])
    }

    struct Fixture {
        plan: Plan,
        flags: FilterFlags,
        ns: HashMap<String, BTreeMap<String, String>>,
        ds: DaemonSets,
    }

    impl Fixture {
        fn new() -> Self {
            let mut ds = DaemonSets::new();
            ds.insert(("ns".into(), "ds".into()), Ok(()));
            Fixture {
                plan: defaults::plan(),
                flags: FilterFlags::default(),
                ns: HashMap::new(),
                ds,
            }
        }
        fn classify(&self, p: &Pod) -> Disposition {
            Context {
                plan: &self.plan,
                flags: &self.flags,
                namespace_labels: &self.ns,
                daemonsets: &self.ds,
                now: Timestamp::now(),
            }
            .classify(p)
        }
    }

    #[test]
    fn priorities_pick_the_default_waves() {
        let f = Fixture::new();
        let user = pod(&json!({"metadata": {"ownerReferences": rs_owned()}}));
        assert_eq!(
            f.classify(&user),
            Disposition::Evict {
                wave: 0,
                warning: None,
                surge: false
            }
        );
        let critical = pod(
            &json!({"metadata": {"ownerReferences": rs_owned()}, "spec": {"priority": 2_000_000_000}}),
        );
        assert_eq!(
            f.classify(&critical),
            Disposition::Evict {
                wave: 1,
                warning: None,
                surge: false
            }
        );
        let node_critical = pod(
            &json!({"metadata": {"ownerReferences": rs_owned()}, "spec": {"priority": 2_000_001_000}}),
        );
        assert_eq!(
            f.classify(&node_critical),
            Disposition::Evict {
                wave: 2,
                warning: None,
                surge: false
            }
        );
    }

    #[test]
    fn kubectl_filters_refuse_as_kubectl_does() {
        let mut f = Fixture::new();
        let bare = pod(&json!({}));
        assert_eq!(
            f.classify(&bare),
            Disposition::Refuse {
                refusal: Refusal::Unmanaged
            }
        );
        let ds = pod(&json!({"metadata": {"ownerReferences": ds_owned()}}));
        assert_eq!(
            f.classify(&ds),
            Disposition::Refuse {
                refusal: Refusal::DaemonSet
            }
        );
        let empty_dir = pod(
            &json!({"metadata": {"ownerReferences": rs_owned()}, "spec": {"volumes": [{"name": "s", "emptyDir": {}}]}}),
        );
        assert_eq!(
            f.classify(&empty_dir),
            Disposition::Refuse {
                refusal: Refusal::LocalStorage
            }
        );
        let done = pod(&json!({"status": {"phase": "Succeeded"}}));
        assert!(
            matches!(f.classify(&done), Disposition::Evict { .. }),
            "finished pods always go"
        );

        f.flags = FilterFlags {
            force: true,
            ignore_daemonsets: true,
            delete_emptydir_data: true,
            skip_wait_for_delete_timeout: 0,
            ignore_markers: false,
        };
        assert!(matches!(
            f.classify(&bare),
            Disposition::Evict {
                warning: Some(_),
                ..
            }
        ));
        assert_eq!(
            f.classify(&ds),
            Disposition::Skip {
                reason: SkipReason::DaemonSet
            }
        );
        assert!(matches!(
            f.classify(&empty_dir),
            Disposition::Evict {
                warning: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn missing_daemonset_needs_force() {
        let mut f = Fixture::new();
        f.ds.insert(
            ("ns".into(), "ds".into()),
            Err("daemonsets.apps \"ds\" not found".into()),
        );
        f.flags.ignore_daemonsets = true;
        let ds = pod(&json!({"metadata": {"ownerReferences": ds_owned()}}));
        assert!(matches!(
            f.classify(&ds),
            Disposition::Refuse {
                refusal: Refusal::DaemonSetMissing(_)
            }
        ));
        f.flags.force = true;
        assert!(matches!(f.classify(&ds), Disposition::Evict { .. }));
    }

    #[test]
    fn markers_and_rules_come_before_filters() {
        let mut f = Fixture::new();
        let skip = pod(&json!({"metadata": {"labels": {CAPI_DRAIN_LABEL: "skip"}}}));
        assert_eq!(
            f.classify(&skip),
            Disposition::Skip {
                reason: SkipReason::DrainLabel
            }
        );
        let wait = pod(&json!({"metadata": {"labels": {CAPI_DRAIN_LABEL: "wait-completed"}}}));
        assert_eq!(
            f.classify(&wait),
            Disposition::WaitCompleted {
                wave: 0,
                reason: WaitReason::DrainLabel
            }
        );
        let dnd = pod(
            &json!({"metadata": {"annotations": {KARPENTER_DO_NOT_DISRUPT: "true"}, "ownerReferences": rs_owned()}}),
        );
        assert_eq!(
            f.classify(&dnd),
            Disposition::WaitCompleted {
                wave: 0,
                reason: WaitReason::DoNotDisrupt
            }
        );
        let mirror = pod(&json!({"metadata": {"annotations": {MIRROR_ANNOTATION: "x"}}}));
        assert_eq!(
            f.classify(&mirror),
            Disposition::Skip {
                reason: SkipReason::MirrorPod
            }
        );
        // --ignore-markers: kubectl's filters decide, as for any pod.
        f.flags.ignore_markers = true;
        assert!(matches!(
            f.classify(&dnd),
            Disposition::Evict { wave: 0, .. }
        ));
        assert_eq!(
            f.classify(&skip),
            Disposition::Refuse {
                refusal: Refusal::Unmanaged
            },
            "a bare pod is refused without --force, marker or not"
        );
        f.flags.ignore_markers = false;

        f.plan.rules.push(crate::policy::plan::Rule {
            name: "logging".into(),
            action: RuleAction::Skip,
            pod_selector: None,
            namespace_selector: Some(Selector::parse("team=logging").unwrap()),
        });
        f.ns.insert(
            "ns".into(),
            BTreeMap::from([("team".to_string(), "logging".to_string())]),
        );
        let bare = pod(&json!({}));
        assert_eq!(
            f.classify(&bare),
            Disposition::Skip {
                reason: SkipReason::Rule("logging".into())
            }
        );
    }

    #[test]
    fn a_surge_rule_evicts_with_a_surge_and_kubectl_filters_still_apply() {
        let mut f = Fixture::new();
        f.plan = crate::policy::plan::file::parse(
            "p.yaml",
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  rules:\n  - name: solo\n    action: surge\n    podSelector: {matchLabels: {app: solo}}\n",
        )
        .unwrap();
        let solo =
            pod(&json!({"metadata": {"labels": {"app": "solo"}, "ownerReferences": rs_owned()}}));
        assert_eq!(
            f.classify(&solo),
            Disposition::Evict {
                wave: 0,
                warning: None,
                surge: true
            }
        );
        let other = pod(&json!({"metadata": {"ownerReferences": rs_owned()}}));
        assert!(matches!(
            f.classify(&other),
            Disposition::Evict { surge: false, .. }
        ));
        // Taken by the rule, a bare pod is still refused as kubectl refuses it.
        let bare = pod(&json!({"metadata": {"labels": {"app": "solo"}}}));
        assert!(matches!(f.classify(&bare), Disposition::Refuse { .. }));
    }

    #[test]
    fn daemonset_waves_drain_daemonset_pods() {
        let mut f = Fixture::new();
        f.plan = crate::policy::plan::file::parse(
            "p.yaml",
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - name: agents\n    podType: DaemonSet\n    podPriority: 1000000000\n",
        )
        .unwrap();
        let ds = pod(&json!({"metadata": {"ownerReferences": ds_owned()}}));
        let Disposition::Evict { wave, .. } = f.classify(&ds) else {
            panic!("evicted")
        };
        assert_eq!(f.plan.waves[wave].name, "agents");
    }
}
