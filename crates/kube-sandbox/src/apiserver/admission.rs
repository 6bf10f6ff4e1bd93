//! Admission the sandbox's apiserver runs: the NamespaceLifecycle plugin
//! (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/
//! lifecycle/admission.go), and, as a cluster with KubeVirt has it,
//! virt-api's eviction admitter
//! (kubevirt pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go),
//! and Strimzi's Drain Cleaner webhook where the cluster runs it.

use crate::objects::path::At;
use serde_json::{Value, json};

use crate::api_error::ApiError;

use crate::objects::kubevirt::{evacuates, vmi_of};
use crate::objects::{pods, strimzi};
use crate::resources::Resource;
use crate::store::Store;

/// NamespaceLifecycle: no create (an eviction included: it is a create of
/// `pods/eviction`) in a namespace being deleted. 403 with the
/// `NamespaceTerminating` cause that kubectl drain looks for; deletes and
/// everything else go through.
pub(crate) fn namespace_lifecycle(
    store: &Store,
    res: Resource,
    namespace: &str,
    name: &str,
) -> Result<(), ApiError> {
    let ns = store.get(
        Resource::Namespaces,
        &(String::new(), namespace.to_string()),
    );
    if ns.is_none_or(|n| n.at("/status/phase").and_then(Value::as_str) != Some("Terminating")) {
        return Ok(());
    }
    let plural = res.info().plural;
    Err(ApiError::new(
        403,
        "Forbidden",
        format!(
            "{plural} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated"
        ),
    )
    .with_details(json!({
        "name": name,
        "kind": plural,
        "causes": [{
            "reason": "NamespaceTerminating",
            "message": format!("namespace {namespace} is being terminated"),
            "field": "metadata.namespace",
        }],
    })))
}

/// virt-api's eviction admitter: an eviction of a launcher pod whose VMI may
/// be moved marks the VMI for evacuation from the pod's node.
pub(crate) fn on_eviction(store: &mut Store, pod: &Value) {
    let Some(vmi) = vmi_of(pod) else { return };
    let key = (
        pod["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        vmi,
    );
    let Some(obj) = store.get(Resource::VirtualMachineInstances, &key) else {
        return;
    };
    let strategy = obj
        .at("/spec/evictionStrategy")
        .and_then(Value::as_str)
        .unwrap_or("None");
    let marked = obj
        .at("/status/evacuationNodeName")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty());
    if evacuates(strategy) && !marked {
        let node = pods::node_name(pod).unwrap_or_default().to_string();
        let _ = store.modify(Resource::VirtualMachineInstances, &key, |v| {
            v["status"]["evacuationNodeName"] = json!(node);
        });
    }
}

/// Whether the Drain Cleaner is installed, and then whether it denies
/// evictions (its default) rather than leave them to the budget.
fn drain_cleaner(store: &Store) -> Option<bool> {
    let (_, doc) = store
        .docs(Resource::Deployments, None, None)
        .find(|(k, _)| k.1 == strimzi::DRAIN_CLEANER)?;
    let d = doc.value();
    let deny = d
        .at("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|c| c["env"].as_array().into_iter().flatten())
        .find(|e| e["name"] == "STRIMZI_DENY_EVICTION")
        .and_then(|e| e["value"].as_str())
        .is_none_or(|v| !v.eq_ignore_ascii_case("false"));
    Some(deny)
}

/// Strimzi's Drain Cleaner webhook (crate::objects::strimzi), for an
/// eviction of `pod` (its dry run annotates nothing):
/// the refusal to answer with, if it refuses. As kube-apiserver words a
/// webhook's denial (staging/src/k8s.io/apiserver/pkg/admission/plugin/
/// webhook/errors/statuserror.go): `admission webhook "NAME" denied the
/// request: MESSAGE`, with the webhook's code.
pub(crate) fn strimzi_drain_cleaner(
    store: &mut Store,
    pod: &Value,
    dry_run: bool,
) -> Result<(), ApiError> {
    if !strimzi::managed(pod) {
        return Ok(());
    }
    let Some(deny) = drain_cleaner(store) else {
        return Ok(());
    };
    if !dry_run && pods::annotation(pod, strimzi::ROLL) != Some("true") {
        let key = crate::store::key_of(pod);
        let _ = store.modify(Resource::Pods, &key, |p| {
            p["metadata"]["annotations"][strimzi::ROLL] = Value::from("true");
        });
    }
    if !deny {
        return Ok(());
    }
    Err(ApiError::new(
        500,
        "",
        format!(
            "admission webhook \"{}\" denied the request: The pod will be rolled by the Strimzi Cluster Operator",
            strimzi::WEBHOOK
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_drain_cleaner_nothing_happens_and_with_it_the_pod_is_annotated() {
        let mut store = Store::new(10);
        let p = json!({"metadata": {"name": "p", "namespace": "kafka",
            "labels": {"strimzi.io/kind": "Kafka", "strimzi.io/name": "my-cluster-kafka"}}});
        store.load(Resource::Pods, p.clone()).unwrap();
        assert!(strimzi_drain_cleaner(&mut store, &p, false).is_ok());
        let annotated = |s: &Store| {
            let p = s
                .get(Resource::Pods, &("kafka".into(), "p".into()))
                .unwrap();
            pods::annotation(&p, strimzi::ROLL).map(str::to_string)
        };
        assert_eq!(annotated(&store), None);
        let cleaner = |deny: &str| {
            json!({"metadata": {"name": strimzi::DRAIN_CLEANER, "namespace": "strimzi-drain-cleaner"},
                "spec": {"template": {"spec": {"containers": [{"name": "c",
                    "env": [{"name": "STRIMZI_DENY_EVICTION", "value": deny}]}]}}}})
        };
        store.load(Resource::Deployments, cleaner("true")).unwrap();
        assert!(strimzi_drain_cleaner(&mut store, &p, true).is_err());
        assert_eq!(annotated(&store), None, "a dry run annotates nothing");
        let e = strimzi_drain_cleaner(&mut store, &p, false).unwrap_err();
        assert_eq!(e.code, 500);
        assert!(e.message.starts_with(
            "admission webhook \"strimzi-drain-cleaner.strimzi.io\" denied the request: "
        ));
        assert_eq!(annotated(&store).as_deref(), Some("true"));

        let mut legacy = Store::new(10);
        legacy.load(Resource::Pods, p.clone()).unwrap();
        legacy
            .load(Resource::Deployments, cleaner("false"))
            .unwrap();
        assert!(
            strimzi_drain_cleaner(&mut legacy, &p, false).is_ok(),
            "the budget decides"
        );
        assert_eq!(annotated(&legacy).as_deref(), Some("true"));
    }
}
