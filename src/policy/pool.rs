//! Decisions about a pool of nodes maintained together, without I/O: the
//! order nodes are taken in (`--by-zone`, and which node next), how many may be out at once
//! (`--max-parallel`, `--max-unavailable`), and when undrainable nodes stop
//! the whole run (`--max-blocked-nodes`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;

use super::guard::MaxUnavailable;

/// The well-known zone label (kube-scheduler spreads over it too).
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

fn zone(n: &Node) -> &str {
    n.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(ZONE_LABEL))
        .map_or("", String::as_str)
}

/// The nodes' indexes in the groups they are taken in, each group finished
/// before the next starts: one group in the given order, or with
/// `by_zone` one per zone, zones in the order their first node was named
/// (nodes without a zone label last, as one group).
pub fn groups<'a>(nodes: impl IntoIterator<Item = &'a Node>, by_zone: bool) -> Vec<Vec<usize>> {
    let nodes = nodes.into_iter();
    if !by_zone {
        return vec![(0..nodes.count()).collect()];
    }
    let mut zones: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, n) in nodes.enumerate() {
        let z = zone(n);
        match zones.iter_mut().find(|(name, _)| *name == z) {
            Some((_, members)) => members.push(i),
            None => zones.push((z, vec![i])),
        }
    }
    // Unzoned nodes go last.
    zones.sort_by_key(|(z, _)| z.is_empty());
    zones.into_iter().map(|(_, members)| members).collect()
}

/// How many of the waiting nodes, in their given order, `next` chooses
/// among when `max_parallel` run at once: the order stays close to the one
/// given, and a choice stays cheap with thousands of nodes, yet a slot
/// finds a node sharing no budget with those running even where each
/// workload's replicas sit on neighbouring nodes (a node group filled in
/// order): 16 candidates per slot, at least 64, at most 1,024.
pub fn lookahead(max_parallel: usize) -> usize {
    max_parallel.saturating_mul(16).clamp(64, 1024)
}

/// Which waiting node to start next, as its position in `waiting` (each
/// node's pods to evict, counted per budget): the one whose pods would
/// wait least on budgets the nodes being drained already use (`busy`:
/// their pods per budget), given what each budget `allowed` at most at
/// once. Nodes drained at once then hold each other up least. Ties, and
/// nodes without known budgets, go in the given order; the caller passes
/// the first `lookahead` of them.
pub fn next<K: Ord>(
    waiting: &[&BTreeMap<K, usize>],
    busy: &BTreeMap<K, usize>,
    allowed: impl Fn(&K) -> usize,
) -> usize {
    let would_wait = |pods: &BTreeMap<K, usize>| -> usize {
        pods.iter()
            .map(|(budget, n)| {
                let others = busy.get(budget).copied().unwrap_or(0);
                if others == 0 {
                    return 0;
                }
                // Pods of the budget beyond what it lets go at once: the
                // more are ahead of this node's, the longer they wait.
                (others + n).saturating_sub(allowed(budget).max(1))
            })
            .sum()
    };
    waiting
        .iter()
        .enumerate()
        .min_by_key(|(pos, pods)| (would_wait(pods), *pos))
        .map_or(0, |(pos, _)| pos)
}

/// How many more nodes may be taken out of service now: `max_parallel` at
/// most, and with `max_unavailable` no more than it allows of `total`
/// nodes, counting the `unavailable` ones (cordoned or NotReady, those in
/// progress included).
pub fn room(
    max_parallel: usize,
    in_progress: usize,
    max_unavailable: Option<MaxUnavailable>,
    total: usize,
    unavailable: usize,
) -> usize {
    let by_parallel = max_parallel.saturating_sub(in_progress);
    match max_unavailable {
        None => by_parallel,
        Some(m) => by_parallel.min(m.of(total).saturating_sub(unavailable)),
    }
}

/// `--max-blocked-nodes`: with `blocked` nodes undrainable so far, does
/// the run stop starting nodes? No limit goes on, as kubectl drain does.
pub fn stops(blocked: usize, max_blocked: Option<usize>) -> bool {
    max_blocked.is_some_and(|m| blocked > m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, zone: Option<&str>) -> Node {
        let labels = zone.map_or(json!({}), |z| json!({ZONE_LABEL: z}));
        serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap()
    }

    #[test]
    fn zones_in_the_order_first_named_unzoned_last() {
        let nodes = [
            node("a1", Some("a")),
            node("x", None),
            node("b1", Some("b")),
            node("a2", Some("a")),
            node("b2", Some("b")),
        ];
        assert_eq!(groups(&nodes, true), vec![vec![0, 3], vec![2, 4], vec![1]]);
        assert_eq!(groups(&nodes, false), vec![vec![0, 1, 2, 3, 4]]);
    }

    #[test]
    fn the_lookahead_grows_with_the_slots_to_fill() {
        assert_eq!(lookahead(1), 64);
        // 50 slots over nodes whose workloads span 10 neighbours each: 800
        // candidates hold 80 groups of neighbours, enough for 50 apart.
        assert_eq!(lookahead(50), 800);
        assert_eq!(lookahead(500), 1024);
    }

    #[test]
    fn room_is_the_tighter_of_parallel_and_unavailable() {
        assert_eq!(room(3, 1, None, 10, 5), 2);
        // 30% of 10 is 3; 2 are out already (one in progress): room for 1.
        let m = MaxUnavailable::parse("30%").unwrap();
        assert_eq!(room(3, 1, Some(m), 10, 2), 1);
        assert_eq!(room(3, 0, Some(m), 10, 4), 0);
    }

    #[test]
    fn the_next_node_is_the_one_waiting_least_on_busy_budgets() {
        let per = |b: &[(&'static str, usize)]| b.iter().copied().collect::<BTreeMap<_, _>>();
        let (a, b, c) = (
            per(&[("web", 2)]),
            per(&[("web", 1), ("db", 1)]),
            per(&[("db", 1)]),
        );
        let busy: BTreeMap<&str, usize> = [("web", 1)].into_iter().collect();
        let one = |_: &&str| 1;
        // "web" allows one at a time and a running node holds one of its
        // pods: a would wait with both, b with one, c with none.
        assert_eq!(next(&[&a, &b, &c], &busy, one), 2);
        assert_eq!(next(&[&a, &b], &busy, one), 1);
        // A budget with room for all counts for nothing: the given order.
        assert_eq!(next(&[&a, &b, &c], &busy, |_| 5), 0);
        assert_eq!(next(&[&a, &c], &BTreeMap::new(), one), 0);
    }

    #[test]
    fn blocked_nodes_stop_the_run_past_the_limit() {
        assert!(!stops(5, None));
        assert!(!stops(0, Some(0)) && stops(1, Some(0)));
        assert!(!stops(2, Some(2)) && stops(3, Some(2)));
    }
}
