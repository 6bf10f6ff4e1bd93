//! Guard rails, checked before anything changes. Pure.
//!
//! A drain refuses neither the last schedulable worker nor a control-plane
//! node: kubectl drain does not (a drain never evicts etcd, a static pod).
//! Leaving no schedulable node is a warning that names the pods left
//! Pending; the etcd quorum check is for actions that take nodes down, and
//! `--max-unavailable` a hold of the pool runner (crate::pool::room).

use k8s_openapi::api::core::v1::Node;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxUnavailable {
    Count(usize),
    Percent(u32),
}

impl MaxUnavailable {
    pub fn parse(s: &str) -> Result<Self, String> {
        if let Some(p) = s.strip_suffix('%') {
            let p: u32 = p.parse().map_err(|_| format!("{s:?} is not N or P%"))?;
            if p > 100 {
                return Err(format!("{s:?}: a percentage is at most 100%"));
            }
            return Ok(MaxUnavailable::Percent(p));
        }
        s.parse()
            .map(MaxUnavailable::Count)
            .map_err(|_| format!("{s:?} is not N or P%"))
    }

    /// The number of nodes it allows out of `total` (percentages round down,
    /// as MachineHealthCheck's maxUnhealthy does).
    pub fn of(self, total: usize) -> usize {
        match self {
            MaxUnavailable::Count(n) => n,
            MaxUnavailable::Percent(p) => total * p as usize / 100,
        }
    }
}

/// What the guard rails need to know of the cluster, read at a cost that
/// does not grow with its size: one page of nodes not cordoned.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    /// Nodes with `spec.unschedulable=false`, the first page of them.
    pub schedulable_sample: Vec<Node>,
    /// Is `schedulable_sample` every such node (no further page)?
    pub sample_complete: bool,
}

impl ClusterView {
    /// The view of a cluster whose nodes are all known.
    #[cfg(test)]
    pub fn of(all: &[Node]) -> Self {
        ClusterView {
            schedulable_sample: all
                .iter()
                .filter(|n| !crate::policy::maintenance::unschedulable(n))
                .cloned()
                .collect(),
            sample_complete: true,
        }
    }
}

pub const CONTROL_PLANE_SELECTOR: &str = "node-role.kubernetes.io/control-plane";

/// Is the node named `node` among the selected?
fn is_selected(selected: &[Node], node: &str) -> bool {
    selected.iter().any(|s| name(s) == node)
}

fn name(n: &Node) -> &str {
    n.metadata.name.as_deref().unwrap_or_default()
}

pub fn is_control_plane(n: &Node) -> bool {
    n.metadata.labels.as_ref().is_some_and(|l| {
        l.contains_key("node-role.kubernetes.io/control-plane")
            || l.contains_key("node-role.kubernetes.io/master")
    })
}

/// Unavailable: cordoned, or not Ready.
pub fn unavailable(n: &Node) -> bool {
    crate::policy::maintenance::unschedulable(n) || !crate::policy::node_health::is_ready(n)
}

/// Would no node be left for the evicted pods: none schedulable (not
/// cordoned, Ready, without a NoSchedule or NoExecute taint) outside the
/// selection? With more nodes than the view's sample shows, some are taken
/// to be usable.
pub fn leaves_no_schedulable_node(view: &ClusterView, selected: &[Node]) -> bool {
    none_usable_outside(&view.schedulable_sample, |n| is_selected(selected, n))
        && view.sample_complete
}

/// Is none of `nodes` outside the selection (the names `chosen` takes)
/// schedulable: not cordoned, Ready, without a NoSchedule or NoExecute
/// taint? Borrowed, for a roll that weighs every node it watches at each
/// choice.
pub fn none_usable_outside<'a>(
    nodes: impl IntoIterator<Item = &'a Node>,
    chosen: impl Fn(&str) -> bool,
) -> bool {
    let chosen = |n: &Node| chosen(name(n));
    let hard_tainted = |n: &Node| {
        n.spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|ts| {
                ts.iter()
                    .any(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
            })
    };
    !nodes
        .into_iter()
        .any(|n| !chosen(n) && !unavailable(n) && !hard_tainted(n))
}

/// Why a guard rail refuses to take the selected nodes out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    #[error(
        "{out} of {nodes} control-plane nodes would be unavailable ({}); etcd keeps quorum with at most {tolerated} out",
        names.join(", ")
    )]
    Quorum {
        out: usize,
        nodes: usize,
        names: Vec<String>,
        tolerated: usize,
    },
    #[error(
        "refusing to drain: --deadline {} is shorter than the grace period of {}: they would be deleted, budgets bypassed, as soon as an eviction is refused; give a longer --deadline, a shorter --grace-period, or --allow-short-deadline to delete them then",
        crate::duration::human(*deadline),
        cut.iter().map(|(pod, grace)| format!("{pod} ({grace}s)")).collect::<Vec<_>>().join(", ")
    )]
    ShortDeadline {
        deadline: std::time::Duration,
        /// `namespace/name` and grace period (seconds), longest first.
        cut: Vec<(String, i64)>,
    },
}

/// The grace period a pod is deleted with: `--grace-period`, else its own
/// (30 s when unset, the API's default).
pub fn grace_period(pod: &k8s_openapi::api::core::v1::Pod, flag: Option<i64>) -> i64 {
    flag.unwrap_or_else(|| {
        pod.spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
            .unwrap_or(30)
    })
}

