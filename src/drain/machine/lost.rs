//! A node whose kubelet is down (crate::policy::node_health): nothing stops
//! its pods, so the deletions the drain asked for never finish. With
//! `--lost-pod-timeout`, a pod whose deletion was asked longer ago than that
//! counts as gone, as Cluster API counts a pod terminating on an
//! unreachable node (its `SkipWaitForDeleteTimeoutSeconds`), and is
//! reported lost with what it still holds: a StatefulSet makes no
//! replacement until the pod object is gone, and its volumes stay attached
//! to the node. A node taken out of service is not counted so: its pods
//! really go (the pod garbage collector force-deletes them).

use k8s_openapi::api::core::v1::Pod;

use super::NodeMachine;
use super::member::State;
use crate::policy::classify::{claim_names, controller_of};
use crate::policy::node_health::NodeDown;
use crate::vocabulary::events::Event;
use crate::vocabulary::outcome::{PodResult, Stuck};
use crate::vocabulary::pod_key::PodKey;
use crate::vocabulary::warning::Warning;

impl NodeMachine {
    /// Are pods on this node counted as gone once their deletion is old?
    pub(super) fn counts_lost(&self) -> bool {
        self.settings.lost_pod_timeout.is_some()
            && self.down.as_ref().is_some_and(|d| !d.out_of_service())
    }

    /// The node was read again while its pods were awaited.
    pub(super) fn on_health(&mut self, down: Option<NodeDown>) {
        if let (Some(now_down), None) = (&down, &self.down) {
            self.emit(Event::Warning(Warning::NodeDown {
                node: self.node.clone(),
                down: Box::new(now_down.clone()),
                lost_after: self.settings.lost_pod_timeout,
            }));
        }
        let shutdown_begins = down.as_ref().is_some_and(NodeDown::shutting_down)
            && !self.down.as_ref().is_some_and(NodeDown::shutting_down);
        self.down = down;
        if shutdown_begins {
            // Its kubelet fails every pod, and a failed pod goes whatever
            // its budget says: those held by one are asked again now.
            // (`step` sends them on.)
            self.retry_where(|s| {
                matches!(
                    s,
                    State::Blocked {
                        budget: Some(_),
                        ..
                    }
                )
            });
        }
        self.expire_lost();
    }

    /// Pods whose deletion was asked longer ago than `--lost-pod-timeout`,
    /// on a node that is down, count as gone.
    pub(super) fn expire_lost(&mut self) {
        let Some(limit) = self
            .settings
            .lost_pod_timeout
            .filter(|_| self.counts_lost())
        else {
            return;
        };
        let now_ms = self.last.wall.as_millisecond();
        let mut lost = Vec::new();
        for m in self.members.values_mut().filter(|m| !m.done()) {
            let Some(asked_ms) = asked_at_ms(&m.pod) else {
                continue;
            };
            let ago = u64::try_from(now_ms - asked_ms).unwrap_or(0);
            if ago > limit.as_millis() as u64 {
                let seconds = (ago / 1000) as i64;
                m.state = State::Done(PodResult::Lost {
                    seconds,
                    stuck: stuck(&m.pod),
                });
                lost.push((PodKey::of(&m.pod), seconds));
            }
        }
        for (pod, seconds) in lost {
            self.emit(Event::PodLost {
                node: self.node.clone(),
                pod,
                seconds,
                timeout: limit,
            });
        }
    }
}

/// When the pod's deletion was asked, in milliseconds: its
/// deletionTimestamp less its grace period.
fn asked_at_ms(pod: &Pod) -> Option<i64> {
    let at = pod.metadata.deletion_timestamp.as_ref()?.0.as_millisecond();
    let grace = pod.metadata.deletion_grace_period_seconds.unwrap_or(0);
    Some(at - grace * 1000)
}

/// What a lost pod still holds, as far as the pod itself says: its
/// StatefulSet, and its claims (the driver keeps those whose volume is
/// still attached to the node, crate::drain::dead_node).
pub(crate) fn stuck(pod: &Pod) -> Vec<Stuck> {
    let set = controller_of(&pod.metadata)
        .filter(|(kind, _)| *kind == "StatefulSet")
        .map(|(_, name)| Stuck::StatefulSet {
            name: name.to_string(),
        });
    set.into_iter()
        .chain(claim_names(pod).map(|c| Stuck::Volume {
            claim: c.to_string(),
            volume: None,
            attachment: None,
        }))
        .collect()
}
