//! The waves a plan gets when it does not say otherwise: KEP-4212's default
//! entries per pod type, at the priorities that separate user workloads from
//! system-cluster-critical and system-node-critical pods.

use super::model::{Plan, PodType, Wave};

/// Highest priority a user-defined PriorityClass may have.
pub const USER_MAX: i32 = 1_000_000_000;
/// `system-cluster-critical`.
pub const CLUSTER_CRITICAL: i32 = 2_000_000_000;
/// `system-node-critical`.
pub const NODE_CRITICAL: i32 = 2_000_001_000;

fn default_name(pod_type: PodType, max: i32) -> String {
    let tier = match max {
        USER_MAX => "user",
        CLUSTER_CRITICAL => "cluster-critical",
        NODE_CRITICAL => "node-critical",
        _ => "rest",
    };
    match pod_type {
        PodType::Default => tier.to_string(),
        other => format!("{}-{tier}", other.to_string().to_lowercase()),
    }
}

pub fn default_waves(pod_type: PodType) -> Vec<Wave> {
    [USER_MAX, CLUSTER_CRITICAL, NODE_CRITICAL, i32::MAX]
        .into_iter()
        .map(|max| Wave {
            name: default_name(pod_type, max),
            pod_type,
            max_priority: max,
            pod_selector: None,
            namespace_selector: None,
            timeout: None,
        })
        .collect()
}

/// Adds the default entries to a plan's waves where no entry covers them,
/// keeping the KEP order. DaemonSet defaults only when the plan drains
/// DaemonSet pods at all (otherwise they are treated as kubectl does).
pub fn complete(plan: &mut Plan) {
    let mut types = vec![PodType::Default];
    if plan.drains_daemonsets() {
        types.push(PodType::DaemonSet);
    }
    for t in types {
        for d in default_waves(t) {
            let covered = plan
                .waves
                .iter()
                .any(|w| w.pod_type == t && w.max_priority == d.max_priority && !w.has_selector());
            if !covered {
                plan.waves.push(d);
            }
        }
    }
    // Stable sort: user entries keep their relative order (already validated).
    plan.waves.sort_by_key(Wave::order_key);
}

/// The plan used without `--plan`: user pods, then cluster-critical, then
/// node-critical and above.
pub fn plan() -> Plan {
    let mut p = Plan {
        waves: Vec::new(),
        rules: Vec::new(),
        taints: Vec::new(),
        deadline: None,
        surge: false,
        hooks: super::model::Hooks::default(),
        source: "flags".into(),
    };
    complete(&mut p);
    // Nothing is above i32::MAX, and node-critical is the highest class a
    // pod can have: merge the last two so the default shows three waves.
    p.waves.retain(|w| w.max_priority != NODE_CRITICAL);
    if let Some(last) = p.waves.last_mut() {
        last.name = "node-critical".into();
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_plan_has_three_ordered_waves() {
        let p = plan();
        let names: Vec<&str> = p.waves.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["user", "cluster-critical", "node-critical"]);
        assert!(
            p.waves
                .windows(2)
                .all(|w| w[0].order_key() < w[1].order_key())
        );
        assert!(!p.drains_daemonsets());
    }
}
