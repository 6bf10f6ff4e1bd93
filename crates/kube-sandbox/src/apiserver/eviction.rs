//! The pods/eviction subresource, step for step as
//! kubernetes pkg/registry/core/pod/storage/eviction.go decides.

use crate::objects::path::At;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::apiserver::deletion::{self, DeleteOptions};
use crate::clock::now_rfc3339;
use crate::objects::budgets;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

pub(crate) const TOO_MANY_REQUESTS_MESSAGE: &str =
    "Cannot evict pod as it would violate the pod's disruption budget.";

fn budget_refusal(cause: &str, retry_after: Option<u64>) -> ApiError {
    let mut e =
        ApiError::new(429, "TooManyRequests", TOO_MANY_REQUESTS_MESSAGE).with_details(json!({
            "causes": [{"reason": "DisruptionBudget", "message": cause}],
        }));
    e.retry_after = retry_after;
    e
}

/// The most disruptions a budget records before its controller confirms
/// them (eviction.go's `MaxDisruptedPodSize`).
const MAX_DISRUPTED_PODS: usize = 2000;

/// The refusals of a budget that are 403s (eviction.go), with the typed
/// cause Kubernetes 1.37 adds to them (`DisruptionBudget...`); older
/// minors send the message alone.
fn budget_forbidden(minor: u32, reason: &str, message: &str) -> ApiError {
    let e = ApiError::new(403, "Forbidden", message.to_string());
    if minor < 37 {
        return e;
    }
    e.with_details(json!({"causes": [{"reason": reason, "message": message}]}))
}

