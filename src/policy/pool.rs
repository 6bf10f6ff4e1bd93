//! Decisions about a pool of nodes maintained together, without I/O: the
//! order nodes are taken in (`--by-zone`), how many may be out at once
//! (`--max-parallel`, `--max-unavailable`), and when undrainable nodes stop
//! the whole run (`--max-blocked-nodes`).

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
pub fn groups(nodes: &[Node], by_zone: bool) -> Vec<Vec<usize>> {
    if !by_zone {
        return vec![(0..nodes.len()).collect()];
    }
    let mut zones: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
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
    fn room_is_the_tighter_of_parallel_and_unavailable() {
        assert_eq!(room(3, 1, None, 10, 5), 2);
        // 30% of 10 is 3; 2 are out already (one in progress): room for 1.
        let m = MaxUnavailable::parse("30%").unwrap();
        assert_eq!(room(3, 1, Some(m), 10, 2), 1);
        assert_eq!(room(3, 0, Some(m), 10, 4), 0);
    }

    #[test]
    fn blocked_nodes_stop_the_run_past_the_limit() {
        assert!(!stops(5, None));
        assert!(!stops(0, Some(0)) && stops(1, Some(0)));
        assert!(!stops(2, Some(2)) && stops(3, Some(2)));
    }
}
