//! What a dead node still holds, followed on the copy after the predicted
//! drain: how long until each pod it keeps (a StatefulSet's, or one holding
//! a ReadWriteOnce volume) runs Ready on another node. First the soft path,
//! as the drain leaves it: the copy's clock runs on with the node down; then
//! the hard path: the copy's node gets the out-of-service taint that
//! `--node-shut-down` puts on, and the copy's pod garbage collector and
//! attach/detach controller (their real periods: 20 s, the 6-minute force
//! detach, at once with the taint) decide when the pod and its volume move.
//! Nothing here decides a time; the controllers of the copy do.

use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::api::Api;
use kube_sandbox::Sandbox;
use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use serde_json::Value;

use crate::drain::cordon::{self, CordonSpec};
use crate::drain::out_of_service;
use crate::policy::node_health::NodeDown;
use crate::vocabulary::outcome::{
    Cause, DrainOutcome, PodResult, RECOVERY_HORIZON as HORIZON, Recovery,
};

/// How often the copy is looked at; times come from the pods' Ready
/// conditions, not from this.
const STEP: Duration = Duration::from_secs(5);

/// A held pod as the drain left it.
struct Held {
    namespace: String,
    name: String,
    uid: String,
    node: String,
    stateful: Option<String>,
    claims: Vec<String>,
}

/// The pods the drain left on down nodes that cannot move by themselves.
fn held(sandbox: &Sandbox, outcome: &DrainOutcome) -> Vec<Held> {
    let view = sandbox.view();
    let mut out = Vec::new();
    for n in &outcome.nodes {
        if n.not_ready.as_ref().is_none_or(NodeDown::out_of_service) {
            continue;
        }
        for p in &n.pods {
            let left = match &p.result {
                PodResult::Lost { .. } => true,
                PodResult::Remaining { cause } => matches!(cause, Cause::NodeNotReady { .. }),
                _ => false,
            };
            let key = p.pod.to_string();
            let (namespace, name) = key.split_once('/').unwrap_or(("", &key));
            let Some(pod) = view.get(Resource::Pods, namespace, name).filter(|_| left) else {
                continue;
            };
            let stateful = pods::controller_of(&pod)
                .filter(|o| o.kind == "StatefulSet")
                .map(|o| o.name.clone());
            let claims: Vec<String> = pods::claim_names(&pod).map(str::to_string).collect();
            if stateful.is_none() && claims.is_empty() {
                continue;
            }
            out.push(Held {
                namespace: namespace.to_string(),
                name: name.to_string(),
                uid: pod["metadata"]["uid"].as_str().unwrap_or_default().into(),
                node: n.node.clone(),
                stateful,
                claims,
            });
        }
    }
    out
}

/// The pod that took `h`'s place, Ready on another node: when it became
/// Ready, and where.
fn successor(sandbox: &Sandbox, h: &Held, since_rv: u64) -> Option<(i64, String)> {
    let view = sandbox.view();
    let ready = |p: &Value| -> Option<(i64, String)> {
        let node = pods::node_name(p)?;
        let uid = p["metadata"]["uid"].as_str()?;
        if node == h.node || uid == h.uid || p["metadata"]["namespace"] != h.namespace.as_str() {
            return None;
        }
        let c = pods::condition(p, "Ready").filter(|c| c["status"] == "True")?;
        let at = kube_conventions::time::parse_time(c["lastTransitionTime"].as_str()?)?;
        Some((at.as_second(), node.to_string()))
    };
    if h.stateful.is_some() {
        return view
            .get(Resource::Pods, &h.namespace, &h.name)
            .and_then(|p| ready(&p));
    }
    view.created_since(Resource::Pods, since_rv)?
        .iter()
        .filter(|p| pods::claim_names(p).any(|c| h.claims.iter().any(|h| h == c)))
        .find_map(|p| ready(p))
}

/// Follows the copy until every held pod has a successor or `HORIZON`
/// passed; `at` receives each one's Ready time and node.
async fn follow(
    sandbox: &Sandbox,
    held: &[Held],
    since_rv: u64,
    found: &mut [Option<(i64, String)>],
) {
    let end = tokio::time::Instant::now() + HORIZON;
    loop {
        for (h, f) in held.iter().zip(found.iter_mut()) {
            if f.is_none() {
                *f = successor(sandbox, h, since_rv);
            }
        }
        if found.iter().all(Option::is_some) || tokio::time::Instant::now() >= end {
            return;
        }
        tokio::time::sleep(STEP).await;
    }
}

/// Puts the out-of-service taint on the copy's node with the cordon that
/// `--node-shut-down` makes on the real one (crate::drain::cordon).
async fn take_out_of_service(client: &kube::Client, node: &str) -> anyhow::Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    let node = nodes.get(node).await?;
    let spec = CordonSpec {
        taints: &[out_of_service::taint()],
        labels: &[],
        marks: &[],
        surge: false,
        reason: None,
    };
    cordon::cordon(client, &spec, &node, false).await?;
    Ok(())
}

/// Both paths for every pod a dead node holds; empty when there is none.
/// `started` is the drain's start on the copy's clock (seconds), `since_rv`
/// the copy's resource version then.
pub(crate) async fn predict(
    sandbox: &Sandbox,
    client: &kube::Client,
    outcome: &DrainOutcome,
    started: i64,
    since_rv: u64,
) -> anyhow::Result<Vec<Recovery>> {
    let held = held(sandbox, outcome);
    if held.is_empty() {
        return Ok(Vec::new());
    }
    let mut soft = vec![None; held.len()];
    follow(sandbox, &held, since_rv, &mut soft).await;
    let down: std::collections::BTreeSet<&str> = held
        .iter()
        .zip(&soft)
        .filter(|(_, s)| s.is_none())
        .map(|(h, _)| h.node.as_str())
        .collect();
    let tainted = kube_conventions::time::now().as_second();
    for node in down {
        take_out_of_service(client, node).await?;
    }
    let mut hard = soft.clone();
    follow(sandbox, &held, since_rv, &mut hard).await;
    let ms = |from: i64, at: i64| u64::try_from(at - from).unwrap_or(0) * 1000;
    Ok(held
        .iter()
        .zip(soft.into_iter().zip(hard))
        .map(|(h, (s, hd))| Recovery {
            pod: format!("{}/{}", h.namespace, h.name),
            node: h.node.clone(),
            holds: match &h.stateful {
                Some(s) => format!("StatefulSet/{s}"),
                None => format!("claim {}", h.claims.join(", ")),
            },
            soft_ms: s.as_ref().map(|(at, _)| ms(started, *at)),
            hard_ms: match &s {
                Some(_) => None,
                None => hd.as_ref().map(|(at, _)| ms(tainted, *at)),
            },
            on: hd.or(s).map(|(_, n)| n),
        })
        .collect())
}
