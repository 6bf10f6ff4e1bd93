//! Who plans a node's maintenance, so that `MaintenancePlanned` (KEP-5683),
//! which several runs may set on one node (two rolls over overlapping
//! pools, a roll and an announced drain), stays True while any of them
//! still plans it. Each run claims the node with an annotation of its own,
//! `kubectl-maintain.io/planned-by-ID: EXPIRY` (Unix seconds), added when it
//! plans or takes the node and removed when it returns it or ends, in one
//! merge patch each; the node the patch returns says whether another run
//! still plans it, and the condition goes False only when no one is left.
//! A key per run means two runs never overwrite each other's claim. A run
//! killed before it could remove its claim stops counting at its expiry
//! (24 h after it was written), so a stale claim does not hold the
//! condition forever.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The annotations' common prefix; the run's id follows.
pub(crate) const PREFIX: &str = "kubectl-maintain.io/planned-by-";
/// How long a claim counts after it was written.
pub(crate) const TTL_SECONDS: i64 = 24 * 3600;

/// This process's id among the planners: its pid and start time, in hex.
pub(crate) fn own_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}{:x}", std::process::id(), nanos & 0xffff_ffff)
}

/// The metadata patch that adds (`plans`) or removes this run's claim.
pub(crate) fn patch(own: &str, plans: bool, now: i64) -> Value {
    let value = plans.then(|| (now + TTL_SECONDS).to_string());
    json!({"metadata": {"annotations": {format!("{PREFIX}{own}"): value}}})
}

/// Does a run other than `own` still plan the node, by its annotations?
pub(crate) fn others(annotations: &BTreeMap<String, String>, own: &str, now: i64) -> bool {
    annotations.iter().any(|(k, v)| {
        k.strip_prefix(PREFIX)
            .is_some_and(|id| id != own && v.parse::<i64>().is_ok_and(|expiry| expiry > now))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_condition_stays_while_another_run_plans_the_node() {
        assert_eq!(
            patch("a", true, 100),
            json!({"metadata": {"annotations": {"kubectl-maintain.io/planned-by-a": "86500"}}})
        );
        assert_eq!(
            patch("a", false, 100)["metadata"]["annotations"]["kubectl-maintain.io/planned-by-a"],
            Value::Null,
            "removed"
        );
        let mut on_node = BTreeMap::new();
        on_node.insert(format!("{PREFIX}a"), "86500".to_string());
        assert!(!others(&on_node, "a", 200), "only this run");
        on_node.insert(format!("{PREFIX}b"), "86600".to_string());
        assert!(others(&on_node, "a", 200), "b still plans it");
        assert!(
            !others(&on_node, "a", 90_000),
            "b's claim expired (b was killed)"
        );
        on_node.insert("other".into(), "1".into());
        on_node.insert(format!("{PREFIX}c"), "junk".into());
        assert!(!others(&on_node, "a", 90_000));
    }
}
