//! Guard rails: selections a drain refuses unless told otherwise, checked
//! before anything changes. Pure.

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
/// does not grow with its size: the control-plane nodes (by label), one
/// page of nodes not cordoned, and every node only for `--max-unavailable`.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    pub control_planes: Vec<Node>,
    /// Nodes with `spec.unschedulable=false`, the first page of them.
    pub schedulable_sample: Vec<Node>,
    /// Is `schedulable_sample` every such node (no further page)?
    pub sample_complete: bool,
    /// Every node, when `--max-unavailable` is given.
    pub all: Option<Vec<Node>>,
}

impl ClusterView {
    /// The view of a cluster whose nodes are all known (tests, small clusters).
    pub fn of(all: &[Node]) -> Self {
        ClusterView {
            control_planes: all
                .iter()
                .filter(|n| is_control_plane(n))
                .cloned()
                .collect(),
            schedulable_sample: all
                .iter()
                .filter(|n| !crate::policy::maintenance::unschedulable(n))
                .cloned()
                .collect(),
            sample_complete: true,
            all: Some(all.to_vec()),
        }
    }
}

pub const CONTROL_PLANE_SELECTOR: &str = "node-role.kubernetes.io/control-plane";

#[derive(Debug, Clone, Default)]
pub struct Guards {
    pub max_unavailable: Option<MaxUnavailable>,
    pub allow_no_schedulable_nodes: bool,
    pub allow_quorum_loss: bool,
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
fn unavailable(n: &Node) -> bool {
    let ready = n
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .is_none_or(|c| c.status == "True");
    crate::policy::maintenance::unschedulable(n) || !ready
}

/// Refuses the selection with a message that says why and which flag overrides.
pub fn check(g: &Guards, view: &ClusterView, selected: &[Node]) -> Result<(), String> {
    let chosen = |n: &Node| selected.iter().any(|s| name(s) == name(n));
    let out_after = |n: &Node| chosen(n) || unavailable(n);

    // Schedulable for ordinary pods: available, and no NoSchedule/NoExecute taint.
    let hard_tainted = |n: &Node| {
        n.spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|ts| {
                ts.iter()
                    .any(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
            })
    };
    let schedulable_left = view
        .schedulable_sample
        .iter()
        .any(|n| !out_after(n) && !hard_tainted(n));
    // With more nodes than the sample shows, some are taken to be usable.
    if !schedulable_left && view.sample_complete && !g.allow_no_schedulable_nodes {
        return Err(format!(
            "refusing to drain: no schedulable node would be left ({} selected); evicted pods would have nowhere to go. Override with --allow-no-schedulable-nodes",
            selected.len()
        ));
    }

    let cp = &view.control_planes;
    if !cp.is_empty() {
        let out = cp.iter().filter(|n| out_after(n)).count();
        let tolerated = (cp.len() - 1) / 2;
        if out > tolerated && cp.iter().any(chosen) && !g.allow_quorum_loss {
            let names: Vec<&str> = cp.iter().filter(|n| out_after(n)).map(name).collect();
            return Err(format!(
                "refusing to drain: {out} of {} control-plane nodes would be unavailable ({}); etcd keeps quorum with at most {tolerated} out. Override with --allow-quorum-loss",
                cp.len(),
                names.join(", ")
            ));
        }
    }

    if let (Some(max), Some(all)) = (g.max_unavailable, &view.all) {
        let allowed = max.of(all.len());
        let out = all.iter().filter(|n| out_after(n)).count();
        if out > allowed {
            return Err(format!(
                "refusing to drain: {out} of {} nodes would be unavailable (already unavailable and selected); --max-unavailable allows {allowed}",
                all.len()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, cp: bool, cordoned: bool) -> Node {
        let mut labels = json!({});
        if cp {
            labels["node-role.kubernetes.io/control-plane"] = json!("");
        }
        serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "spec": {"unschedulable": cordoned}})).unwrap()
    }

    #[test]
    fn no_schedulable_node_left_is_refused() {
        let all = [node("a", false, false), node("b", false, true)];
        let err = check(&Guards::default(), &ClusterView::of(&all), &all[..1]).unwrap_err();
        assert!(
            err.contains("no schedulable node would be left")
                && err.contains("--allow-no-schedulable-nodes")
        );
        let g = Guards {
            allow_no_schedulable_nodes: true,
            ..Guards::default()
        };
        assert!(check(&g, &ClusterView::of(&all), &all[..1]).is_ok());
    }

    #[test]
    fn etcd_quorum_counts_nodes_already_cordoned() {
        let all = [
            node("cp1", true, true),
            node("cp2", true, false),
            node("cp3", true, false),
            node("w", false, false),
        ];
        // One of three may be out; cp1 already is.
        assert!(check(&Guards::default(), &ClusterView::of(&all), &all[3..]).is_ok());
        let err = check(&Guards::default(), &ClusterView::of(&all), &all[1..2]).unwrap_err();
        assert!(
            err.contains("2 of 3 control-plane nodes") && err.contains("--allow-quorum-loss"),
            "{err}"
        );
        let g = Guards {
            allow_quorum_loss: true,
            ..Guards::default()
        };
        assert!(check(&g, &ClusterView::of(&all), &all[1..2]).is_ok());
        // Five control planes tolerate two.
        let five: Vec<Node> = (0..5)
            .map(|i| node(&format!("cp{i}"), true, false))
            .chain([node("w", false, false)])
            .collect();
        assert!(check(&Guards::default(), &ClusterView::of(&five), &five[..2]).is_ok());
        assert!(check(&Guards::default(), &ClusterView::of(&five), &five[..3]).is_err());
    }

    #[test]
    fn max_unavailable_as_count_or_percent() {
        assert_eq!(MaxUnavailable::parse("25%").unwrap().of(10), 2);
        assert_eq!(MaxUnavailable::parse("3").unwrap().of(10), 3);
        assert!(MaxUnavailable::parse("120%").is_err() && MaxUnavailable::parse("x").is_err());
        let all: Vec<Node> = (0..4)
            .map(|i| node(&format!("w{i}"), false, i == 0))
            .collect();
        let g = Guards {
            max_unavailable: Some(MaxUnavailable::Count(2)),
            ..Guards::default()
        };
        assert!(check(&g, &ClusterView::of(&all), &all[1..2]).is_ok());
        let err = check(&g, &ClusterView::of(&all), &all[1..3]).unwrap_err();
        assert!(
            err.contains("3 of 4 nodes would be unavailable") && err.contains("allows 2"),
            "{err}"
        );
    }
}
