//! The pool's room, without I/O: may one more node be taken out now?
//! `--max-parallel` slots, `--max-unavailable` of every node of the
//! cluster (cordoned or NotReady, this run's included), and for a run
//! that takes nodes down (a roll's action) etcd's quorum and the last
//! schedulable node. The same rules for `drain` and `roll`.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;

use crate::policy::guard::{self, MaxUnavailable};
use crate::policy::pool;

/// How many nodes a run may have out, and what it keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Room {
    pub(crate) max_parallel: usize,
    pub(crate) max_unavailable: Option<MaxUnavailable>,
    pub(crate) max_blocked: Option<usize>,
    /// Hold a node whose going would lose etcd's quorum (a roll, whose
    /// action takes nodes down, without `--allow-quorum-loss`).
    pub(crate) keep_quorum: bool,
    /// Hold a node whose going would leave no schedulable node (a roll,
    /// without `--allow-no-schedulable-nodes`).
    pub(crate) keep_a_schedulable_node: bool,
    /// The run's nodes stay out once done (a drain leaves them cordoned):
    /// they go on counting against `--max-unavailable`.
    pub(crate) done_stays_out: bool,
}

/// Why the next node cannot start yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HoldBack {
    /// Taking it out would lose etcd's quorum.
    Quorum(guard::Refusal),
    /// Taking it out would leave no schedulable node.
    NoSchedulableNode,
    /// Every slot `--max-parallel` gives is taken.
    NoFreeSlot {
        in_progress: usize,
        max_parallel: usize,
    },
    /// `--max-unavailable` counts enough nodes out already, `ours` of them
    /// this run's.
    MaxUnavailable {
        unavailable: usize,
        ours: usize,
        nodes: usize,
        allows: usize,
    },
}

impl HoldBack {
    /// With no node of this run in progress, can the hold still end by
    /// itself (nodes out for other reasons coming back)? When not, the
    /// node never can be taken out and the run stops.
    pub(crate) fn ends_by_itself(&self) -> bool {
        matches!(self, HoldBack::MaxUnavailable { unavailable, ours, .. } if unavailable > ours)
    }
}

impl std::fmt::Display for HoldBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HoldBack::Quorum(why) => write!(f, "{why} (--allow-quorum-loss overrides)"),
            HoldBack::NoSchedulableNode => f.write_str(
                "taking it out would leave no schedulable node (--allow-no-schedulable-nodes overrides)",
            ),
            HoldBack::NoFreeSlot {
                in_progress,
                max_parallel,
            } => {
                let nodes = if *in_progress == 1 { "node" } else { "nodes" };
                write!(
                    f,
                    "for a free slot ({in_progress} {nodes} in progress, --max-parallel {max_parallel})"
                )
            }
            HoldBack::MaxUnavailable {
                unavailable,
                ours,
                nodes,
                allows,
            } => {
                let are = if *unavailable == 1 { "is" } else { "are" };
                write!(
                    f,
                    "{unavailable} of {nodes} nodes {are} unavailable"
                )?;
                if *ours > 0 {
                    write!(f, " ({ours} of them this run's)")?;
                }
                write!(f, "; --max-unavailable allows {allows}")?;
                if unavailable > ours {
                    f.write_str(": waiting for nodes to be Ready and uncordoned")?;
                }
                Ok(())
            }
        }
    }
}

