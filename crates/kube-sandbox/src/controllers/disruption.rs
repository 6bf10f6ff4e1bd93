//! The disruption controller: keeps every PodDisruptionBudget's status true,
//! with the arithmetic of kube-controller-manager's
//! pkg/controller/disruption/disruption.go (getExpectedPodCount,
//! countHealthyPods, updatePdbStatus).

use crate::objects::path::At;
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::work::{Changed, Work};
use crate::clock::seconds_since;
use crate::objects::{budgets, pods};
use crate::resources::Resource;
use crate::store::{Key, Store};
use kube_conventions::selector::Selector;

/// A pod in `status.disruptedPods` stops counting as healthy for this long
/// (the controller's DeletionTimeout), unless it is deleted sooner.
const DISRUPTED_POD_TIMEOUT_SECS: i64 = 120;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntOrPercent {
    Int(i32),
    Percent(i32),
}

impl IntOrPercent {
    pub(crate) fn from_json(v: &Value) -> Result<Option<Self>, String> {
        match v {
            Value::Null => Ok(None),
            Value::Number(n) => n
                .as_i64()
                .map(|n| Some(IntOrPercent::Int(n as i32)))
                .ok_or_else(|| format!("{n} is not an integer")),
            Value::String(s) => s
                .strip_suffix('%')
                .and_then(|p| p.parse().ok())
                .map(|p| Some(IntOrPercent::Percent(p)))
                .ok_or_else(|| format!("invalid value for IntOrString: {s:?} is not a percentage")),
            other => Err(format!("{other} is neither an integer nor a percentage")),
        }
    }

    /// apimachinery's `GetScaledValueFromIntOrPercent`.
    pub(crate) fn scaled(self, total: i32, round_up: bool) -> i32 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => {
                let product = i64::from(p) * i64::from(total);
                if round_up {
                    ((product + 99) / 100) as i32
                } else {
                    (product / 100) as i32
                }
            }
        }
    }
}

/// What a budget asks for, before counting healthy pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Targets {
    pub(crate) expected_pods: i32,
    pub(crate) desired_healthy: i32,
}

/// `getExpectedPodCount`: `controller_scale` is the summed `spec.replicas`
/// of the selected pods' controllers, `None` when some pod has no
/// controller with a scale (then only an integer minAvailable works).
pub(crate) fn targets(
    min_available: Option<IntOrPercent>,
    max_unavailable: Option<IntOrPercent>,
    selected_pods: i32,
    controller_scale: Option<i32>,
) -> Result<Targets, &'static str> {
    if let Some(max) = max_unavailable {
        let expected = controller_scale.ok_or("found no controllers for the selected pods")?;
        let max = max.scaled(expected, true);
        return Ok(Targets {
            expected_pods: expected,
            desired_healthy: (expected - max).max(0),
        });
    }
    match min_available {
        Some(IntOrPercent::Int(n)) => Ok(Targets {
            expected_pods: selected_pods,
            desired_healthy: n,
        }),
        Some(p @ IntOrPercent::Percent(_)) => {
            let expected = controller_scale.ok_or("found no controllers for the selected pods")?;
            Ok(Targets {
                expected_pods: expected,
                desired_healthy: p.scaled(expected, true),
            })
        }
        None => Ok(Targets {
            expected_pods: selected_pods,
            desired_healthy: 0,
        }),
    }
}

/// `updatePdbStatus`: no disruption is allowed while nothing is expected.
pub(crate) fn disruptions_allowed(current_healthy: i32, t: Targets) -> i32 {
    if t.expected_pods <= 0 {
        0
    } else {
        (current_healthy - t.desired_healthy).max(0)
    }
}

/// Why a budget's expected count is not the sum of its controllers' scales.
enum NoScale {
    /// A pod without a controller, or a controller that is not there: the
    /// disruption controller's failSafe (nothing allowed).
    Missing,
    /// A controller the sandbox does not run (a custom resource with a
    /// scale subresource): the real controller reads
    /// its scale, which a dump records as the budget's `expectedPods`.
    NotSimulated,
}

