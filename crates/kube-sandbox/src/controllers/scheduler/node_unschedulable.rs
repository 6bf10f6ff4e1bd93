//! NodeUnschedulable: a cordoned node takes only pods that tolerate the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint (kubernetes
//! pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go).

use serde_json::{Value, json};

use super::taint_toleration::tolerated;
use crate::objects::taints::UNSCHEDULABLE as UNSCHEDULABLE_TAINT;

pub(super) const REASON: &str = "node(s) were unschedulable";

/// `cordoned`: the node's `spec.unschedulable`.
pub(super) fn filter(pod: &Value, cordoned: bool) -> Result<(), String> {
    if !cordoned {
        return Ok(());
    }
    let taint = json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"});
    if !tolerated(pod, &taint) {
        return Err(REASON.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cordoned_nodes_refuse_pods_without_the_toleration() {
        assert_eq!(
            filter(&json!({"spec": {}}), true),
            Err("node(s) were unschedulable".into())
        );
        assert_eq!(filter(&json!({"spec": {}}), false), Ok(()));
        let ds_pod = json!({"spec": {"tolerations": [{"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"}]}});
        assert_eq!(filter(&ds_pod, true), Ok(()));
    }
}
