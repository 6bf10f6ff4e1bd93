//! The `scale` subresource of Deployments, ReplicaSets, StatefulSets and
//! ReplicationControllers, as
//! `kubectl scale` and autoscalers use it: an autoscaling/v1 `Scale` whose
//! `spec.replicas` is the workload's and whose `status` carries the
//! replicas seen and the selector as a string (kubernetes
//! pkg/registry/apps/deployment/storage/storage.go, ScaleREST).

use crate::objects::path::At;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::resources::Resource;

/// A label selector object in its string form: `a=b,c in (d,e)`. A
/// ReplicationController's selector is a plain label map.
pub(crate) fn selector_string(sel: &Value) -> String {
    let is_label_selector =
        sel.get("matchLabels").is_some() || sel.get("matchExpressions").is_some();
    let labels = if is_label_selector {
        &sel["matchLabels"]
    } else {
        sel
    };
    let mut parts: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        parts.push(match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            _ => format!("!{key}"),
        });
    }
    parts.join(",")
}

/// The workload's Scale.
pub(crate) fn of(obj: &Value) -> Value {
    let meta = &obj["metadata"];
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": obj.at("/spec/replicas").cloned().unwrap_or(json!(1))},
        "status": {
            "replicas": obj.at("/status/replicas").cloned().unwrap_or(json!(0)),
            "selector": selector_string(&obj["spec"]["selector"]),
        },
    })
}

/// The workload with the replicas a written Scale asks for.
pub(crate) fn apply(res: Resource, obj: &Value, scale: &Value) -> Result<Value, ApiError> {
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let replicas = scale
        .at("/spec/replicas")
        .and_then(Value::as_i64)
        .filter(|r| *r >= 0)
        .ok_or_else(|| {
            ApiError::invalid(
                res,
                name,
                "spec.replicas: Invalid value: must be greater than or equal to 0",
            )
        })?;
    let mut out = obj.clone();
    out["spec"]["replicas"] = json!(replicas);
    if let Some(rv) = scale
        .at("/metadata/resourceVersion")
        .filter(|v| v.is_string())
    {
        out["metadata"]["resourceVersion"] = rv.clone();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_carries_replicas_and_the_selector_string() {
        let d = json!({"metadata": {"name": "web", "namespace": "apps", "resourceVersion": "7"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}},
            "status": {"replicas": 2}});
        let s = of(&d);
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(s["status"]["selector"], "app=web,tier in (a,b)");
        let scaled = apply(Resource::Deployments, &d, &json!({"spec": {"replicas": 5}})).unwrap();
        assert_eq!(scaled["spec"]["replicas"], 5);
        assert!(
            apply(
                Resource::Deployments,
                &d,
                &json!({"spec": {"replicas": -1}})
            )
            .is_err()
        );
    }
}
