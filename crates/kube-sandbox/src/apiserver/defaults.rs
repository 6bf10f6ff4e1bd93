//! Defaulting on create, as the apiserver's defaulters do (kubernetes
//! pkg/apis/core/v1/defaults.go, pkg/apis/apps/v1/defaults.go,
//! pkg/apis/batch/v1/defaults.go): a field the client left out gets the
//! value a real cluster would store; nothing given is overwritten.

use crate::objects::path::At;
use serde_json::{Value, json};

use crate::resources::Resource;

/// The DefaultTolerationSeconds admission plugin: a pod that does not
/// tolerate the not-ready and unreachable NoExecute taints itself tolerates
/// them for 300 s (kubernetes plugin/pkg/admission/defaulttolerationseconds).
fn default_tolerations(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let list = spec.entry("tolerations").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return;
    };
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let has = list.iter().any(|t| {
            let any = |f: &str| t[f].as_str().is_none_or(str::is_empty);
            (t["key"] == key || any("key")) && (t["effect"] == "NoExecute" || any("effect"))
        });
        if !has {
            list.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
}

/// Sets `obj[path]` (a `/`-separated pointer) unless it is there already.
fn or_default(obj: &mut Value, path: &str, value: Value) {
    if obj.at(path).is_some() {
        return;
    }
    let mut at = obj;
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let Some(map) = at.as_object_mut() else {
            return;
        };
        if i + 1 == parts.len() {
            map.insert((*part).to_string(), value);
            return;
        }
        at = map.entry((*part).to_string()).or_insert_with(|| json!({}));
    }
}

/// A pod spec's defaults (SetDefaults_PodSpec, SetDefaults_Container).
fn pod_spec(spec: &mut Value) {
    or_default(spec, "/restartPolicy", json!("Always"));
    or_default(spec, "/dnsPolicy", json!("ClusterFirst"));
    or_default(spec, "/schedulerName", json!("default-scheduler"));
    or_default(spec, "/securityContext", json!({}));
    or_default(spec, "/enableServiceLinks", json!(true));
    or_default(spec, "/terminationGracePeriodSeconds", json!(30));
    for list in ["containers", "initContainers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let image = c["image"].as_str().unwrap_or_default();
            let tag = image
                .rsplit('/')
                .next()
                .and_then(|s| s.split_once(':'))
                .map(|(_, t)| t);
            let pull = if image.contains('@') || tag.is_some_and(|t| t != "latest") {
                "IfNotPresent"
            } else {
                "Always"
            };
            or_default(c, "/imagePullPolicy", json!(pull));
            or_default(c, "/terminationMessagePath", json!("/dev/termination-log"));
            or_default(c, "/terminationMessagePolicy", json!("File"));
            for p in c
                .get_mut("ports")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                or_default(p, "/protocol", json!("TCP"));
            }
        }
    }
}

/// A workload's defaults, its pod template's included.
fn workload(res: Resource, obj: &mut Value) {
    if let Some(spec) = obj.pointer_mut("/spec/template/spec") {
        pod_spec(spec);
    }
    match res {
        Resource::Deployments => {
            or_default(obj, "/spec/replicas", json!(1));
            or_default(obj, "/spec/strategy/type", json!("RollingUpdate"));
            if obj["spec"]["strategy"]["type"] == "RollingUpdate" {
                or_default(obj, "/spec/strategy/rollingUpdate/maxSurge", json!("25%"));
                or_default(
                    obj,
                    "/spec/strategy/rollingUpdate/maxUnavailable",
                    json!("25%"),
                );
            }
            or_default(obj, "/spec/revisionHistoryLimit", json!(10));
            or_default(obj, "/spec/progressDeadlineSeconds", json!(600));
        }
        Resource::ReplicaSets => or_default(obj, "/spec/replicas", json!(1)),
        // core/v1 SetDefaults_ReplicationController: the template's labels
        // stand in for an empty selector and empty object labels.
        Resource::ReplicationControllers => {
            or_default(obj, "/spec/replicas", json!(1));
            let labels = obj.at("/spec/template/metadata/labels").cloned();
            if let Some(labels) = labels.filter(|l| l.as_object().is_some_and(|m| !m.is_empty())) {
                let empty = |v: Option<&Value>| {
                    v.and_then(Value::as_object)
                        .is_none_or(serde_json::Map::is_empty)
                };
                if empty(obj.at("/spec/selector")) {
                    obj["spec"]["selector"] = labels.clone();
                }
                if empty(obj.at("/metadata/labels")) {
                    obj["metadata"]["labels"] = labels;
                }
            }
        }
        Resource::StatefulSets => {
            or_default(obj, "/spec/replicas", json!(1));
            or_default(obj, "/spec/podManagementPolicy", json!("OrderedReady"));
            or_default(obj, "/spec/updateStrategy/type", json!("RollingUpdate"));
            or_default(obj, "/spec/revisionHistoryLimit", json!(10));
        }
        Resource::DaemonSets => {
            or_default(obj, "/spec/updateStrategy/type", json!("RollingUpdate"));
            or_default(obj, "/spec/revisionHistoryLimit", json!(10));
        }
        Resource::Jobs => {
            // A work queue (parallelism without completions) keeps its nil.
            if obj.at("/spec/parallelism").is_none() {
                or_default(obj, "/spec/completions", json!(1));
            }
            or_default(obj, "/spec/parallelism", json!(1));
            or_default(obj, "/spec/backoffLimit", json!(6));
            or_default(obj, "/spec/completionMode", json!("NonIndexed"));
        }
        _ => {}
    }
}