/// Summed `spec.replicas` of the controllers of these pods, each counted
/// once: Deployment (through its ReplicaSet), ReplicaSet, StatefulSet,
/// ReplicationController.
fn controller_scale(store: &Store, pods: &[(&Key, &pods::Facts)]) -> Result<i32, NoScale> {
    let mut seen: BTreeMap<String, i32> = BTreeMap::new();
    // Pods of one controller resolve to one scale: each controller is
    // looked up once, in the pods' order.
    let mut resolved: Vec<(&str, &str)> = Vec::new();
    for (key, pod) in pods {
        let (kind, name) = pod.controller.as_ref().ok_or(NoScale::Missing)?;
        if resolved.contains(&(&**kind, &**name)) {
            continue;
        }
        resolved.push((kind, name));
        let namespace = key.0.as_str();
        let name = name.to_string();
        let (res, scale_owner) = match &**kind {
            "ReplicaSet" => {
                let rs = store
                    .scale_of(
                        Resource::ReplicaSets,
                        &(namespace.to_string(), name.clone()),
                    )
                    .ok_or(NoScale::Missing)?;
                match &rs.controller {
                    Some((kind, d)) if &**kind == "Deployment" => {
                        (Resource::Deployments, d.to_string())
                    }
                    _ => (Resource::ReplicaSets, name),
                }
            }
            "StatefulSet" => (Resource::StatefulSets, name),
            "ReplicationController" => (Resource::ReplicationControllers, name),
            "DaemonSet" | "Job" => return Err(NoScale::Missing),
            _ => return Err(NoScale::NotSimulated),
        };
        let id = format!("{res:?}/{scale_owner}");
        if let std::collections::btree_map::Entry::Vacant(slot) = seen.entry(id) {
            let scale = store
                .scale_of(res, &(namespace.to_string(), scale_owner))
                .ok_or(NoScale::Missing)?;
            slot.insert(scale.replicas);
        }
    }
    Ok(seen.values().sum())
}

/// A pod written or gone, before and after: the budgets that select it
/// count again. A budget whose status has not seen its spec yet.
pub(crate) fn triggers(store: &Store, c: &Changed<'_>, work: &mut Work) {
    match c.resource {
        Resource::Pods => {
            for p in [c.old, c.new].into_iter().flatten() {
                work.pdbs.extend(store.budgets_of_pod(p));
            }
        }
        Resource::PodDisruptionBudgets => {
            let stale = c.new.is_some_and(|p| {
                p.at("/status/observedGeneration").and_then(Value::as_i64)
                    != p.at("/metadata/generation").and_then(Value::as_i64)
            });
            if stale {
                work.pdbs.insert(c.key.clone());
            }
        }
        _ => {}
    }
}