/// Why `candidate` cannot start yet, with `out` the run's nodes out now
/// (`in_progress` of them in progress) and `all` every node of the
/// cluster (empty when the room does not read them).
pub(crate) fn hold_back(
    room: &Room,
    all: &[Arc<Node>],
    out: &BTreeSet<String>,
    in_progress: usize,
    candidate: &str,
) -> Option<HoldBack> {
    if in_progress >= room.max_parallel.max(1) {
        return Some(HoldBack::NoFreeSlot {
            in_progress,
            max_parallel: room.max_parallel,
        });
    }
    // Every node borrowed: a roll of a 5,000-node cluster copied them all
    // at each choice (12 MB at its peak).
    let chosen = |name: &str| name == candidate || out.contains(name);
    let nodes = || all.iter().map(|n| &**n);
    if room.keep_quorum {
        let cps = nodes().filter(|n| guard::is_control_plane(n));
        if let Err(e) = guard::quorum(cps, chosen) {
            return Some(HoldBack::Quorum(e));
        }
    }
    if room.keep_a_schedulable_node && guard::none_usable_outside(nodes(), chosen) {
        return Some(HoldBack::NoSchedulableNode);
    }
    let max = room.max_unavailable?;
    let name = |n: &Node| n.metadata.name.as_deref().unwrap_or_default().to_string();
    let ours = all.iter().filter(|n| out.contains(&name(n))).count();
    let unavailable = all
        .iter()
        .filter(|n| out.contains(&name(n)) || guard::unavailable(n))
        .count();
    let room_left = pool::room(
        room.max_parallel,
        in_progress,
        Some(max),
        all.len(),
        unavailable,
    );
    (room_left == 0).then(|| HoldBack::MaxUnavailable {
        unavailable,
        ours,
        nodes: all.len(),
        allows: max.of(all.len()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, control_plane: bool, cordoned: bool) -> Arc<Node> {
        let labels = if control_plane {
            serde_json::json!({"node-role.kubernetes.io/control-plane": ""})
        } else {
            serde_json::json!({})
        };
        let taints = if control_plane {
            serde_json::json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}])
        } else {
            serde_json::json!([])
        };
        Arc::new(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "labels": labels},
                "spec": {"unschedulable": cordoned, "taints": taints},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }))
            .unwrap(),
        )
    }

    fn names(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(ToString::to_string).collect()
    }

    const ROLL: Room = Room {
        max_parallel: 2,
        max_unavailable: None,
        max_blocked: None,
        keep_quorum: true,
        keep_a_schedulable_node: true,
        done_stays_out: false,
    };

    #[test]
    fn a_roll_is_held_by_quorum_the_last_schedulable_node_and_the_slots() {
        let mut all = vec![
            node("cp1", true, false),
            node("cp2", true, false),
            node("cp3", true, false),
            node("w1", false, false),
            node("w2", false, false),
            node("w3", false, false),
        ];
        assert_eq!(hold_back(&ROLL, &all, &names(&[]), 0, "w1"), None);
        // A second control plane out of three loses etcd's quorum.
        let quorum = hold_back(&ROLL, &all, &names(&["cp1"]), 1, "cp2");
        assert!(matches!(quorum, Some(HoldBack::Quorum(_))), "{quorum:?}");
        let allowed = Room {
            keep_quorum: false,
            ..ROLL
        };
        assert_eq!(hold_back(&allowed, &all, &names(&["cp1"]), 1, "cp2"), None);
        // w1 out, w2 and w3 cordoned: only tainted control planes are left.
        all[4] = node("w2", false, true);
        all[5] = node("w3", false, true);
        assert_eq!(
            hold_back(&ROLL, &all, &names(&[]), 0, "w1"),
            Some(HoldBack::NoSchedulableNode)
        );
        let allowed = Room {
            keep_a_schedulable_node: false,
            ..ROLL
        };
        assert_eq!(hold_back(&allowed, &all, &names(&[]), 0, "w1"), None);
        // w3 schedulable again, every slot taken.
        all[5] = node("w3", false, false);
        assert_eq!(
            hold_back(&ROLL, &all, &names(&["cp1", "w2"]), 2, "w1"),
            Some(HoldBack::NoFreeSlot {
                in_progress: 2,
                max_parallel: 2
            })
        );
    }

    #[test]
    fn max_unavailable_counts_the_runs_nodes_and_others_alike() {
        // A drain's room: neither quorum nor the last schedulable node.
        let drain = Room {
            max_parallel: 5,
            max_unavailable: Some(MaxUnavailable::Count(2)),
            max_blocked: None,
            keep_quorum: false,
            keep_a_schedulable_node: false,
            done_stays_out: true,
        };
        let mut all: Vec<Arc<Node>> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| node(n, false, false))
            .collect();
        assert_eq!(hold_back(&drain, &all, &names(&["a"]), 1, "b"), None);
        // a drained and cordoned, b in progress: nothing else is out, so
        // the hold cannot end by itself.
        all[0] = node("a", false, true);
        let held = hold_back(&drain, &all, &names(&["a", "b"]), 1, "c").unwrap();
        assert_eq!(
            held,
            HoldBack::MaxUnavailable {
                unavailable: 2,
                ours: 2,
                nodes: 4,
                allows: 2
            }
        );
        assert!(!held.ends_by_itself());
        assert_eq!(
            held.to_string(),
            "2 of 4 nodes are unavailable (2 of them this run's); --max-unavailable allows 2"
        );
        // d cordoned by someone else: the hold may end when d comes back.
        all[3] = node("d", false, true);
        let held = hold_back(&drain, &all, &names(&["a"]), 0, "c").unwrap();
        assert!(held.ends_by_itself(), "{held}");
        assert!(
            held.to_string()
                .ends_with("waiting for nodes to be Ready and uncordoned")
        );
        // 0 allowed (10% of 4) and nothing out: never, and said so.
        let none = Room {
            max_unavailable: Some(MaxUnavailable::parse("10%").unwrap()),
            ..drain
        };
        all[3] = node("d", false, false);
        all[0] = node("a", false, false);
        let held = hold_back(&none, &all, &names(&[]), 0, "a").unwrap();
        assert!(!held.ends_by_itself(), "{held}");
    }
}
