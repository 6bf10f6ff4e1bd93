//! TaintToleration: a node's NoSchedule and NoExecute taints must each be
//! tolerated (kubernetes pkg/scheduler/framework/plugins/tainttoleration/
//! taint_toleration.go; matching as in core/v1 toleration.go). Also the
//! score's half: untolerated PreferNoSchedule taints count against a node.

use crate::objects::path::At;
use serde_json::Value;

use crate::objects::taints::tolerates;

pub(crate) fn tolerated(pod: &Value, taint: &Value) -> bool {
    pod.at("/spec/tolerations")
        .and_then(Value::as_array)
        .is_some_and(|ts| ts.iter().any(|t| tolerates(t, taint)))
}

fn taints(node: &Value) -> impl Iterator<Item = &Value> {
    node.at("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

pub(super) fn filter(pod: &Value, node: &Value) -> Result<(), String> {
    let hard = |t: &&Value| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute"));
    match taints(node).filter(hard).find(|t| !tolerated(pod, t)) {
        None => Ok(()),
        Some(t) => Err(format!(
            "node(s) had untolerated taint {{{}: {}}}",
            t["key"].as_str().unwrap_or_default(),
            t["value"].as_str().unwrap_or_default()
        )),
    }
}

/// Untolerated PreferNoSchedule taints: fewer is better.
pub(super) fn preferred_against(pod: &Value, node: &Value) -> usize {
    taints(node)
        .filter(|t| t["effect"] == "PreferNoSchedule" && !tolerated(pod, t))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tolerations_match_taints() {
        let taint = json!({"key": "dedicated", "value": "db", "effect": "NoSchedule"});
        assert!(tolerates(
            &json!({"key": "dedicated", "value": "db"}),
            &taint
        ));
        assert!(tolerates(
            &json!({"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}),
            &taint
        ));
        assert!(tolerates(&json!({"operator": "Exists"}), &taint));
        assert!(!tolerates(
            &json!({"key": "dedicated", "value": "web"}),
            &taint
        ));
        assert!(!tolerates(
            &json!({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}),
            &taint
        ));
    }

    #[test]
    fn an_untolerated_taint_is_named_as_the_scheduler_names_it() {
        let node = json!({"spec": {"taints": [
            {"key": "soft", "effect": "PreferNoSchedule"},
            {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
        ]}});
        assert_eq!(
            filter(&json!({"spec": {}}), &node),
            Err("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }".into())
        );
        let tolerant = json!({"spec": {"tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]}});
        assert_eq!(filter(&tolerant, &node), Ok(()));
        assert_eq!(preferred_against(&tolerant, &node), 1);
    }
}
