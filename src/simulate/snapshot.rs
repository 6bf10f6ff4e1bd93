//! A read-only copy of what a drain depends on: every kind the sandbox
//! serves, listed page by page (GET only) from the live cluster, as the
//! objects a dump (`kubectl get ... -o yaml`) would hold. Events and leases
//! are not copied (nothing a drain decides reads them); a kind the cluster
//! does not serve (KubeVirt's VMIs without KubeVirt) is simply absent.

use anyhow::Context;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube_sandbox::resources::Resource;
use serde_json::{Value, json};

/// Every object the copy needs, with its kind.
pub(crate) async fn read(client: &kube::Client) -> anyhow::Result<Vec<(Resource, Value)>> {
    let mut out = Vec::new();
    for res in Resource::ALL {
        if matches!(res, Resource::Events | Resource::Leases) {
            continue;
        }
        let i = res.info();
        let api_resource = ApiResource {
            group: i.group.into(),
            version: i.version.into(),
            api_version: res.api_version(),
            kind: i.kind.into(),
            plural: i.plural.into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &api_resource);
        let mut params = ListParams::default().limit(500);
        loop {
            let page = match api.list(&params).await {
                Ok(page) => page,
                Err(kube::Error::Api(e)) if e.code == 404 => break,
                Err(e) => {
                    return Err(e).with_context(|| format!("list {}", i.plural));
                }
            };
            for item in page.items {
                let mut obj = serde_json::to_value(&item).context("an object as JSON")?;
                obj["apiVersion"] = json!(res.api_version());
                obj["kind"] = json!(i.kind);
                out.push((res, obj));
            }
            match page.metadata.continue_ {
                Some(token) if !token.is_empty() => params = params.continue_token(&token),
                _ => break,
            }
        }
    }
    Ok(out)
}