/// Recomputes one PDB's status and writes it when it changed.
pub(crate) fn reconcile(store: &mut Store, key: &Key) {
    let Some(pdb) = store.get(Resource::PodDisruptionBudgets, key) else {
        return;
    };
    let Ok(selector) = Selector::from_label_selector(pdb.at("/spec/selector")) else {
        return;
    };
    let pods = store.pods_selected(&key.0, &selector);
    let min = IntOrPercent::from_json(pdb.at("/spec/minAvailable").unwrap_or(&Value::Null))
        .ok()
        .flatten();
    let max = IntOrPercent::from_json(pdb.at("/spec/maxUnavailable").unwrap_or(&Value::Null))
        .ok()
        .flatten();
    let scale = match controller_scale(store, &pods) {
        Ok(n) => Some(n),
        Err(NoScale::Missing) => None,
        // Kept from the dump: the scale only the real controller could read.
        Err(NoScale::NotSimulated) => pdb
            .at("/status/expectedPods")
            .and_then(Value::as_i64)
            .and_then(|n| i32::try_from(n).ok())
            .filter(|n| *n > 0),
    };

    // Expired entries leave disruptedPods; entries for pods that are gone too.
    let mut disrupted: serde_json::Map<String, Value> = pdb
        .at("/status/disruptedPods")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    disrupted.retain(|name, at| {
        let fresh = at
            .as_str()
            .and_then(seconds_since)
            .is_some_and(|s| s < DISRUPTED_POD_TIMEOUT_SECS);
        let live = pods.iter().any(|(k, p)| &k.1 == name && !p.terminating);
        fresh && live
    });
    let healthy = pods
        .iter()
        .filter(|(k, p)| p.ready && !p.terminating && !disrupted.contains_key(&k.1))
        .count() as i32;

    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(1);
    let mut status = pdb.get("status").cloned().unwrap_or_else(|| json!({}));
    let (allowed, t) = match targets(min, max, pods.len() as i32, scale) {
        Ok(t) => (disruptions_allowed(healthy, t), t),
        // failSafe: without a known scale the budget allows nothing.
        Err(_) => (
            0,
            Targets {
                expected_pods: 0,
                desired_healthy: 0,
            },
        ),
    };
    status["observedGeneration"] = json!(generation);
    status["currentHealthy"] = json!(healthy);
    status["desiredHealthy"] = json!(t.desired_healthy);
    status["expectedPods"] = json!(t.expected_pods);
    status["disruptionsAllowed"] = json!(allowed);
    if disrupted.is_empty() {
        if let Some(m) = status.as_object_mut() {
            m.remove("disruptedPods");
        }
    } else {
        status["disruptedPods"] = Value::Object(disrupted);
    }
    budgets::set_allowed_condition(&mut status, allowed > 0, generation);
    if pdb.get("status") != Some(&status) {
        let _ = store.modify(Resource::PodDisruptionBudgets, key, |o| {
            o["status"] = status;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::IntOrPercent::{Int, Percent};
    use super::*;

    fn t(
        min: Option<IntOrPercent>,
        max: Option<IntOrPercent>,
        pods: i32,
        scale: Option<i32>,
    ) -> Targets {
        targets(min, max, pods, scale).unwrap()
    }

    #[test]
    fn integer_min_available_counts_selected_pods() {
        let x = t(Some(Int(2)), None, 3, None);
        assert_eq!(
            x,
            Targets {
                expected_pods: 3,
                desired_healthy: 2
            }
        );
        assert_eq!(disruptions_allowed(3, x), 1);
        assert_eq!(disruptions_allowed(2, x), 0);
        assert_eq!(disruptions_allowed(1, x), 0);
    }

    #[test]
    fn one_replica_with_min_available_one_never_allows() {
        let x = t(Some(Int(1)), None, 1, Some(1));
        assert_eq!(disruptions_allowed(1, x), 0);
    }

    #[test]
    fn percentage_min_available_rounds_up_over_controller_scale() {
        // 50% of 3 replicas: ceil(1.5) = 2 must stay healthy.
        let x = t(Some(Percent(50)), None, 3, Some(3));
        assert_eq!(
            x,
            Targets {
                expected_pods: 3,
                desired_healthy: 2
            }
        );
        assert_eq!(disruptions_allowed(3, x), 1);
        // 34% of 10 -> ceil(3.4) = 4.
        assert_eq!(t(Some(Percent(34)), None, 10, Some(10)).desired_healthy, 4);
        assert!(targets(Some(Percent(50)), None, 3, None).is_err());
    }

    #[test]
    fn max_unavailable_integer_and_percentage() {
        let x = t(None, Some(Int(1)), 3, Some(3));
        assert_eq!(
            x,
            Targets {
                expected_pods: 3,
                desired_healthy: 2
            }
        );
        assert_eq!(disruptions_allowed(3, x), 1);
        // maxUnavailable 30% of 5 rounds up to 2: desired 3.
        assert_eq!(t(None, Some(Percent(30)), 5, Some(5)).desired_healthy, 3);
        // Never below zero.
        assert_eq!(t(None, Some(Int(10)), 3, Some(3)).desired_healthy, 0);
        // Zero replicas expected: nothing may go.
        assert_eq!(disruptions_allowed(0, t(None, Some(Int(1)), 0, Some(0))), 0);
    }

    #[test]
    fn max_unavailable_takes_precedence_over_scale_of_pods() {
        // 4 pods selected but the Deployment wants 5: expected follows the scale.
        let x = t(None, Some(Int(1)), 4, Some(5));
        assert_eq!(
            x,
            Targets {
                expected_pods: 5,
                desired_healthy: 4
            }
        );
        assert_eq!(disruptions_allowed(4, x), 0);
    }

    #[test]
    fn int_or_percent_parsing() {
        assert_eq!(IntOrPercent::from_json(&json!(3)).unwrap(), Some(Int(3)));
        assert_eq!(
            IntOrPercent::from_json(&json!("25%")).unwrap(),
            Some(Percent(25))
        );
        assert!(IntOrPercent::from_json(&json!("25")).is_err());
        assert_eq!(Percent(25).scaled(10, false), 2);
        assert_eq!(Percent(25).scaled(10, true), 3);
    }
}
