//! `--surge`: for a pod whose PodDisruptionBudget allows no disruption, one
//! more replica of its Deployment first, so that the budget lets the old
//! pod go without availability ever dropping below it. The Deployment is
//! scaled up by one (its pod template untouched, so no rollout starts),
//! recorded in the annotation `kubectl-maintain.io/surge`, and scaled back
//! when the node's drain ends (drained, timed out, interrupted): only if
//! its replicas are still what the surge set, else the record is removed
//! and a warning says so. The ReplicaSet controller then removes one of
//! the pods, the budget's healthy count never below what it requires. A
//! Deployment already carrying the record (another node's surge, in a
//! roll or a second run) is not surged again.
//!
//! A workload that cannot surge is said with the reason and left to the
//! other rules: a StatefulSet (its pods keep their identity), a bare
//! ReplicaSet or any other owner, a Deployment with the Recreate strategy,
//! and one a HorizontalPodAutoscaler keeps at its maximum.

use std::collections::HashMap;
use std::sync::Mutex;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::policy::maintenance::FIELD_MANAGER;
use crate::vocabulary::pod_key::PodKey;

pub(crate) const ANNOTATION: &str = "kubectl-maintain.io/surge";

/// What a surge changed on a Deployment, recorded on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// `spec.replicas` before the surge.
    pub(crate) replicas: i32,
    /// The node whose drain asked for it.
    pub(crate) node: String,
}

/// Why a Deployment cannot surge, if it cannot: its strategy, and the
/// autoscalers (maxReplicas, target name) in its namespace.
pub(crate) fn refusal(deployment: &Deployment, hpas: &[(i32, String)]) -> Option<String> {
    let name = deployment.metadata.name.as_deref().unwrap_or_default();
    let spec = &deployment.spec;
    if spec.strategy.as_ref().and_then(|s| s.type_.as_deref()) == Some("Recreate") {
        return Some(format!(
            "Deployment {name} uses the Recreate strategy, which never runs old and new pods together"
        ));
    }
    let replicas = spec.replicas.unwrap_or(1);
    if let Some((max, _)) = hpas.iter().find(|(_, target)| target == name)
        && replicas >= *max
    {
        return Some(format!(
            "Deployment {name} is at its HorizontalPodAutoscaler's maximum ({max} replicas)"
        ));
    }
    None
}

/// Why a pod whose owner is not a ReplicaSet cannot surge.
pub(crate) fn owner_refusal(kind: Option<&str>, name: &str) -> Option<String> {
    match kind {
        Some("ReplicaSet") => None,
        Some("StatefulSet") => Some(format!(
            "StatefulSet {name} cannot surge: its pods keep their identity, one at a time"
        )),
        Some(kind) => Some(format!("its owner {kind} {name} cannot surge")),
        None => Some("a pod without a controller cannot surge".to_string()),
    }
}

/// The Deployments surged by this drain, by (namespace, name), with the node
/// that asked (one surge per Deployment, whichever nodes hold its pods).
#[derive(Default)]
pub(crate) struct Surges {
    done: Mutex<HashMap<(String, String), String>>,
}

