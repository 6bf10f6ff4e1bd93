//! NodeResourcesFit: the pod's requests (with overhead and init containers,
//! see `pods::requests`) must fit in what the node's allocatable leaves
//! after the pods already bound to it, and one more pod must fit its pod
//! count (kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go).
//! Every shortage is a reason of its own: "Insufficient cpu", "Too many
//! pods"; the scheduler counts each.

use crate::objects::pods::{Requests, ResourceName};
use crate::store::Requested;

/// Every reason the pod does not fit (empty when it fits) on a node with
/// this allocatable (`nodes::Facts`).
pub(super) fn shortages(
    wanted: &Requests,
    allocatable: &Requests,
    used: &Requested,
) -> Vec<String> {
    let mut out = Vec::new();
    let pods = used.pods;
    if let Some(&max) = allocatable.get(&ResourceName::Pods)
        && (pods + 1) * 1000 > max
    {
        out.push("Too many pods".to_string());
    }
    for (name, want) in wanted.iter().filter(|(_, v)| **v > 0) {
        let Some(&cap) = allocatable.get(name) else {
            // cpu and memory unknown: the node reports nothing (a
            // hand-written scenario); an extended resource it does not
            // have is missing.
            if matches!(
                name,
                ResourceName::Cpu | ResourceName::Memory | ResourceName::EphemeralStorage
            ) {
                continue;
            }
            out.push(format!("Insufficient {name}"));
            continue;
        };
        let taken = used.resources.get(name).copied().unwrap_or(0);
        if taken + want > cap {
            out.push(format!("Insufficient {name}"));
        }
    }
    out
}

/// How much of the node's cpu and memory would be requested, 0 to 1 each,
/// averaged (the LeastAllocated score's input: lower is better).
pub(super) fn allocated_share(wanted: &Requests, allocatable: &Requests, used: &Requested) -> f64 {
    let share = |name: &ResourceName| {
        let cap = *allocatable.get(name).filter(|c| **c > 0)?;
        let taken = used.resources.get(name).copied().unwrap_or(0);
        Some((taken + wanted.get(name).copied().unwrap_or(0)) as f64 / cap as f64)
    };
    let (sum, n) = [ResourceName::Cpu, ResourceName::Memory]
        .iter()
        .filter_map(share)
        .fold((0.0, 0u32), |(sum, n), s| (sum + s, n + 1));
    if n == 0 { 0.0 } else { sum / f64::from(n) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_shortage_is_a_reason_as_the_scheduler_words_it() {
        let node = crate::objects::nodes::Facts::of(
            &json!({"status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "3"}}}),
        )
        .allocatable;
        let used = Requested {
            pods: 2,
            resources: Requests::from([("cpu".into(), 1500), ("memory".into(), 1_073_741_824_000)]),
        };
        let want = |cpu: i64, gpu: i64| {
            Requests::from([("cpu".into(), cpu), ("nvidia.com/gpu".into(), gpu)])
        };
        assert!(shortages(&want(500, 0), &node, &used).is_empty());
        assert_eq!(
            shortages(&want(600, 1), &node, &used),
            ["Insufficient cpu", "Insufficient nvidia.com/gpu"]
        );
        let full = Requested { pods: 3, ..used };
        assert_eq!(shortages(&want(0, 0), &node, &full), ["Too many pods"]);
    }
}
