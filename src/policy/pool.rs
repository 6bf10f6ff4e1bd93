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

/// What the pool knows of a budget when it chooses the next node.
#[derive(Debug, Clone, Copy, Default)]
pub struct BudgetNow {
    /// Pods of the nodes being drained whose eviction under it is not sent yet.
    pub busy: usize,
    /// Disruptions it allows at once.
    pub allowed: usize,
    /// Its pods not sent yet anywhere in the pool (the running nodes' and
    /// the waiting nodes'); 0 where the order of chains does not matter.
    pub left: usize,
}

/// Which waiting node to start next, as its position in `waiting` (each
/// node's pods to evict, counted per budget), given what is known of each
/// budget `now`:
/// - the node whose pods would wait least on budgets the running nodes'
///   pods not yet sent still need: nodes drained at once then hold each
///   other up least; a node whose neighbour's evictions are all sent may
///   start, its pods taken as the replacements come;
/// - then the node on the longest chain: a budget whose pods leave
///   `allowed` at a time has `left / allowed` rounds to go, each a
///   replacement's start apart, so the node holding pods of the budget
///   with most rounds left goes first (the critical path first);
/// - then the one sharing the fewest pods with busy budgets: a budget
///   with room for two (a quorum's) would otherwise take two slots for
///   one group of neighbours while another group has none;
/// - then the given order (nodes without known budgets keep it); the
///   caller passes the first `lookahead` of them.
pub fn next<K: Ord>(waiting: &[&BTreeMap<K, usize>], now: impl Fn(&K) -> BudgetNow) -> usize {
    let cost = |pods: &BTreeMap<K, usize>| {
        let (mut wait, mut rounds, mut shared) = (0, 0, 0);
        for (budget, n) in pods {
            let b = now(budget);
            let allowed = b.allowed.max(1);
            rounds = rounds.max(b.left.div_ceil(allowed));
            if b.busy > 0 {
                // Pods of the budget beyond what it lets go at once: the
                // more are ahead of this node's, the longer they wait.
                wait += (b.busy + n).saturating_sub(allowed);
                shared += n;
            }
        }
        (wait, std::cmp::Reverse(rounds), shared)
    };
    waiting
        .iter()
        .enumerate()
        .min_by_key(|(pos, pods)| (cost(pods), *pos))
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
        let now = |busy: usize, allowed: usize| {
            move |k: &&str| BudgetNow {
                busy: if *k == "web" { busy } else { 0 },
                allowed,
                left: 0,
            }
        };
        // "web" allows one at a time and a running node has one of its
        // pods to send: a would wait with both, b with one, c with none.
        assert_eq!(next(&[&a, &b, &c], now(1, 1)), 2);
        assert_eq!(next(&[&a, &b], now(1, 1)), 1);
        // A budget with room for all makes no one wait: the node sharing
        // the fewest of its pods goes first (a quorum's neighbours one at a
        // time), then the given order.
        assert_eq!(next(&[&a, &b, &c], now(1, 5)), 2);
        assert_eq!(next(&[&a, &b], now(1, 5)), 1);
        // Nothing busy (the running nodes' evictions all sent): the order.
        assert_eq!(next(&[&a, &c], now(0, 1)), 0);
    }

    #[test]
    fn the_longest_chain_of_a_budget_goes_first() {
        let per = |b: &[(&'static str, usize)]| b.iter().copied().collect::<BTreeMap<_, _>>();
        let (web, db) = (per(&[("web", 1)]), per(&[("db", 1)]));
        // "db" has 8 pods left one at a time, "web" 8 two at a time.
        let now = |k: &&str| BudgetNow {
            busy: 0,
            allowed: if *k == "web" { 2 } else { 1 },
            left: 8,
        };
        assert_eq!(next(&[&web, &db], now), 1);
        // Waiting comes first: a chain is not served by a node that waits.
        let db_busy = |k: &&str| BudgetNow {
            busy: usize::from(*k == "db"),
            ..now(k)
        };
        assert_eq!(next(&[&web, &db], db_busy), 0);
        // Without the chains' lengths (left 0): the given order.
        assert_eq!(next(&[&web, &db], |_| BudgetNow::default()), 0);
    }

    #[test]
    fn blocked_nodes_stop_the_run_past_the_limit() {
        assert!(!stops(5, None));
        assert!(!stops(0, Some(0)) && stops(1, Some(0)));
        assert!(!stops(2, Some(2)) && stops(3, Some(2)));
    }
}