impl Surges {
    /// Surges the Deployment of this pod, unless it cannot surge (the
    /// reason) or was surged already. Ok(Some(deployment)) when it was
    /// surged now or before; Ok(None) when the Deployment changed under the
    /// scale-up (409), to be asked again.
    pub(crate) async fn surge(
        &self,
        client: &kube::Client,
        node: &str,
        pod: &PodKey,
        owner: Option<(&str, &str)>,
    ) -> Result<Option<String>, String> {
        let rs_name = owner.map_or("", |o| o.1);
        if let Some(why) = owner_refusal(owner.map(|o| o.0), rs_name) {
            return Err(why);
        }
        let ns = pod.namespace.as_str();
        let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
        let rs = rss.get(rs_name).await.map_err(|e| e.to_string())?;
        let deployment = crate::policy::classify::controller_of(&rs.metadata)
            .filter(|(kind, _)| *kind == "Deployment")
            .map(|(_, name)| name.to_string())
            .ok_or_else(|| format!("ReplicaSet {rs_name} has no Deployment: it cannot surge"))?;
        let key = (ns.to_string(), deployment.clone());
        if self.done.lock().expect("surges").contains_key(&key) {
            return Ok(Some(deployment));
        }
        let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
        let d = api.get(&deployment).await.map_err(|e| e.to_string())?;
        // Surged already, by another node of this run or another run (a
        // roll's nodes drain apart): one surge at a time, undone by the
        // node its record names.
        if d.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(ANNOTATION))
        {
            return Ok(Some(deployment));
        }
        let hpas: Vec<(i32, String)> = {
            let api: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), ns);
            match api.list(&ListParams::default()).await {
                Ok(list) => list
                    .items
                    .into_iter()
                    .filter_map(|h| {
                        let s = h.spec;
                        (s.scale_target_ref.kind == "Deployment")
                            .then_some((s.max_replicas, s.scale_target_ref.name))
                    })
                    .collect(),
                // Not served or not readable: no autoscaler is known.
                Err(_) => Vec::new(),
            }
        };
        if let Some(why) = refusal(&d, &hpas) {
            return Err(why);
        }
        let replicas = d.spec.replicas.unwrap_or(1);
        let record = Record {
            replicas,
            node: node.to_string(),
        };
        let patch = json!({
            "metadata": {
                "resourceVersion": d.metadata.resource_version,
                "annotations": {ANNOTATION: serde_json::to_string(&record).expect("record")},
            },
            "spec": {"replicas": replicas + 1},
        });
        match api
            .patch(&deployment, &params(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "scaling Deployment {deployment} up: {}",
                    crate::vocabulary::api_words::words(&e)
                ));
            }
        }
        self.done
            .lock()
            .expect("surges")
            .insert(key, node.to_string());
        Ok(Some(deployment))
    }

    /// Scales back every Deployment this node's drain surged; what could
    /// not be undone exactly, one line each.
    pub(crate) async fn undo(&self, client: &kube::Client, node: &str) -> Vec<String> {
        let mine: Vec<(String, String)> = {
            let mut done = self.done.lock().expect("surges");
            let keys: Vec<_> = done
                .iter()
                .filter(|(_, n)| *n == node)
                .map(|(k, _)| k.clone())
                .collect();
            for k in &keys {
                done.remove(k);
            }
            keys
        };
        let mut problems = Vec::new();
        for (ns, name) in mine {
            match undo_one(client, &ns, &name).await {
                Ok(None) => {}
                Ok(Some(problem)) | Err(problem) => problems.push(problem),
            }
        }
        problems
    }
}

/// What scaling back a node's surges left: Deployments changed since
/// (their record removed, their replicas left as they are), and undos that
/// failed (their record kept, for a later uncordon to finish).
#[derive(Debug, Default)]
pub(crate) struct Undone {
    pub(crate) left_as_is: Vec<String>,
    pub(crate) failed: Vec<String>,
}

/// Scales back what a drain of `node` surged and could not undo itself
/// (it was killed): every Deployment whose record names the node.
pub(crate) async fn undo_left_by(client: &kube::Client, node: &str) -> Undone {
    let api: Api<Deployment> = Api::all(client.clone());
    let mut undone = Undone::default();
    let list = match api.list(&ListParams::default()).await {
        Ok(list) => list,
        Err(e) => {
            undone.failed.push(format!(
                "cannot list Deployments to scale back what --surge left for node {node}: {}",
                crate::vocabulary::api_words::words(&e)
            ));
            return undone;
        }
    };
    for d in list.items {
        let record: Option<Record> = d
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(ANNOTATION))
            .and_then(|r| serde_json::from_str(r).ok());
        if record.is_some_and(|r| r.node == node) {
            let ns = d.metadata.namespace.as_deref().unwrap_or_default();
            let name = d.metadata.name.as_deref().unwrap_or_default();
            match undo_one(client, ns, name).await {
                Ok(None) => {}
                Ok(Some(left)) => undone.left_as_is.push(left),
                Err(e) => undone.failed.push(e),
            }
        }
    }
    undone
}