/// A Secret as it is stored, on every write (k8s.io/kubernetes
/// pkg/apis/core/v1/conversion.go `Convert_v1_Secret_To_core_Secret`:
/// `stringData` overwrites `data`, base64-encoded, and is never stored;
/// defaults.go `SetDefaults_Secret`: type `Opaque`).
pub(crate) fn secret(res: Resource, obj: &mut Value) {
    use base64::Engine as _;
    if res != Resource::Secrets {
        return;
    }
    if let Some(Value::Object(strings)) = obj.as_object_mut().and_then(|o| o.remove("stringData")) {
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            obj["data"][key] = json!(base64::engine::general_purpose::STANDARD.encode(text));
        }
    }
    or_default(obj, "/type", json!("Opaque"));
}

/// Defaulting on create, as the apiserver's defaulters do.
pub(crate) fn prepare_new(res: Resource, mut obj: Value) -> Value {
    workload(res, &mut obj);
    secret(res, &mut obj);
    if res == Resource::Pods {
        if let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) {
            pod_spec(spec);
        }
        if obj.at("/status/phase").is_none() {
            obj["status"]["phase"] = json!("Pending");
            obj["status"]["qosClass"] = json!("BestEffort");
        }
        default_tolerations(&mut obj);
        if obj.at("/spec/priority").is_none() {
            let prio = match obj.at("/spec/priorityClassName").and_then(Value::as_str) {
                Some("system-node-critical") => 2_000_001_000,
                Some("system-cluster-critical") => 2_000_000_000,
                _ => 0,
            };
            obj["spec"]["priority"] = json!(prio);
        }
    }
    if res == Resource::Namespaces {
        if obj.at("/status/phase").is_none() {
            obj["status"]["phase"] = json!("Active");
        }
        // The namespace strategy's PrepareForCreate: the namespace
        // controller's finalizer, always.
        let kubernetes = crate::objects::KUBERNETES_FINALIZER;
        let finalizers = &mut obj["spec"]["finalizers"];
        if !finalizers
            .as_array()
            .is_some_and(|f| f.iter().any(|v| v == kubernetes))
        {
            let mut list = finalizers.as_array().cloned().unwrap_or_default();
            list.push(json!(kubernetes));
            *finalizers = json!(list);
        }
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_client_leaves_out_gets_the_apiservers_default() {
        let d = prepare_new(
            Resource::Deployments,
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "c", "image": "nginx:1.27", "ports": [{"containerPort": 80}]},
                {"name": "s", "image": "sidecar"}]}}}}),
        );
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(pod["restartPolicy"], "Always");
        assert_eq!(pod["dnsPolicy"], "ClusterFirst");
        assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(
            pod["containers"][1]["imagePullPolicy"], "Always",
            "no tag: latest"
        );
        assert_eq!(pod["containers"][0]["ports"][0]["protocol"], "TCP");
        let recreate = prepare_new(
            Resource::Deployments,
            json!({"spec": {"strategy": {"type": "Recreate"}}}),
        );
        assert!(recreate.at("/spec/strategy/rollingUpdate").is_none());
        let queue = prepare_new(Resource::Jobs, json!({"spec": {"parallelism": 3}}));
        assert!(queue.at("/spec/completions").is_none());
        let pod = prepare_new(
            Resource::Pods,
            json!({"spec": {"containers": [{"name": "c", "image": "x"}]}}),
        );
        let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
        assert_eq!(tolerations.len(), 2, "not-ready and unreachable, 300 s");
        assert_eq!(pod["spec"]["restartPolicy"], "Always");
    }
}
