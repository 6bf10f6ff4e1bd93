//! A node's pods from their listing to the start of its drain: kept as the
//! JSON of their slim form (crate::drain::slim_pod), beside the few facts
//! the drain decides from before any node starts (each pod's key, its
//! fate, grace period and whether it names a claim). A pod object is over
//! 2 KiB in memory however slim (k8s-openapi's PodSpec alone is most of it)
//! and about 1 KiB as JSON; a pool of 500 nodes held 15,000 of them from
//! its first list to its last node's start. Only the nodes being drained
//! (and a preview, node by node) hold their pods as objects.

use k8s_openapi::api::core::v1::Pod;

use crate::policy::classify::{Disposition, claim_names};
use crate::policy::guard::grace_period;
use crate::vocabulary::pod_key::PodKey;

/// What the drain reads of a pod before its node starts.
#[derive(Debug, Clone)]
pub(crate) struct Fact {
    pub(crate) key: PodKey,
    pub(crate) disposition: Disposition,
    /// The grace period it is deleted with (`--grace-period`, else its own).
    pub(crate) grace: i64,
    /// It names a PersistentVolumeClaim.
    pub(crate) claims: bool,
}

/// A node's classified pods, packed.
pub(crate) struct PackedPods {
    json: Box<[u8]>,
    facts: Vec<Fact>,
}

impl PackedPods {
    /// `grace_flag`: `--grace-period`, which overrides each pod's own.
    pub(crate) fn pack(pods: Vec<(Pod, Disposition)>, grace_flag: Option<i64>) -> Self {
        let facts = pods
            .iter()
            .map(|(p, d)| Fact {
                key: PodKey::of(p),
                disposition: d.clone(),
                grace: grace_period(p, grace_flag),
                claims: claim_names(p).next().is_some(),
            })
            .collect();
        let pods: Vec<Pod> = pods.into_iter().map(|(p, _)| p).collect();
        let json = serde_json::to_vec(&pods).expect("a pod read as JSON writes as JSON");
        PackedPods {
            json: json.into_boxed_slice(),
            facts,
        }
    }

    pub(crate) fn facts(&self) -> &[Fact] {
        &self.facts
    }

    /// The pods as objects again, in the order they were listed.
    pub(crate) fn pods(&self) -> Vec<Pod> {
        serde_json::from_slice(&self.json).expect("pods packed from objects read back")
    }

    /// The pods as objects again, each with its fate.
    pub(crate) fn unpack(&self) -> Vec<(Pod, Disposition)> {
        self.pods()
            .into_iter()
            .zip(self.facts.iter().map(|f| f.disposition.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::classify::{SkipReason, WaitReason};
    use serde_json::json;

    fn pod(name: &str, grace: Option<i64>, claim: bool) -> Pod {
        let volumes = if claim {
            json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}])
        } else {
            json!([{"name": "scratch", "emptyDir": {}}])
        };
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "a", "uid": format!("uid-{name}"),
                "labels": {"app": "web"}, "creationTimestamp": "2026-11-01T10:00:00Z",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "r", "controller": true}]},
            "spec": {"nodeName": "n1", "priority": 5, "terminationGracePeriodSeconds": grace,
                "volumes": volumes, "containers": []},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": "2026-11-01T10:00:05Z"}]},
        }))
        .unwrap()
    }

    #[test]
    fn unpacks_the_pods_it_packed_with_their_fates_and_facts() {
        let pods = vec![
            (
                pod("web-1", Some(10), true),
                Disposition::Evict {
                    wave: 1,
                    warning: None,
                    surge: false,
                },
            ),
            (
                pod("web-2", None, false),
                Disposition::Skip {
                    reason: SkipReason::DrainLabel,
                },
            ),
            (
                pod("web-3", Some(5), false),
                Disposition::WaitCompleted {
                    wave: 0,
                    reason: WaitReason::Rule("batch".into()),
                },
            ),
        ];
        let packed = PackedPods::pack(pods.clone(), None);
        assert_eq!(packed.unpack(), pods);
        let facts = packed.facts();
        assert_eq!(facts[0].key, PodKey::new("a", "web-1"));
        assert_eq!((facts[0].grace, facts[1].grace), (10, 30));
        assert_eq!(
            facts.iter().map(|f| f.claims).collect::<Vec<_>>(),
            [true, false, false]
        );
        assert_eq!(facts[2].disposition, pods[2].1);
        let flagged = PackedPods::pack(pods, Some(0));
        assert!(flagged.facts().iter().all(|f| f.grace == 0));
    }
}
