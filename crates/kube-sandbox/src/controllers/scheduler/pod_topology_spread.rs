//! PodTopologySpread, for constraints with `whenUnsatisfiable:
//! DoNotSchedule`: placing the pod in the node's domain must not make that
//! domain hold more than `maxSkew` matching pods above the emptiest domain
//! (kubernetes pkg/scheduler/framework/plugins/podtopologyspread/
//! filtering.go). Domains come from the nodes that match the pod's node
//! affinity (`nodeAffinityPolicy: Honor`, the default) and carry every
//! constraint's key; matching pods are the pod's namespace's, not
//! terminating, selected by `labelSelector` plus `matchLabelKeys`; with
//! fewer domains than `minDomains` the minimum is 0.

use crate::objects::path::At;
use std::collections::HashMap;

use kube_conventions::selector::{Op, Requirement, Selector};
use serde_json::Value;

use super::{label, node_affinity, taint_toleration};
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::Store;

pub(super) const REASON: &str = "node(s) didn't match pod topology spread constraints";

struct Constraint {
    key: String,
    max_skew: i64,
    /// Matching pods in each domain (every eligible domain, even empty).
    counts: HashMap<String, i64>,
    /// The pod matches its own selector: placing it adds one.
    self_match: i64,
    min: i64,
}

#[derive(Default)]
pub(super) struct Spread {
    constraints: Vec<Constraint>,
}

fn selector(c: &Value, pod: &Value) -> Selector {
    let mut sel =
        Selector::from_label_selector(c.get("labelSelector")).unwrap_or(Selector::Nothing);
    if let Selector::All(reqs) = &mut sel {
        for key in c["matchLabelKeys"].as_array().into_iter().flatten() {
            let key = key.as_str().unwrap_or_default();
            if let Some(v) = label(pod, key) {
                reqs.push(Requirement {
                    key: key.to_string(),
                    op: Op::Equals(v.to_string()),
                });
            }
        }
    }
    sel
}

/// Counts each constraint's domains (the plugin's PreFilter).
pub(super) fn prefilter(store: &Store, pod: &Value) -> Spread {
    let hard: Vec<&Value> = pod
        .at("/spec/topologySpreadConstraints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c["whenUnsatisfiable"] == "DoNotSchedule")
        .collect();
    if hard.is_empty() {
        return Spread::default();
    }
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let keys: Vec<&str> = hard
        .iter()
        .filter_map(|c| c["topologyKey"].as_str())
        .collect();
    let mut constraints: Vec<(Constraint, Selector)> = hard
        .iter()
        .map(|c| {
            let sel = selector(c, pod);
            let self_match = i64::from(sel.matches_object(pod));
            (
                Constraint {
                    key: c["topologyKey"].as_str().unwrap_or_default().to_string(),
                    max_skew: c["maxSkew"].as_i64().unwrap_or(1),
                    counts: HashMap::new(),
                    self_match,
                    min: c["minDomains"].as_i64().unwrap_or(1),
                },
                sel,
            )
        })
        .collect();
    // The pod's node selection, read once for every node weighed.
    let wanted = node_affinity::Wanted::of(pod);
    for (_, node) in store.iter(Resource::Nodes, None, None) {
        let node = &*node;
        let honours = |c: &Value, policy: &str, default: &str| {
            c[policy].as_str().unwrap_or(default) == "Honor"
        };
        let eligible = keys.iter().all(|k| label(node, k).is_some())
            && hard.iter().all(|c| {
                (!honours(c, "nodeAffinityPolicy", "Honor") || wanted.matches(node))
                    && (!honours(c, "nodeTaintsPolicy", "Ignore")
                        || taint_toleration::filter(pod, node).is_ok())
            });
        if !eligible {
            continue;
        }
        let name = node["metadata"]["name"].as_str().unwrap_or_default();
        let keys = store.pods_on_node(name);
        let on_node: Vec<&pods::Facts> = keys
            .iter()
            .filter_map(|k| store.pod_facts_of(k))
            .filter(|p| *p.namespace == *namespace && !p.terminating && !p.terminal)
            .collect();
        for (c, sel) in &mut constraints {
            let value = label(node, &c.key).unwrap_or_default().to_string();
            let n = on_node.iter().filter(|p| p.matches(sel)).count() as i64;
            *c.counts.entry(value).or_default() += n;
        }
    }
    Spread {
        constraints: constraints
            .into_iter()
            .map(|(mut c, _)| {
                let min_domains = c.min;
                c.min = if (c.counts.len() as i64) < min_domains {
                    0
                } else {
                    c.counts.values().copied().min().unwrap_or(0)
                };
                c
            })
            .collect(),
    }
}

pub(super) fn filter(spread: &Spread, node: &Value) -> Result<(), String> {
    for c in &spread.constraints {
        let Some(value) = label(node, &c.key) else {
            return Err(format!("{REASON} (missing required label)"));
        };
        let skew = c.counts.get(value).copied().unwrap_or(0) + c.self_match - c.min;
        if skew > c.max_skew {
            return Err(REASON.into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spread(counts: &[(&str, i64)], max_skew: i64) -> Spread {
        let counts: HashMap<String, i64> = counts.iter().map(|(k, v)| ((*k).into(), *v)).collect();
        let min = counts.values().copied().min().unwrap_or(0);
        Spread {
            constraints: vec![Constraint {
                key: "zone".into(),
                max_skew,
                counts,
                self_match: 1,
                min,
            }],
        }
    }

    #[test]
    fn a_domain_may_lead_the_emptiest_by_max_skew() {
        let s = spread(&[("a", 2), ("b", 1)], 1);
        let zone = |z: &str| json!({"metadata": {"labels": {"zone": z}}});
        assert_eq!(filter(&s, &zone("b")), Ok(()));
        assert_eq!(filter(&s, &zone("a")), Err(REASON.into()));
        assert_eq!(
            filter(&s, &json!({"metadata": {}})),
            Err(format!("{REASON} (missing required label)"))
        );
        assert_eq!(
            filter(&spread(&[("a", 2), ("b", 1)], 2), &zone("a")),
            Ok(())
        );
    }
}
