//! Gangs: the pods of one scheduling group (Kubernetes 1.37's PodGroup,
//! `scheduling.k8s.io/v1alpha3`, a pod's `spec.schedulingGroup`) whose
//! `spec.disruptionMode` is `all` are useless one at a time: evicting one
//! pod of a training job kills the job. Such a group is evicted whole, its
//! pods on other nodes too, and only when every one of their budgets allows
//! as many disruptions as the group has pods under it; otherwise every pod
//! of the group is held, as one blocker naming the budget, and asked again
//! when that budget changes. Never one by one.
//!
//! Upstream, only preemption honours `disruptionMode` so far (the types:
//! staging/src/k8s.io/api/scheduling/v1alpha3/types.go); the eviction
//! subresource does not, so the drain decides before it asks.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::api::ListParams;
use serde_json::Value;

use crate::drain::budgets::lookup::budget_selector;
use crate::policy::classify::is_finished;
use crate::vocabulary::pod_key::{PodKey, uid};

/// What the group of a pod about to be evicted says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not a group disrupted whole (no group, `single`, or unknown).
    Alone,
    /// Every budget allows the whole group: evict these other members too.
    Together(Vec<(PodKey, String)>),
    /// A budget allows fewer disruptions than the group needs: held.
    Held { pdb: String, message: String },
}

/// A budget as the decision reads it: its name, how many disruptions it
/// allows, and which of the group's members it selects.
pub(crate) struct BudgetOver {
    pub(crate) name: String,
    pub(crate) allowed: i32,
    pub(crate) members: usize,
}

/// The decision, pure: the group's members other than `key`, and the
/// budgets over them.
pub(crate) fn decide(
    namespace: &str,
    group: &str,
    key: &PodKey,
    members: &[(PodKey, String)],
    budgets: &[BudgetOver],
) -> Verdict {
    if let Some(short) = budgets
        .iter()
        .find(|b| i64::from(b.allowed) < b.members as i64)
    {
        return Verdict::Held {
            pdb: short.name.clone(),
            message: format!(
                "gang {namespace}/{group} ({}, disruptionMode All): PodDisruptionBudget {} allows {} now and the gang needs {}; its pods go together or not at all",
                kube_conventions::count(members.len(), "pod"),
                short.name,
                kube_conventions::count(
                    usize::try_from(short.allowed.max(0)).unwrap_or(0),
                    "disruption"
                ),
                short.members,
            ),
        };
    }
    Verdict::Together(members.iter().filter(|(k, _)| k != key).cloned().collect())
}

/// Reads the pod's group, its members and their budgets, and decides.
pub(crate) async fn judge(client: &kube::Client, key: &PodKey, group: &str) -> Verdict {
    let ns = &key.namespace;
    let path = format!("/apis/scheduling.k8s.io/v1alpha3/namespaces/{ns}/podgroups/{group}");
    let req = http::Request::get(path)
        .body(Vec::new())
        .expect("a request");
    let Ok(pod_group) = client.request::<Value>(req).await else {
        return Verdict::Alone;
    };
    if pod_group["spec"]["disruptionMode"].get("all").is_none() {
        return Verdict::Alone;
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let Ok(list) = pods.list(&ListParams::default()).await else {
        return Verdict::Alone;
    };
    let members: Vec<&Pod> = list
        .items
        .iter()
        .filter(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.scheduling_group.as_ref())
                .and_then(|g| g.pod_group_name.as_deref())
                == Some(group)
        })
        // Its live members: one already going, or ended (Succeeded,
        // Failed: a finished worker, a crashed one the job replaced),
        // needs no disruption, and no budget counts it.
        .filter(|p| p.metadata.deletion_timestamp.is_none() && !is_finished(p))
        .collect();
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), ns);
    let budget_list = budgets
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    let over: Vec<BudgetOver> = budget_list
        .iter()
        .filter_map(|b| {
            let selector = budget_selector(b)?;
            let covered = members
                .iter()
                .filter(|p| selector.matches(&p.metadata.labels.clone().unwrap_or_default()))
                .count();
            (covered > 0).then(|| BudgetOver {
                name: b.metadata.name.clone().unwrap_or_default(),
                allowed: b
                    .status
                    .as_ref()
                    .and_then(|s| s.disruptions_allowed)
                    .unwrap_or(0),
                members: covered,
            })
        })
        .collect();
    let members: Vec<(PodKey, String)> = members
        .iter()
        .map(|p| (PodKey::of(p), uid(p).to_string()))
        .collect();
    decide(ns, group, key, &members, &over)
}

/// A pod's scheduling group, if it has one.
pub(crate) fn group_of(pod: &Pod) -> Option<String> {
    pod.spec
        .as_ref()?
        .scheduling_group
        .as_ref()?
        .pod_group_name
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str) -> (PodKey, String) {
        (
            PodKey {
                namespace: "ml".into(),
                name: name.into(),
            },
            format!("uid-{name}"),
        )
    }

    #[test]
    fn a_gang_goes_whole_or_is_held_by_the_budget_that_cannot_give_it_all() {
        let members = [pod("t-0"), pod("t-1"), pod("t-2")];
        let budget = |allowed, members| BudgetOver {
            name: "train".into(),
            allowed,
            members,
        };
        let held = decide("ml", "train", &members[0].0, &members, &[budget(1, 3)]);
        assert!(
            matches!(&held, Verdict::Held { pdb, message } if pdb == "train"
                && message.contains("allows 1 disruption now and the gang needs 3")),
            "{held:?}"
        );
        assert_eq!(
            decide("ml", "train", &members[0].0, &members, &[budget(3, 3)]),
            Verdict::Together(vec![pod("t-1"), pod("t-2")])
        );
        assert_eq!(
            decide("ml", "train", &members[0].0, &members, &[]),
            Verdict::Together(vec![pod("t-1"), pod("t-2")]),
            "no budget: nothing holds it"
        );
    }
}
