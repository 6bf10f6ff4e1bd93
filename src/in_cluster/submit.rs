//! Submitting a run: the objects rendered from the flags, printed
//! (`--render`) or applied (server-side apply, field manager
//! `kubectl-maintain`), and `--cleanup` of the objects a run made. A refused
//! request says which verb on which resource.

use anyhow::Context;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind, TypeMeta};
use serde_json::{Value, json};

use super::rbac::{self, Needs};
use super::render::{self, Submission, Targets};
use super::{Run, argv, takes_value, validate};
use crate::cli::exit;
use crate::client;
use crate::drain::Options;
use crate::policy::plan::Plan;
use crate::vocabulary::api_error::api_error;

/// The image of this version: the release workflow builds it and records
/// its digest at build time (`KUBECTL_MAINTAIN_IMAGE_DIGEST`); a build
/// without one names the tag.
fn default_image() -> String {
    let repo = "ghcr.io/kubectl-maintain/kubectl-maintain";
    let tag = env!("CARGO_PKG_VERSION");
    match option_env!("KUBECTL_MAINTAIN_IMAGE_DIGEST") {
        Some(digest) => format!("{repo}:v{tag}@{digest}"),
        None => format!("{repo}:v{tag}"),
    }
}

/// What the cluster says about the run before it is submitted; `--render`
/// asks nothing and assumes the broadest.
#[derive(Debug, Clone, Default)]
struct Found {
    /// kured's DaemonSet exists (`--kured-daemonset`).
    kured: bool,
    /// `--surge`'s Deployments: those of the pods on the run's nodes.
    surge_deployments: Option<Vec<(String, String)>>,
    /// The cluster serves EvictionRequests (1.37), which `--eviction-api`
    /// auto then uses.
    eviction_requests: bool,
    /// The nodes the run takes now (named, or selected).
    nodes: Option<Vec<String>>,
}

impl Found {
    fn assumed() -> Found {
        Found {
            kured: true,
            surge_deployments: None,
            eviction_requests: true,
            nodes: None,
        }
    }

    async fn ask(client: &kube::Client, run: &Run<'_>) -> anyhow::Result<Found> {
        let nodes = run_nodes(client, run.drain()).await?;
        let surge_deployments = if run.drain().surge {
            Some(surge_deployments(client, &nodes).await?)
        } else {
            None
        };
        let eviction_requests = crate::client::served::served(client)
            .await
            .is_ok_and(|s| s.eviction_requests);
        Ok(Found {
            kured: kured_exists(client, run).await,
            surge_deployments,
            eviction_requests,
            nodes: Some(nodes),
        })
    }
}

/// The nodes the run takes now: named, or selected.
async fn run_nodes(
    client: &kube::Client,
    d: &crate::cli::DrainArgs,
) -> anyhow::Result<Vec<String>> {
    use k8s_openapi::api::core::v1::Node;
    use kube::api::ListParams;
    Ok(match &d.selector {
        Some(selector) => Api::<Node>::all(client.clone())
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| api_error("list", "nodes", None, e))?
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect(),
        None => d.nodes.clone(),
    })
}

