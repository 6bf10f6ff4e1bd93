//! A node's kubelet stopped, as a kernel panic, a lost NIC or a power-off
//! looks from the API: the node annotation
//! `sandbox.kubectl-maintain.io/kubelet: stopped` (or `Sandbox::stop_kubelet`)
//! stops it until the annotation goes. Meanwhile it posts nothing: its
//! heartbeat lease goes stale (crate::kubelet::heartbeat), no pod on the node
//! starts or stops, and after kube-controller-manager's
//! `--node-monitor-grace-period` the node lifecycle controller marks the
//! node Unknown (crate::controllers::node_lifecycle::mark_unknown). When the
//! annotation goes, the kubelet posts Ready again and finishes what waited.

use serde_json::Value;

use crate::clock::now_rfc3339;
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::store::Store;

/// What a write of the node did to its kubelet.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    Stopped,
    Started,
}

pub(crate) fn turn(old: Option<&Value>, new: Option<&Value>) -> Option<Turn> {
    let stopped = |n: Option<&Value>| n.is_some_and(nodes::kubelet_stopped);
    match (stopped(old), stopped(new)) {
        (false, true) => Some(Turn::Stopped),
        (true, false) if new.is_some() => Some(Turn::Started),
        _ => None,
    }
}

/// The kubelet is back: it posts Ready (the node's other triggers then
/// start and finish its pods, crate::kubelet::triggers).
pub(crate) fn post_ready(store: &mut Store, node: &str) {
    let key = (String::new(), node.to_string());
    let Some(n) = store.get(Resource::Nodes, &key) else {
        return;
    };
    if nodes::is_ready(&n) || nodes::kubelet_stopped(&n) {
        return;
    }
    let now = now_rfc3339();
    let _ = store.modify(Resource::Nodes, &key, |n| posting_ready(n, &now));
}

/// The Ready condition a running kubelet posts.
pub(crate) fn posting_ready(node: &mut Value, now: &str) {
    pods::set_condition(
        node,
        "Ready",
        "True",
        "KubeletReady",
        "kubelet is posting ready status",
        now,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_annotation_stops_and_starts_the_kubelet() {
        let stopped = json!({"metadata": {"annotations": {crate::config::KUBELET: "stopped"}}});
        let running = json!({"metadata": {}});
        assert_eq!(turn(Some(&running), Some(&stopped)), Some(Turn::Stopped));
        assert_eq!(turn(Some(&stopped), Some(&running)), Some(Turn::Started));
        assert_eq!(turn(Some(&stopped), Some(&stopped)), None);
        assert_eq!(turn(Some(&stopped), None), None);
    }
}
