//! The scheduler: a pending pod goes to the least-loaded node that is
//! schedulable, Ready, matches its nodeSelector and whose NoSchedule and
//! NoExecute taints it tolerates (cordoned nodes carry
//! `node.kubernetes.io/unschedulable:NoSchedule` in effect).

use serde_json::{Value, json};

use crate::clock::now_rfc3339;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

pub(crate) const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// Does one toleration tolerate one taint (core/v1 toleration.go)?
pub(crate) fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or_default();
    if !effect.is_empty() && Some(effect) != taint["effect"].as_str() {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or_default();
    let op = toleration["operator"].as_str().unwrap_or("Equal");
    if key.is_empty() {
        return op == "Exists";
    }
    if Some(key) != taint["key"].as_str() {
        return false;
    }
    match op {
        "Exists" => true,
        _ => {
            toleration["value"].as_str().unwrap_or_default()
                == taint["value"].as_str().unwrap_or_default()
        }
    }
}

fn tolerated(pod: &Value, taint: &Value) -> bool {
    pod.pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .is_some_and(|ts| ts.iter().any(|t| tolerates(t, taint)))
}

/// Why a pod cannot run on a node, or `None` when it can.
pub(crate) fn unfit_reason(pod: &Value, node: &Value) -> Option<&'static str> {
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        let taint = json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"});
        if !tolerated(pod, &taint) {
            return Some("node(s) were unschedulable");
        }
    }
    let not_ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .is_some_and(|c| c["status"] != "True");
    if not_ready {
        return Some("node(s) were not ready");
    }
    let taints = node.pointer("/spec/taints").and_then(Value::as_array);
    for taint in taints.into_iter().flatten() {
        let hard = matches!(taint["effect"].as_str(), Some("NoSchedule" | "NoExecute"));
        if hard && !tolerated(pod, taint) {
            return Some("node(s) had untolerated taint");
        }
    }
    if let Some(sel) = pod.pointer("/spec/nodeSelector").and_then(Value::as_object) {
        let labels = node.pointer("/metadata/labels");
        let all = sel
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
        if !all {
            return Some("node(s) didn't match Pod's node affinity/selector");
        }
    }
    None
}

fn pod_capacity(node: &Value) -> usize {
    node.pointer("/status/allocatable/pods")
        .and_then(|v| {
            v.as_str()
                .and_then(|s| s.parse().ok())
                .or_else(|| v.as_u64())
        })
        .unwrap_or(110) as usize
}

/// Tries to bind one pod. Returns false when it stays pending.
pub(crate) fn schedule(store: &mut Store, key: &Key) -> bool {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return true;
    };
    if pods::node_name(&pod).is_some() || pods::is_terminating(&pod) || pods::is_terminal(&pod) {
        return true;
    }
    let mut best: Option<(usize, String)> = None;
    let mut reasons: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut total = 0;
    for (_, node) in store.iter(Resource::Nodes, None, None) {
        total += 1;
        if let Some(r) = unfit_reason(&pod, node) {
            *reasons.entry(r).or_default() += 1;
            continue;
        }
        let name = node["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let load = store.pod_count_on_node(&name);
        if load >= pod_capacity(node) {
            *reasons.entry("Too many pods").or_default() += 1;
            continue;
        }
        if best.as_ref().is_none_or(|(l, _)| load < *l) {
            best = Some((load, name));
        }
    }
    let now = now_rfc3339();
    if let Some((_, node)) = best {
        let _ = store.modify(Resource::Pods, key, |p| {
            p["spec"]["nodeName"] = json!(node);
            pods::set_condition(p, "PodScheduled", "True", "", "", &now);
        });
        return true;
    }
    let detail: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    let message = format!("0/{total} nodes are available: {}.", detail.join(", "));
    let _ = store.modify(Resource::Pods, key, |p| {
        pods::set_condition(p, "PodScheduled", "False", "Unschedulable", &message, &now);
    });
    false
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn cordoned_nodes_refuse_pods_without_the_toleration() {
        let node = json!({"metadata": {"name": "n"}, "spec": {"unschedulable": true}});
        let pod = json!({"spec": {}});
        assert_eq!(
            unfit_reason(&pod, &node),
            Some("node(s) were unschedulable")
        );
        let ds_pod = json!({"spec": {"tolerations": [{"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"}]}});
        assert_eq!(unfit_reason(&ds_pod, &node), None);
    }
}
