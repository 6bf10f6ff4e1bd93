//! Which of Kubernetes 1.37's alpha APIs the cluster serves, read once per
//! process by one discovery request (`/apis`), as kubectl's discovery
//! reads groups (staging/src/k8s.io/client-go/discovery/discovery_client.go,
//! `ServerGroups`): the drain decides from it how a pod is evicted
//! (crate::drain::evict) and whether gangs are read.

use serde_json::Value;

/// Kubernetes 1.37's alpha APIs a drain uses when the cluster serves them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Served {
    /// `lifecycle.k8s.io/v1alpha1`: EvictionRequests.
    pub(crate) eviction_requests: bool,
    /// `scheduling.k8s.io/v1alpha3`: PodGroups (gangs).
    pub(crate) pod_groups: bool,
}

/// Which of them the cluster serves: one discovery request (`/apis`).
pub(crate) async fn served(client: &kube::Client) -> Result<Served, kube::Error> {
    let req = http::Request::get("/apis")
        .body(Vec::new())
        .expect("a request");
    let groups = client.request::<Value>(req).await?;
    let has = |group: &str, version: &str| {
        groups["groups"].as_array().is_some_and(|gs| {
            gs.iter().any(|g| {
                g["name"] == group
                    && g["versions"]
                        .as_array()
                        .is_some_and(|vs| vs.iter().any(|v| v["version"] == version))
            })
        })
    };
    Ok(Served {
        eviction_requests: has("lifecycle.k8s.io", "v1alpha1"),
        pod_groups: has("scheduling.k8s.io", "v1alpha3"),
    })
}