/// Evicts `pod_key` as asked by an Eviction `body`; `query_dry_run` is the
/// `?dryRun=All` of the request; `minor` the Kubernetes minor served.
pub(crate) fn evict(
    store: &mut Store,
    pod_key: &Key,
    body: &Value,
    query_dry_run: bool,
    minor: u32,
) -> Result<Value, ApiError> {
    let body_name = body
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if body_name != pod_key.1 {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let mut opts = body
        .get("deleteOptions")
        .map(DeleteOptions::from_json)
        .unwrap_or_default();
    opts.dry_run |= query_dry_run;

    let Some(pod) = store.get(Resource::Pods, pod_key) else {
        return Err(ApiError::not_found(Resource::Pods, &pod_key.1));
    };
    deletion::check_preconditions(Resource::Pods, &pod, &opts)?;

    if kube_conventions::eviction::ignores_budget(pods::phase(&pod), pods::is_terminating(&pod)) {
        return delete_evicted(store, pod_key, &opts, false);
    }
    // Validating webhooks run before the budget is looked at
    // (pkg/registry/core/pod/storage/eviction.go's createValidation).
    super::admission::strimzi_drain_cleaner(store, &pod, opts.dry_run)?;
    if !opts.dry_run {
        super::admission::on_eviction(store, &pod);
    }
    let pdbs = store.budgets_of_pod(&pod);
    let pdb_key = match pdbs.as_slice() {
        [] => return delete_evicted(store, pod_key, &opts, true),
        [one] => one.clone(),
        _ => {
            return Err(ApiError::new(
                500,
                "",
                kube_conventions::eviction::MULTIPLE_BUDGETS,
            ));
        }
    };
    take_disruption(store, pod_key, &pod, &pdb_key, &opts, minor)?;
    delete_evicted(store, pod_key, &opts, true)
}

/// The budget's say on evicting a pod it covers: an unhealthy pod goes when
/// the policy or a healthy budget allows; otherwise one of its allowed
/// disruptions is taken (not under dry run), or the eviction is refused.
fn take_disruption(
    store: &mut Store,
    pod_key: &Key,
    pod: &Value,
    pdb_key: &Key,
    opts: &DeleteOptions,
    minor: u32,
) -> Result<(), ApiError> {
    let pdb = store
        .get(Resource::PodDisruptionBudgets, pdb_key)
        .expect("listed PDB");
    let st = |f: &str| {
        pdb.at(&format!("/status/{f}"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };

    if !pods::is_ready(pod) {
        let always = pdb
            .at("/spec/unhealthyPodEvictionPolicy")
            .and_then(Value::as_str)
            == Some("AlwaysAllow");
        let budget_healthy =
            st("currentHealthy") >= st("desiredHealthy") && st("desiredHealthy") > 0;
        if always || budget_healthy {
            return Ok(());
        }
    }

    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(1);
    if st("observedGeneration") < generation {
        return Err(budget_refusal(
            &format!(
                "The disruption budget {} is still being processed by the server.",
                pdb_key.1
            ),
            Some(10),
        ));
    }
    let allowed = st("disruptionsAllowed");
    if allowed < 0 {
        return Err(budget_forbidden(
            minor,
            "DisruptionBudgetNegativeAllowedDisruptions",
            "pdb disruptions allowed is negative",
        ));
    }
    let disrupted = pdb
        .at("/status/disruptedPods")
        .and_then(Value::as_object)
        .map_or(0, serde_json::Map::len);
    if disrupted > MAX_DISRUPTED_PODS {
        return Err(budget_forbidden(
            minor,
            "DisruptionBudgetTooManyDisruptedPods",
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        return Err(budget_refusal(
            &format!(
                "The disruption budget {} needs {} healthy pods and has {} currently",
                pdb_key.1,
                st("desiredHealthy"),
                st("currentHealthy")
            ),
            None,
        ));
    }
    if !opts.dry_run {
        let pod_name = pod_key.1.clone();
        store.modify(Resource::PodDisruptionBudgets, pdb_key, |o| {
            let status = &mut o["status"];
            status["disruptionsAllowed"] = json!(allowed - 1);
            let disrupted = status
                .as_object_mut()
                .expect("status")
                .entry("disruptedPods")
                .or_insert_with(|| json!({}));
            disrupted[pod_name.as_str()] = json!(now_rfc3339());
            budgets::set_allowed_condition(status, allowed - 1 > 0, generation);
        })?;
    }
    Ok(())
}

fn delete_evicted(
    store: &mut Store,
    key: &Key,
    opts: &DeleteOptions,
    mark_target: bool,
) -> Result<Value, ApiError> {
    if mark_target && !opts.dry_run {
        let now = now_rfc3339();
        store.modify(Resource::Pods, key, |p| {
            pods::set_condition(
                p,
                "DisruptionTarget",
                "True",
                "EvictionByEvictionAPI",
                "Eviction API: evicting",
                &now,
            );
        })?;
    }
    match deletion::delete(store, Resource::Pods, key, opts) {
        Ok(_) => {}
        // Gone between the checks and the delete: the eviction has nothing left to do.
        Err(e) if e.code == 404 => {}
        Err(e) => return Err(e),
    }
    Ok(json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ready pod under a budget whose status says `status`.
    fn store_with(status: &Value) -> Store {
        let mut store = Store::new(100);
        store
            .load(
                Resource::Pods,
                json!({"metadata": {"name": "p", "namespace": "ns", "uid": "u", "labels": {"app": "a"}},
                    "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]},
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
            )
            .unwrap();
        store
            .load(
                Resource::PodDisruptionBudgets,
                json!({"metadata": {"name": "b", "namespace": "ns", "generation": 1},
                    "spec": {"selector": {"matchLabels": {"app": "a"}}, "minAvailable": 1},
                    "status": status.clone()}),
            )
            .unwrap();
        store
    }

    fn evict_p(store: &mut Store, minor: u32) -> ApiError {
        let body = json!({"metadata": {"name": "p"}});
        evict(store, &("ns".into(), "p".into()), &body, false, minor).unwrap_err()
    }

    #[test]
    fn a_budgets_403s_carry_their_typed_cause_from_1_37() {
        let negative = json!({"observedGeneration": 1, "disruptionsAllowed": -1});
        let e = evict_p(&mut store_with(&negative), 37);
        assert_eq!(e.code, 403);
        assert_eq!(
            e.details.as_ref().unwrap()["causes"][0]["reason"],
            "DisruptionBudgetNegativeAllowedDisruptions"
        );
        let older = evict_p(&mut store_with(&negative), 36);
        assert_eq!((older.code, older.details.is_none()), (403, true));
        let disrupted: serde_json::Map<String, Value> = (0..=MAX_DISRUPTED_PODS)
            .map(|i| (format!("p{i}"), json!("2026-01-01T00:00:00Z")))
            .collect();
        let full =
            json!({"observedGeneration": 1, "disruptionsAllowed": 1, "disruptedPods": disrupted});
        let e = evict_p(&mut store_with(&full), 37);
        assert_eq!(
            e.details.as_ref().unwrap()["causes"][0]["reason"],
            "DisruptionBudgetTooManyDisruptedPods"
        );
    }
}