/// The Deployments (namespace, name) whose pods are on the nodes the run
/// takes now, through their ReplicaSets: what `--surge` may scale.
async fn surge_deployments(
    client: &kube::Client,
    nodes: &[String],
) -> anyhow::Result<Vec<(String, String)>> {
    use k8s_openapi::api::apps::v1::ReplicaSet;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::ListParams;
    let mut replica_sets = std::collections::BTreeSet::new();
    for node in nodes {
        let on_node = ListParams::default().fields(&format!("spec.nodeName={node}"));
        let pods = Api::<Pod>::all(client.clone())
            .list(&on_node)
            .await
            .map_err(|e| api_error("list", "pods", None, e))?;
        for pod in pods.items {
            let ns = pod.metadata.namespace.unwrap_or_default();
            for owner in pod.metadata.owner_references.unwrap_or_default() {
                if owner.kind == "ReplicaSet" {
                    replica_sets.insert((ns.clone(), owner.name));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (ns, name) in replica_sets {
        let api: Api<ReplicaSet> = Api::namespaced(client.clone(), &ns);
        let Some(rs) = api
            .get_opt(&name)
            .await
            .map_err(|e| api_error("get", "replicasets.apps", Some(&ns), e))?
        else {
            continue;
        };
        for owner in rs.metadata.owner_references.unwrap_or_default() {
            if owner.kind == "Deployment" {
                out.push((ns.clone(), owner.name));
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// What the run asks of the API; kured's lock only where its DaemonSet
/// exists, `--surge` on the Deployments found.
fn needs(run: &Run<'_>, plan: &Plan, found: &Found) -> Needs {
    let d = run.drain();
    Needs {
        roll: matches!(run, Run::Roll(_)),
        deletes_pods: d.disable_eviction || d.deadline.is_some(),
        no_evictions: d.disable_eviction,
        eviction_requests: !d.disable_eviction
            && match d.eviction_api {
                crate::drain::evict::request::EvictionApi::Eviction => false,
                crate::drain::evict::request::EvictionApi::Request => true,
                crate::drain::evict::request::EvictionApi::Auto => found.eviction_requests,
            },
        surge: d.surge,
        surge_deployments: found.surge_deployments.clone(),
        node_conditions: d.node_conditions,
        waits_for_detach: !d.skip_wait_for_detach,
        namespace_selectors: plan.uses_namespace_selectors(),
        kured: match run {
            Run::Roll(r) if found.kured => Some(kured_of(r)),
            _ => None,
        },
        lock_namespace: match run {
            Run::Roll(r) => Some(r.lock_namespace.clone()),
            Run::Drain(_) => None,
        },
        lock_nodes: match &d.selector {
            None => Some(d.nodes.clone()),
            Some(_) => found.nodes.clone(),
        },
    }
}

/// `--kured-daemonset` as (namespace, name); kube-system when no namespace
/// is given.
fn kured_of(r: &crate::cli::RollArgs) -> (String, String) {
    match r.kured_daemonset.split_once('/') {
        Some((ns, name)) => (ns.to_string(), name.to_string()),
        None => ("kube-system".to_string(), r.kured_daemonset.clone()),
    }
}

/// Whether kured's DaemonSet is there to hold its lock; `--render` asks
/// nothing and counts it in.
async fn kured_exists(client: &kube::Client, run: &Run<'_>) -> bool {
    let Run::Roll(r) = run else {
        return false;
    };
    let (ns, name) = kured_of(r);
    let api: Api<k8s_openapi::api::apps::v1::DaemonSet> = Api::namespaced(client.clone(), &ns);
    !matches!(api.get_opt(&name).await, Ok(None))
}

/// The submission for these flags, as validated into `plan` and `options`;
/// `typed` is the command line after the program's name.
fn submission(
    run: &Run<'_>,
    (plan, options): &(Plan, Options),
    typed: &[String],
    found: &Found,
) -> anyhow::Result<Submission> {
    let d = run.drain();
    let args = argv::for_job(typed, takes_value(run.verb()));
    let id = kube_conventions::fnv1a(args.join("\0").as_bytes());
    let job = argv::without_secrets(args, |flag, value| {
        if flag == "--exec" {
            crate::roll::Exec::from_flag(value).map(|e| e.command)
        } else {
            crate::outbound::resolve(flag, value)
        }
    })
    .map_err(crate::cli::exit::Exit::usage)?;
    let plan_text = d
        .plan
        .as_ref()
        .map(|p| crate::files::read_text(p).with_context(|| format!("reading {}", p.display())))
        .transpose()?;
    let name = format!("kubectl-maintain-{}-{:08x}", run.verb(), id as u32);
    let namespace = d
        .cluster
        .namespace
        .clone()
        .unwrap_or_else(|| "kube-system".into());
    let mut rules = rbac::rules(&needs(run, plan, found));
    rules.push(rbac::own_job(&namespace, &name));
    rules.push(rbac::own_cluster_role(&name));
    Ok(Submission {
        name,
        namespace,
        image: d.image.clone().unwrap_or_else(default_image),
        args: job.args,
        secrets: job.secrets,
        plan: plan_text,
        rules,
        // --timeout bounds each node, as kubectl's does: it bounds the
        // whole Job only when the Job drains one named node.
        deadline_seconds: options
            .timeout
            .filter(|_| matches!(run, Run::Drain(_)) && d.selector.is_none() && d.nodes.len() == 1)
            .map(|t| t.as_secs().max(1)),
        taints: options
            .taints
            .iter()
            .map(|t| (t.key.clone(), t.effect.clone()))
            .collect(),
        targets: match &d.selector {
            Some(s) => Targets::Selector(s.clone()),
            None => Targets::Named(d.nodes.clone()),
        },
        submitter: None,
    })
}

/// `--in-cluster` (with `--render`, `--cleanup`): the exit code.
pub(crate) async fn submit(run: Run<'_>) -> anyhow::Result<u8> {
    let validated = validate(&run)?;
    let typed: Vec<String> = std::env::args().skip(1).collect();
    let d = run.drain();
    if d.render {
        let s = submission(&run, &validated, &typed, &Found::assumed())?;
        crate::out!("{}", render::yaml(&render::objects(&s.for_review()))?);
        return Ok(exit::OK);
    }
    let clients = client::connect(&d.cluster).await?;
    let client = &clients.main;
    if d.cleanup {
        // Every object a run of these flags may have made.
        return cleanup(
            client,
            &submission(&run, &validated, &typed, &Found::assumed())?,
        )
        .await;
    }
    let found = Found::ask(client, &run).await?;
    let mut s = submission(&run, &validated, &typed, &found)?;
    s.submitter = whoami(client).await;
    apply_owned(client, &s).await?;
    record(client, &s).await;
    crate::errln!(
        "job.batch/{name} submitted in namespace {ns}{by}: it runs `kubectl-maintain {args}` as serviceaccount {ns}/{name}.\nFollow it:  kubectl maintain status -w -n {ns} {name}\n            kubectl maintain logs -f -n {ns} {name}\nStop it:    kubectl maintain abort -n {ns} {name}  (after the node in progress)\nAfterwards: a run that succeeds deletes its ClusterRole and bindings itself, and the rest goes with the Job a day after it ends;\n            after a failure, kubectl maintain {verb} ... --in-cluster --cleanup  (the same flags) removes what it left",
        name = s.name,
        ns = s.namespace,
        by = s
            .submitter
            .as_deref()
            .map(|u| format!(" by {u}"))
            .unwrap_or_default(),
        args = s.args.join(" "),
        verb = run.verb(),
    );
    Ok(exit::OK)
}

/// The object's kind as the API serves it.
fn api_for(client: &kube::Client, object: &Value) -> (Api<DynamicObject>, String) {
    let meta = TypeMeta {
        api_version: object["apiVersion"].as_str().unwrap_or_default().into(),
        kind: object["kind"].as_str().unwrap_or_default().into(),
    };
    let gvk = GroupVersionKind::try_from(&meta).expect("a rendered object's apiVersion");
    let ar = ApiResource::from_gvk(&gvk);
    let resource = if gvk.group.is_empty() {
        ar.plural.clone()
    } else {
        format!("{}.{}", ar.plural, gvk.group)
    };
    let api = match object["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    (api, resource)
}

/// Applies the object; its uid.
async fn apply(client: &kube::Client, object: &Value) -> anyhow::Result<String> {
    let (api, resource) = api_for(client, object);
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let params = PatchParams::apply("kubectl-maintain").force();
    let applied = api
        .patch(name, &params, &Patch::Apply(object))
        .await
        .map_err(|e| {
            api_error(
                "patch",
                &resource,
                object["metadata"]["namespace"].as_str(),
                e,
            )
        })?;
    Ok(applied.metadata.uid.unwrap_or_default())
}

/// Applies the objects, then hands each to an owner, so that nothing
/// outlives the run: what is in the Job's namespace to the Job (the
/// garbage collector removes it with the Job, after
/// `ttlSecondsAfterFinished`), the rest (the ClusterRoleBinding, Roles in
/// other namespaces) to the ClusterRole, which the run deletes when it
/// ends (crate::in_cluster::retire). A namespaced owner may own only what
/// is in its namespace; a cluster-scoped one anything
/// (pkg/controller/garbagecollector).
async fn apply_owned(client: &kube::Client, s: &Submission) -> anyhow::Result<()> {
    let owner = |kind: &str, api_version: &str, uid: &str| json!([{"apiVersion": api_version, "kind": kind, "name": s.name, "uid": uid}]);
    let in_job_namespace =
        |o: &Value| o["metadata"]["namespace"].as_str() == Some(s.namespace.as_str());
    let (roles, rest): (Vec<Value>, Vec<Value>) = render::objects(s)
        .into_iter()
        .partition(|o| o["kind"] == "ClusterRole");
    // The ClusterRole first: what it owns is applied owned at once.
    let mut role_uid = String::new();
    for role in &roles {
        role_uid = apply(client, role).await?;
    }
    let mut job_uid = String::new();
    for mut object in rest.iter().cloned() {
        if !in_job_namespace(&object) {
            object["metadata"]["ownerReferences"] =
                owner("ClusterRole", "rbac.authorization.k8s.io/v1", &role_uid);
        }
        let uid = apply(client, &object).await?;
        if object["kind"] == "Job" {
            job_uid = uid;
        }
    }
    // What is in the Job's namespace is applied before the Job, whose pod
    // needs it, and handed to the Job once it has a uid.
    for mut object in rest {
        if in_job_namespace(&object) && object["kind"] != "Job" {
            object["metadata"]["ownerReferences"] = owner("Job", "batch/v1", &job_uid);
            apply(client, &object).await?;
        }
    }
    Ok(())
}

/// Who the API server says the submitter is (SelfSubjectReview); none when
/// it cannot say (an older server, RBAC).
pub(crate) async fn whoami(client: &kube::Client) -> Option<String> {
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let req = http::Request::post("/apis/authentication.k8s.io/v1/selfsubjectreviews")
        .header("Content-Type", "application/json")
        .body(serde_json::to_vec(&body).ok()?)
        .ok()?;
    let review: Value = client.request(req).await.ok()?;
    review["status"]["userInfo"]["username"]
        .as_str()
        .map(str::to_string)
}

/// An Event on the Job: who submitted it, with which command.
async fn record(client: &kube::Client, s: &Submission) {
    let events: Api<k8s_openapi::api::core::v1::Event> =
        Api::namespaced(client.clone(), &s.namespace);
    let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(kube_conventions::time::now());
    let event = json!({
        "metadata": {"generateName": format!("{}.", s.name), "namespace": s.namespace},
        "involvedObject": {"apiVersion": "batch/v1", "kind": "Job", "name": s.name, "namespace": s.namespace},
        "reason": "Submitted",
        "type": "Normal",
        "message": format!(
            "submitted by {}: kubectl-maintain {}",
            s.submitter.as_deref().unwrap_or("an unknown user"),
            s.args.join(" ")
        ),
        "source": {"component": "kubectl-maintain"},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    });
    if let Ok(event) = serde_json::from_value(event) {
        // A record only: the run goes on without it.
        let _ = events.create(&PostParams::default(), &event).await;
    }
}

/// `--cleanup`: the ServiceAccount, ClusterRole, binding and ConfigMap of
/// this command's run; the Job goes by its ttlSecondsAfterFinished.
async fn cleanup(client: &kube::Client, s: &Submission) -> anyhow::Result<u8> {
    for object in render::objects(s).iter().filter(|o| o["kind"] != "Job") {
        let (api, resource) = api_for(client, object);
        match api.delete(&s.name, &DeleteParams::default()).await {
            Ok(_) => crate::errln!("{resource}/{} deleted", s.name),
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => {
                return Err(api_error(
                    "delete",
                    &resource,
                    object["metadata"]["namespace"].as_str(),
                    e,
                )
                .into());
            }
        }
    }
    Ok(exit::OK)
}