fn params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    }
}

/// The patch that undoes a surge: the recorded replicas when the
/// Deployment still has the surge's, and the record removed either way.
pub(crate) fn undo_patch(d: &Deployment) -> Option<(serde_json::Value, Option<String>)> {
    let record: Record =
        serde_json::from_str(d.metadata.annotations.as_ref()?.get(ANNOTATION)?).ok()?;
    let now = d.spec.replicas.unwrap_or(1);
    let name = d.metadata.name.as_deref().unwrap_or_default();
    let mut patch = json!({
        "metadata": {
            "resourceVersion": d.metadata.resource_version,
            "annotations": {ANNOTATION: null},
        },
    });
    let problem = if now == record.replicas + 1 {
        patch["spec"] = json!({"replicas": record.replicas});
        None
    } else {
        Some(format!(
            "Deployment {name} has {now} replicas, not the {} the surge set: left as it is (it had {} before)",
            record.replicas + 1,
            record.replicas
        ))
    };
    Some((patch, problem))
}

/// Undoes one surge: `Ok(Some(why))` when the Deployment changed since and
/// was left as it is (its record removed), `Err` when the undo failed.
async fn undo_one(client: &kube::Client, ns: &str, name: &str) -> Result<Option<String>, String> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let failed = |e: &kube::Error| {
        format!(
            "scaling Deployment {ns}/{name} back: {}",
            crate::vocabulary::api_words::words(e)
        )
    };
    for _ in 0..5 {
        let d = match api.get(name).await {
            Ok(d) => d,
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(None),
            Err(e) => return Err(failed(&e)),
        };
        let Some((patch, problem)) = undo_patch(&d) else {
            return Ok(None);
        };
        match api.patch(name, &params(), &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(problem),
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(failed(&e)),
        }
    }
    Err(format!(
        "Deployment {ns}/{name} kept changing; its surge was not undone"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(v: serde_json::Value) -> Deployment {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn what_cannot_surge_says_why() {
        let rolling = deployment(json!({"metadata": {"name": "web"}, "spec": {
            "replicas": 2, "selector": {}, "template": {}}}));
        assert_eq!(refusal(&rolling, &[]), None);
        assert_eq!(refusal(&rolling, &[(3, "web".into())]), None);
        assert!(
            refusal(&rolling, &[(2, "web".into())])
                .unwrap()
                .contains("maximum")
        );
        let recreate = deployment(json!({"metadata": {"name": "db"}, "spec": {
            "replicas": 1, "selector": {}, "template": {}, "strategy": {"type": "Recreate"}}}));
        assert!(refusal(&recreate, &[]).unwrap().contains("Recreate"));
        assert!(
            owner_refusal(Some("StatefulSet"), "db")
                .unwrap()
                .contains("StatefulSet db")
        );
        assert!(owner_refusal(None, "").is_some());
        assert_eq!(owner_refusal(Some("ReplicaSet"), "web-1"), None);
    }

    #[test]
    fn the_undo_restores_replicas_only_if_nobody_changed_them() {
        let surged = |replicas: i32| {
            deployment(json!({"metadata": {"name": "web", "annotations": {
                ANNOTATION: r#"{"replicas":1,"node":"n1"}"#}},
                "spec": {"replicas": replicas, "selector": {}, "template": {}}}))
        };
        let (patch, problem) = undo_patch(&surged(2)).unwrap();
        assert_eq!(patch["spec"]["replicas"], 1);
        assert!(patch["metadata"]["annotations"][ANNOTATION].is_null());
        assert_eq!(problem, None);
        let (patch, problem) = undo_patch(&surged(5)).unwrap();
        assert!(patch.get("spec").is_none());
        assert!(problem.unwrap().contains("5 replicas"));
        assert!(undo_patch(&deployment(json!({"metadata": {"name": "x"}}))).is_none());
    }
}
