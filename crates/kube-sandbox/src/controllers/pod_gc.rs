//! The pod garbage collector (kube-controller-manager's
//! pkg/controller/podgc/gc_controller.go), the parts a dead node meets. Its
//! loop runs every 20 s (`gcCheckPeriod`, counted here from the sandbox's
//! start) and force-deletes, after marking them Failed:
//! - terminating pods on a node that is not Ready and carries the
//!   `node.kubernetes.io/out-of-service` taint (`gcTerminating`);
//! - pods bound to a node that no longer exists, once it has been missing
//!   for the 40 s quarantine (`gcOrphaned`, with a `DisruptionTarget`
//!   condition, reason `DeletionByPodGC`).
//!
//! Work is asked only when something may be collected: a node tainted out
//! of service while not Ready, a pod starting to terminate on one, a node
//! deleted.

use std::time::Duration;

use serde_json::{Value, json};

use super::work::{Changed, Work};
use crate::apiserver::deletion::{self, DeleteOptions};
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::store::Store;

/// The collector's period (`gcCheckPeriod`).
pub(crate) const PERIOD: Duration = Duration::from_secs(20);
/// How long a node must be missing before its pods are orphans.
pub(crate) const QUARANTINE: Duration = Duration::from_secs(40);

/// How long from `elapsed` (since the sandbox started) to the collector's
/// next pass `after` from now.
pub(crate) fn next_pass(elapsed: Duration, after: Duration) -> Duration {
    let at = elapsed + after;
    let period = PERIOD.as_millis();
    let past = at.as_millis() % period;
    let wait = if past == 0 { 0 } else { period - past };
    after + Duration::from_millis(wait as u64)
}

pub(crate) fn triggers(c: &Changed<'_>, work: &mut Work) {
    match c.resource {
        Resource::Nodes => match c.new {
            Some(n) if nodes::out_of_service(n) => {
                work.collect.insert(c.key.1.clone());
            }
            None => {
                work.orphans.insert(c.key.1.clone());
            }
            _ => {}
        },
        Resource::Pods => {
            if let Some(new) = c.new
                && pods::is_terminating(new)
                && c.old.is_none_or(|o| !pods::is_terminating(o))
                && let Some(node) = pods::node_name(new)
            {
                work.collect.insert(node.to_string());
            }
        }
        _ => {}
    }
}

/// Is there anything for a pass to collect on this node?
pub(crate) fn owed(store: &Store, node: &str) -> bool {
    store
        .get(Resource::Nodes, &(String::new(), node.to_string()))
        .is_some_and(|n| nodes::out_of_service(&n))
}

/// `gcTerminating` on one node.
pub(crate) fn collect_terminating(store: &mut Store, node: &str) {
    if !owed(store, node) {
        return;
    }
    for key in store.pods_on_node(node) {
        if store
            .get(Resource::Pods, &key)
            .is_some_and(|p| pods::is_terminating(&p))
        {
            fail_and_delete(store, &key, None);
        }
    }
}

/// `gcOrphaned` for one node: its pods go if it is still missing.
pub(crate) fn collect_orphans(store: &mut Store, node: &str) {
    if store
        .get(Resource::Nodes, &(String::new(), node.to_string()))
        .is_some()
    {
        return;
    }
    let condition = json!({
        "type": "DisruptionTarget", "status": "True",
        "reason": "DeletionByPodGC", "message": "PodGC: node no longer exists",
    });
    for key in store.pods_on_node(node) {
        fail_and_delete(store, &key, Some(&condition));
    }
}

/// `markFailedAndDeletePodWithCondition`: Failed first (no kubelet will
/// say so), then deleted with a zero grace period.
fn fail_and_delete(store: &mut Store, key: &crate::store::Key, condition: Option<&Value>) {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return;
    };
    if !pods::is_terminal(&pod) {
        let now = crate::clock::now_rfc3339();
        let _ = store.modify(Resource::Pods, key, |p| {
            p["status"]["phase"] = json!("Failed");
            if let Some(c) = condition {
                let (kind, status) = (c["type"].as_str(), c["status"].as_str());
                let (reason, message) = (c["reason"].as_str(), c["message"].as_str());
                pods::set_condition(
                    p,
                    kind.unwrap_or_default(),
                    status.unwrap_or_default(),
                    reason.unwrap_or_default(),
                    message.unwrap_or_default(),
                    &now,
                );
            }
        });
    }
    let opts = DeleteOptions {
        grace_period_seconds: Some(0),
        uid: pod["metadata"]["uid"].as_str().map(str::to_string),
        ..DeleteOptions::default()
    };
    let _ = deletion::delete(store, Resource::Pods, key, &opts);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_fall_on_the_twenty_second_ticks() {
        let s = Duration::from_secs;
        assert_eq!(next_pass(s(0), s(0)), s(0));
        assert_eq!(next_pass(s(5), s(0)), s(15));
        assert_eq!(next_pass(s(5), QUARANTINE), s(55));
        assert_eq!(next_pass(s(20), s(0)), s(0));
    }
}