/// `--deadline`: refuses one shorter than the grace period of a pod it may
/// delete (`pods`: `namespace/name` and the grace period it would be
/// deleted with), unless `allowed`. Such a pod's time would come at the
/// drain's start, leaving it no eviction that waits for its budget.
pub fn short_deadline(
    deadline: Option<std::time::Duration>,
    allowed: bool,
    pods: impl IntoIterator<Item = (String, i64)>,
) -> Result<(), Refusal> {
    let Some(deadline) = deadline.filter(|_| !allowed) else {
        return Ok(());
    };
    let mut cut: Vec<(String, i64)> = pods
        .into_iter()
        .filter(|(_, grace)| u64::try_from(*grace).is_ok_and(|g| g > deadline.as_secs()))
        .collect();
    if cut.is_empty() {
        return Ok(());
    }
    cut.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Err(Refusal::ShortDeadline { deadline, cut })
}

/// etcd keeps quorum with at most floor((n-1)/2) of n control-plane nodes
/// out, those `chosen` takes by name among them. For actions that take
/// nodes down (a drain does not).
pub fn quorum<'a>(
    control_planes: impl IntoIterator<Item = &'a Node>,
    chosen: impl Fn(&str) -> bool,
) -> Result<(), Refusal> {
    let chosen = |n: &Node| chosen(name(n));
    let out_after = |n: &&Node| chosen(n) || unavailable(n);
    let cp: Vec<&Node> = control_planes.into_iter().collect();
    let out = cp.iter().copied().filter(out_after).count();
    let tolerated = cp.len().saturating_sub(1) / 2;
    if out > tolerated && cp.iter().copied().any(chosen) {
        let names = cp
            .iter()
            .copied()
            .filter(out_after)
            .map(|n| name(n).to_string())
            .collect();
        return Err(Refusal::Quorum {
            out,
            nodes: cp.len(),
            names,
            tolerated,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_deadline_shorter_than_a_grace_period_is_refused_unless_allowed() {
        let pods = || {
            [
                ("a/web-1".to_string(), 30),
                ("a/db-0".to_string(), 120),
                ("a/x".to_string(), 4),
            ]
        };
        let four = Some(std::time::Duration::from_secs(4));
        let Err(refusal) = short_deadline(four, false, pods()) else {
            panic!("refused")
        };
        assert_eq!(
            refusal,
            Refusal::ShortDeadline {
                deadline: std::time::Duration::from_secs(4),
                cut: vec![("a/db-0".into(), 120), ("a/web-1".into(), 30)],
            }
        );
        assert!(refusal.to_string().contains("a/db-0 (120s), a/web-1 (30s)"));
        assert_eq!(short_deadline(four, true, pods()), Ok(()));
        assert_eq!(short_deadline(None, false, pods()), Ok(()));
        let four_min = Some(std::time::Duration::from_secs(240));
        assert_eq!(short_deadline(four_min, false, pods()), Ok(()));
    }

    fn node(name: &str, cp: bool, cordoned: bool) -> Node {
        let mut labels = json!({});
        if cp {
            labels["node-role.kubernetes.io/control-plane"] = json!("");
        }
        serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "spec": {"unschedulable": cordoned}})).unwrap()
    }

    #[test]
    fn no_schedulable_node_left_is_told_not_refused() {
        let all = [node("a", false, false), node("b", false, true)];
        let view = ClusterView::of(&all);
        assert!(leaves_no_schedulable_node(&view, &all[..1]));
        let three = [
            node("a", false, false),
            node("b", false, true),
            node("c", false, false),
        ];
        assert!(!leaves_no_schedulable_node(
            &ClusterView::of(&three),
            &three[..1]
        ));
        // An incomplete sample: the nodes not seen are taken to be usable.
        let mut partial = ClusterView::of(&all);
        partial.sample_complete = false;
        assert!(!leaves_no_schedulable_node(&partial, &all[..1]));
    }

    #[test]
    fn etcd_quorum_counts_nodes_already_cordoned() {
        let all = [
            node("cp1", true, true),
            node("cp2", true, false),
            node("cp3", true, false),
            node("w", false, false),
        ];
        let cps = &all[..3];
        // One of three may be out; cp1 already is.
        assert!(quorum(cps, |n| is_selected(&all[3..], n)).is_ok());
        let err = quorum(cps, |n| is_selected(&all[1..2], n))
            .unwrap_err()
            .to_string();
        assert!(err.contains("2 of 3 control-plane nodes"), "{err}");
        // Five control planes tolerate two.
        let five: Vec<Node> = (0..5)
            .map(|i| node(&format!("cp{i}"), true, false))
            .collect();
        assert!(quorum(&five, |n| is_selected(&five[..2], n)).is_ok());
        assert!(quorum(&five, |n| is_selected(&five[..3], n)).is_err());
    }

    #[test]
    fn max_unavailable_as_count_or_percent() {
        assert_eq!(MaxUnavailable::parse("25%").unwrap().of(10), 2);
        assert_eq!(MaxUnavailable::parse("3").unwrap().of(10), 3);
        assert!(MaxUnavailable::parse("120%").is_err() && MaxUnavailable::parse("x").is_err());
    }
}
