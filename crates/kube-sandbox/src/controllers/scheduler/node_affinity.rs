//! NodeAffinity: the pod's `nodeSelector` and its required node affinity
//! (terms ORed, each term's expressions ANDed; `matchFields` on
//! `metadata.name`) must match the node (kubernetes
//! pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go, matching
//! as in k8s.io/component-helpers/scheduling/corev1/nodeaffinity).

use crate::objects::path::At;
use std::collections::BTreeMap;

use kube_conventions::selector::{Selector, labels_of};
use serde_json::Value;

pub(super) const REASON: &str = "node(s) didn't match Pod's node affinity/selector";

/// What the pod asks of a node, read once for a scheduling cycle over
/// hundreds of nodes: its nodeSelector, its required and its preferred
/// node affinity.
pub(super) struct Wanted<'a> {
    selector: Option<&'a serde_json::Map<String, Value>>,
    required: Option<&'a Value>,
    preferred: Option<&'a Vec<Value>>,
}

impl<'a> Wanted<'a> {
    pub(super) fn of(pod: &'a Value) -> Self {
        let affinity = pod.at("/spec/affinity/nodeAffinity");
        Wanted {
            selector: pod.at("/spec/nodeSelector").and_then(Value::as_object),
            required: affinity
                .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"))
                .filter(|v| !v.is_null()),
            preferred: affinity
                .and_then(|a| a.get("preferredDuringSchedulingIgnoredDuringExecution"))
                .and_then(Value::as_array),
        }
    }

    /// Does the node satisfy the nodeSelector and required node affinity?
    pub(super) fn matches(&self, node: &Value) -> bool {
        if let Some(sel) = self.selector {
            let all = sel
                .iter()
                .all(|(k, v)| super::label(node, k).is_some_and(|l| Some(l) == v.as_str()));
            if !all {
                return false;
            }
        }
        let Some(required) = self.required else {
            return true;
        };
        let labels = labels_of(node);
        let fields = BTreeMap::from([(
            "metadata.name".to_string(),
            node.at("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        )]);
        required
            .get("nodeSelectorTerms")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|term| term_matches(term, &labels, &fields))
    }

    pub(super) fn filter(&self, node: &Value) -> Result<(), String> {
        if self.matches(node) {
            Ok(())
        } else {
            Err(REASON.into())
        }
    }

    /// The weights of the preferred terms the node matches (the score's half).
    pub(super) fn preferred_weight(&self, node: &Value) -> i64 {
        let Some(preferred) = self.preferred else {
            return 0;
        };
        let labels = labels_of(node);
        let fields = BTreeMap::new();
        preferred
            .iter()
            .filter(|p| term_matches(&p["preference"], &labels, &fields))
            .map(|p| p["weight"].as_i64().unwrap_or(0))
            .sum()
    }
}

/// Does the node satisfy the pod's nodeSelector and required node affinity?
pub(crate) fn matches(pod: &Value, node: &Value) -> bool {
    Wanted::of(pod).matches(node)
}

/// One term: an empty term (no expressions, no fields) matches nothing.
fn term_matches(
    term: &Value,
    labels: &BTreeMap<String, String>,
    fields: &BTreeMap<String, String>,
) -> bool {
    let part = |name: &str| {
        term.get(name)
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
    };
    let (exprs, by_field) = (part("matchExpressions"), part("matchFields"));
    if exprs.is_none() && by_field.is_none() {
        return false;
    }
    let ok = |reqs: Option<&Vec<Value>>, values: &BTreeMap<String, String>| {
        reqs.is_none_or(|r| {
            Selector::from_node_selector_requirements(r).is_ok_and(|s| s.matches(values))
        })
    };
    ok(exprs, labels) && ok(by_field, fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, labels: &Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}})
    }

    #[test]
    fn selector_and_required_terms_must_both_match() {
        let zone_a = node("a1", &json!({"zone": "a", "gen": "5"}));
        let zone_b = node("b1", &json!({"zone": "b", "gen": "3"}));
        let pod = json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}, {"key": "gen", "operator": "Gt", "values": ["4"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c1"]}]},
        ]}}}}});
        let filter = |pod: &Value, node: &Value| Wanted::of(pod).filter(node);
        assert_eq!(filter(&pod, &zone_a), Ok(()));
        assert_eq!(filter(&pod, &zone_b), Err(REASON.into()));
        assert_eq!(filter(&pod, &node("c1", &json!({}))), Ok(()), "by name");
        let selected = json!({"spec": {"nodeSelector": {"zone": "b"}}});
        assert_eq!(filter(&selected, &zone_a), Err(REASON.into()));
        assert_eq!(filter(&selected, &zone_b), Ok(()));
        let empty_term = json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}}}});
        assert_eq!(filter(&empty_term, &zone_a), Err(REASON.into()));
    }
}
