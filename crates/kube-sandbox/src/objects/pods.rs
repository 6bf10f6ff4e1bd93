//! Reading pods (and owners) as JSON: the few facts the simulation needs.

use crate::objects::path::At;
use serde_json::{Value, json};

/// A pod's controller, from its ownerReferences.
pub struct OwnerRef {
    /// The owner's kind (`ReplicaSet`, `StatefulSet`...).
    pub kind: String,
    /// The owner's name, in the pod's namespace.
    pub name: String,
    /// The owner's uid.
    pub uid: String,
}

/// The ownerReference with `controller: true`.
pub fn controller_of(obj: &Value) -> Option<OwnerRef> {
    obj.at("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|o| o["controller"].as_bool() == Some(true))
        .map(|o| OwnerRef {
            kind: o["kind"].as_str().unwrap_or_default().to_string(),
            name: o["name"].as_str().unwrap_or_default().to_string(),
            uid: o["uid"].as_str().unwrap_or_default().to_string(),
        })
}

pub(crate) fn owner_reference(owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": true,
        "blockOwnerDeletion": block,
    })
}

/// The pod's status.phase (Pending when unset).
pub fn phase(pod: &Value) -> &str {
    pod.at("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Succeeded or Failed.
pub fn is_terminal(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// Being deleted: it has a deletionTimestamp.
pub fn is_terminating(pod: &Value) -> bool {
    pod.at("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// Its Ready condition is True.
pub fn is_ready(pod: &Value) -> bool {
    condition_true(pod, "Ready")
}

/// A status condition of this type.
pub fn condition<'a>(obj: &'a Value, kind: &str) -> Option<&'a Value> {
    obj.at("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

/// Whether an object's status condition of this type is True.
pub fn condition_true(obj: &Value, kind: &str) -> bool {
    obj.at("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

/// `namespace/name`, as kubectl and the logs name an object.
pub fn key(obj: &Value) -> String {
    format!(
        "{}/{}",
        obj["metadata"]["namespace"].as_str().unwrap_or_default(),
        obj["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// The PersistentVolumeClaims a pod's volumes name.
pub fn claim_names(pod: &Value) -> impl Iterator<Item = &str> {
    pod.at("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| {
            v.at("/persistentVolumeClaim/claimName")
                .and_then(Value::as_str)
        })
}

/// Does the pod use PersistentVolumeClaims (and so maybe attached volumes)?
pub(crate) fn has_claims(pod: &Value) -> bool {
    claim_names(pod).next().is_some()
}

/// The node it is bound to, if any.
pub fn node_name(pod: &Value) -> Option<&str> {
    pod.at("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// One of an object's annotations.
pub fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.at("/metadata/annotations")?.get(key)?.as_str()
}

/// Sets or replaces a status condition, keeping its transition time when
/// the status does not change.
pub(crate) fn set_condition(
    obj: &mut Value,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    let st = obj
        .as_object_mut()
        .expect("object")
        .entry("status")
        .or_insert_with(|| json!({}));
    let conds = st
        .as_object_mut()
        .expect("status object")
        .entry("conditions")
        .or_insert_with(|| json!([]));
    let Some(list) = conds.as_array_mut() else {
        return;
    };
    let new = json!({
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastProbeTime": null,
        "lastTransitionTime": now,
    });
    let mut new = new;
    if reason.is_empty() {
        new.as_object_mut().expect("object").remove("reason");
    }
    if message.is_empty() {
        new.as_object_mut().expect("object").remove("message");
    }
    match list.iter_mut().find(|c| c["type"] == kind) {
        Some(c) if c["status"] == status => {
            new["lastTransitionTime"] = c["lastTransitionTime"].clone();
            *c = new;
        }
        Some(c) => *c = new,
        None => list.push(new),
    }
}

/// Does the pod carry required pod anti-affinity terms?
pub(crate) fn has_required_anti_affinity(pod: &Value) -> bool {
    pod.at("/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty())
}

/// Resources in thousandths (`cpu`, `memory`, extended resources), as
/// kube-scheduler adds a pod up (k8s.io/component-helpers/resource
/// PodRequests): the app containers and restartable init containers
/// (sidecars) together, or the largest init container with the sidecars
/// started before it if that is more, plus the pod's overhead.
pub type Requests = std::collections::BTreeMap<ResourceName, i64>;

/// A resource's name in `Requests`; the scheduler's own resources without
/// their string, as it compares them for each node it looks at (comparing
/// strings was a twentieth of the simulation's samples on 5,000 nodes).
/// Ordered as kube-scheduler checks them (noderesources/fit.go
/// `fitsRequest`): cpu, memory, ephemeral storage, then extended resources.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ResourceName {
    /// `cpu`.
    Cpu,
    /// `memory`.
    Memory,
    /// `ephemeral-storage`.
    EphemeralStorage,
    /// `pods`, a node's room for pods.
    Pods,
    /// Any other: an extended resource, `hugepages-2Mi`.
    Other(Box<str>),
}

impl From<&str> for ResourceName {
    fn from(name: &str) -> Self {
        match name {
            "cpu" => ResourceName::Cpu,
            "memory" => ResourceName::Memory,
            "ephemeral-storage" => ResourceName::EphemeralStorage,
            "pods" => ResourceName::Pods,
            other => ResourceName::Other(other.into()),
        }
    }
}

impl std::fmt::Display for ResourceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ResourceName::Cpu => "cpu",
            ResourceName::Memory => "memory",
            ResourceName::EphemeralStorage => "ephemeral-storage",
            ResourceName::Pods => "pods",
            ResourceName::Other(name) => name,
        })
    }
}

/// Whether two versions of a pod request the same: what `requests` reads
/// is equal.
pub(crate) fn same_requests(a: &Value, b: &Value) -> bool {
    ["containers", "initContainers", "overhead"]
        .iter()
        .all(|f| a.get("spec").and_then(|s| s.get(f)) == b.get("spec").and_then(|s| s.get(f)))
}

/// What the pod requests, as the scheduler counts it.
pub fn requests(pod: &Value) -> Requests {
    fn of(container: &Value) -> Requests {
        container
            .at("/resources/requests")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| {
                Some((
                    ResourceName::from(k.as_str()),
                    kube_conventions::quantity::milli_of(v)?,
                ))
            })
            .collect()
    }
    fn add(into: &mut Requests, more: &Requests) {
        for (k, v) in more {
            *into.entry(k.clone()).or_default() += v;
        }
    }
    let list = |field: &str| {
        pod.get("spec")
            .and_then(|s| s.get(field))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    };
    let mut total = Requests::new();
    for c in list("containers") {
        add(&mut total, &of(c));
    }
    let mut sidecars = Requests::new();
    let mut init_peak = Requests::new();
    for c in list("initContainers") {
        let r = of(c);
        if c["restartPolicy"] == "Always" {
            add(&mut sidecars, &r);
            add(&mut total, &r);
        } else {
            let mut during = sidecars.clone();
            add(&mut during, &r);
            for (k, v) in during {
                let peak = init_peak.entry(k).or_default();
                *peak = (*peak).max(v);
            }
        }
    }
    for (k, v) in init_peak {
        let t = total.entry(k).or_default();
        *t = (*t).max(v);
    }
    if let Some(overhead) = pod.at("/spec/overhead").and_then(Value::as_object) {
        for (k, v) in overhead {
            if let Some(m) = kube_conventions::quantity::milli_of(v) {
                *total.entry(ResourceName::from(k.as_str())).or_default() += m;
            }
        }
    }
    total
}

/// What the scheduler and the disruption controller read of every pod when
/// they scan many: kept by the store for each pod, so that a scan does not
/// parse 150,000 pods (crate::doc).
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    pub(crate) namespace: Box<str>,
    /// Sorted by key.
    labels: Box<[(Box<str>, Box<str>)]>,
    pub(crate) node: Option<Box<str>>,
    pub(crate) terminating: bool,
    pub(crate) terminal: bool,
    pub(crate) ready: bool,
    /// Past Pending: its kubelet started it.
    pub(crate) started: bool,
    /// Its volumes name PersistentVolumeClaims (it may have volumes attached).
    pub(crate) claims: bool,
    /// The controller's kind and name.
    pub(crate) controller: Option<(Box<str>, Box<str>)>,
}

impl Facts {
    pub(crate) fn of(pod: &Value) -> Self {
        let mut labels: Vec<(Box<str>, Box<str>)> = pod
            .at("/metadata/labels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str().into(), v.as_str()?.into())))
            .collect();
        labels.sort();
        Facts {
            namespace: pod["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .into(),
            labels: labels.into(),
            node: node_name(pod).map(Into::into),
            terminating: is_terminating(pod),
            terminal: is_terminal(pod),
            ready: is_ready(pod),
            started: !matches!(phase(pod), "" | "Pending"),
            claims: has_claims(pod),
            controller: controller_of(pod).map(|o| (o.kind.into(), o.name.into())),
        }
    }

    pub(crate) fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.labels[i].1)
    }

    pub(crate) fn matches(&self, selector: &kube_conventions::selector::Selector) -> bool {
        selector.matches_with(|k| self.label(k))
    }
}
/// Marks a pod's containers and the pod Ready or not, as the kubelet's
/// status manager writes them (ContainersReady and Ready together).
pub(crate) fn set_ready(p: &mut Value, ready: bool, now: &str) {
    for c in p["status"]["containerStatuses"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        c["ready"] = json!(ready);
    }
    let status = if ready { "True" } else { "False" };
    for c in ["ContainersReady", "Ready"] {
        set_condition(p, c, status, "", "", now);
    }
}
