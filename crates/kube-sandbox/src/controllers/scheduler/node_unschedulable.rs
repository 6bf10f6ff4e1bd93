//! NodeUnschedulable: a cordoned node takes only pods that tolerate the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint (kubernetes
//! pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go).

use serde_json::{Value, json};

use super::taint_toleration::tolerated;

pub(crate) const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

pub(super) fn filter(pod: &Value, node: &Value) -> Result<(), String> {
    let cordoned = node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true);
    let taint = json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"});
    if cordoned && !tolerated(pod, &taint) {
        return Err("node(s) were unschedulable".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cordoned_nodes_refuse_pods_without_the_toleration() {
        let node = json!({"metadata": {"name": "n"}, "spec": {"unschedulable": true}});
        assert_eq!(
            filter(&json!({"spec": {}}), &node),
            Err("node(s) were unschedulable".into())
        );
        let ds_pod = json!({"spec": {"tolerations": [{"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"}]}});
        assert_eq!(filter(&ds_pod, &node), Ok(()));
    }
}
