//! PodDisruptionBudgets as the eviction subresource and the disruption
//! controller both read them: the `DisruptionAllowed` condition
//! (which budgets select a pod: crate::store's index).

use serde_json::{Value, json};

use crate::clock::now_rfc3339;

/// The `DisruptionAllowed` condition, whose transition time changes only
/// when its status does.
pub(crate) fn set_allowed_condition(status: &mut Value, allowed: bool, generation: i64) {
    let (st, reason) = if allowed {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    let conditions = status
        .as_object_mut()
        .expect("status object")
        .entry("conditions")
        .or_insert_with(|| json!([]));
    let list = conditions.as_array_mut().expect("conditions array");
    let existing = list.iter_mut().find(|c| c["type"] == "DisruptionAllowed");
    match existing {
        Some(c) if c["status"] == st => {
            c["reason"] = json!(reason);
            c["observedGeneration"] = json!(generation);
        }
        Some(c) => {
            *c = condition(st, reason, generation);
        }
        None => list.push(condition(st, reason, generation)),
    }
}

fn condition(status: &str, reason: &str, generation: i64) -> Value {
    json!({
        "type": "DisruptionAllowed",
        "status": status,
        "reason": reason,
        "message": "",
        "observedGeneration": generation,
        "lastTransitionTime": now_rfc3339(),
    })
}
