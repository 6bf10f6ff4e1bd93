//! Discovery documents and /version, as client-go's discovery client reads
//! them (plain JSON; clients fall back from aggregated discovery).

use serde_json::{Value, json};

use crate::resources;
use crate::shared::Shared;

/// Discovery documents and /version.
pub(crate) fn discovery(shared: &Shared, path: &str) -> Option<Value> {
    let served = shared.config.minor_number();
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["version"] => {
            let minor = shared.config.minor();
            Some(json!({
                "major": "1",
                "minor": minor,
                "gitVersion": format!("v1.{minor}.0"),
                "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean",
                "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.24.0",
                "compiler": "gc",
                "platform": "linux/amd64",
            }))
        }
        ["api"] => Some(json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
        })),
        ["api", v] => resources::api_resource_list("", v, served),
        ["apis"] => {
            let reviews = super::access_review::GROUPS.iter().map(|g| (*g, "v1"));
            let groups: Vec<Value> = resources::group_versions(served)
                .into_iter()
                .chain(reviews)
                .map(|(g, v)| {
                    let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
                    json!({"name": g, "versions": [gv], "preferredVersion": gv})
                })
                .collect();
            Some(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
        }
        ["apis", g] => resources::group_versions(served)
            .into_iter()
            .find(|(name, _)| name == g)
            .map(|(g, v)| {
                let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
                json!({"kind": "APIGroup", "apiVersion": "v1", "name": g, "versions": [gv], "preferredVersion": gv})
            }),
        ["apis", g, v] => resources::api_resource_list(g, v, served)
            .or_else(|| super::access_review::discovery(path)),
        _ => None,
    }
}
