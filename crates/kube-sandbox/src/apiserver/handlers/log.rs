//! GET pods/NAME/log: a container's output, as the kubelet serves it
//! through the apiserver (kubernetes pkg/registry/core/pod/rest/log.go and
//! the kubelet's `/containerLogs`): `container` (which may be left out
//! when the pod has one), `previous`, `timestamps`, `tailLines`, and
//! `follow`, which streams until the container ends. Only local-image
//! containers (kubelet/runtime.rs) write anything; a simulated one's log is
//! empty.

use crate::objects::path::At;
use std::sync::Arc;

use serde_json::Value;

use crate::api_error::ApiError;
use crate::apiserver::log_stream::LogRequest;
use crate::apiserver::reply::Reply;
use crate::apiserver::request::Request;
use crate::objects::pods;
use crate::shared::Shared;

pub(in crate::apiserver) fn log(
    shared: &Arc<Shared>,
    req: &Request<'_>,
) -> Result<Reply, ApiError> {
    let param = |k: &str| {
        req.query
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let flag = |k: &str| matches!(param(k), Some("true" | "1"));
    let pod = {
        let store = shared.store();
        req.existing(&store)?
    };
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let containers: Vec<&str> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    let container = match (param("container"), containers.as_slice()) {
        (Some(c), _) => c,
        (None, [only]) => only,
        (None, _) => {
            return Err(ApiError::new(
                400,
                "BadRequest",
                format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    containers.join(" ")
                ),
            ));
        }
    };
    if !containers.contains(&container) {
        return Err(ApiError::new(
            400,
            "BadRequest",
            format!("container {container} is not valid for pod {name}"),
        ));
    }
    let previous = flag("previous");
    let status = pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == container)
        .cloned()
        .unwrap_or(Value::Null);
    if !previous
        && status.at("/state/running").is_none()
        && status.at("/state/terminated").is_none()
        && status.at("/lastState/terminated").is_none()
    {
        let reason = status
            .at("/state/waiting/reason")
            .and_then(Value::as_str)
            .unwrap_or(if pods::phase(&pod) == "Pending" {
                "ContainerCreating"
            } else {
                "PodInitializing"
            });
        return Err(ApiError::new(
            400,
            "BadRequest",
            format!("container \"{container}\" in pod \"{name}\" is waiting to start: {reason}"),
        ));
    }
    let log = shared.runtime.log(&req.target.key(), container, previous);
    if previous && log.is_none() {
        return Err(ApiError::new(
            400,
            "BadRequest",
            format!("previous terminated container \"{container}\" in pod \"{name}\" not found"),
        ));
    }
    Ok(Reply::Log(LogRequest {
        log,
        follow: flag("follow") && !previous,
        timestamps: flag("timestamps"),
        tail: param("tailLines").and_then(|n| n.parse().ok()),
    }))
}
