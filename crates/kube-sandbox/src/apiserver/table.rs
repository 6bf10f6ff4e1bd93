//! `meta.k8s.io/v1` Table responses: the columns `kubectl get` prints,
//! following kubernetes pkg/printers/internalversion/printers.go.

use crate::objects::path::At;
use serde_json::{Value, json};

use crate::apiserver::query::IncludeObject;
use crate::clock::{human_duration, seconds_since};
use crate::objects::pods;
use crate::resources::Resource;

#[derive(Clone, Copy)]
struct Col {
    name: &'static str,
    kind: &'static str,
    priority: u8,
}

const fn col(name: &'static str, kind: &'static str, priority: u8) -> Col {
    Col {
        name,
        kind,
        priority,
    }
}

/// The wide columns (`-o wide`) of the kinds with a pod template, after
/// their own (kubernetes pkg/printers/internalversion/printers.go): the
/// template's containers and images, and the selector but for StatefulSets.
fn template_columns(res: Resource) -> &'static [Col] {
    const WITH_SELECTOR: &[Col] = &[
        col("Containers", "string", 1),
        col("Images", "string", 1),
        col("Selector", "string", 1),
    ];
    match res {
        Resource::Deployments
        | Resource::ReplicaSets
        | Resource::ReplicationControllers
        | Resource::DaemonSets
        | Resource::Jobs => WITH_SELECTOR,
        Resource::StatefulSets => &WITH_SELECTOR[..2],
        _ => &[],
    }
}

fn template_cells(res: Resource, o: &Value) -> Vec<Value> {
    let wanted = template_columns(res).len();
    if wanted == 0 {
        return Vec::new();
    }
    let containers = o
        .at("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let joined = |field: &str| {
        containers
            .iter()
            .filter_map(|c| c[field].as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    let selector = o
        .at("/spec/selector")
        .map(super::scale::selector_string)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "<none>".into());
    let mut out = vec![
        json!(joined("name")),
        json!(joined("image")),
        json!(selector),
    ];
    out.truncate(wanted);
    out
}

fn columns(res: Resource) -> Vec<Col> {
    let mut cols = own_columns(res);
    cols.extend_from_slice(template_columns(res));
    cols
}

fn cells(res: Resource, o: &Value) -> Vec<Value> {
    let mut cells = own_cells(res, o);
    cells.extend(template_cells(res, o));
    cells
}

#[allow(clippy::too_many_lines)] // long on purpose: a table of data: kubectl's columns per resource
fn own_columns(res: Resource) -> Vec<Col> {
    match res {
        Resource::Nodes => vec![
            col("Name", "string", 0),
            col("Status", "string", 0),
            col("Roles", "string", 0),
            col("Age", "string", 0),
            col("Version", "string", 0),
            col("Internal-IP", "string", 1),
            col("External-IP", "string", 1),
            col("OS-Image", "string", 1),
            col("Kernel-Version", "string", 1),
            col("Container-Runtime", "string", 1),
        ],
        Resource::Pods => vec![
            col("Name", "string", 0),
            col("Ready", "string", 0),
            col("Status", "string", 0),
            col("Restarts", "string", 0),
            col("Age", "string", 0),
            col("IP", "string", 1),
            col("Node", "string", 1),
            col("Nominated Node", "string", 1),
            col("Readiness Gates", "string", 1),
        ],
        Resource::PodDisruptionBudgets => vec![
            col("Name", "string", 0),
            col("Min Available", "string", 0),
            col("Max Unavailable", "string", 0),
            col("Allowed Disruptions", "integer", 0),
            col("Age", "string", 0),
        ],
        Resource::Deployments => vec![
            col("Name", "string", 0),
            col("Ready", "string", 0),
            col("Up-to-date", "integer", 0),
            col("Available", "integer", 0),
            col("Age", "string", 0),
        ],
        Resource::ReplicaSets | Resource::ReplicationControllers => vec![
            col("Name", "string", 0),
            col("Desired", "integer", 0),
            col("Current", "integer", 0),
            col("Ready", "integer", 0),
            col("Age", "string", 0),
        ],
        Resource::StatefulSets => vec![
            col("Name", "string", 0),
            col("Ready", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::DaemonSets => vec![
            col("Name", "string", 0),
            col("Desired", "integer", 0),
            col("Current", "integer", 0),
            col("Ready", "integer", 0),
            col("Up-to-date", "integer", 0),
            col("Available", "integer", 0),
            col("Node Selector", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::Jobs => vec![
            col("Name", "string", 0),
            col("Status", "string", 0),
            col("Completions", "string", 0),
            col("Duration", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::Namespaces => vec![
            col("Name", "string", 0),
            col("Status", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::VirtualMachineInstances => vec![
            col("Name", "string", 0),
            col("Age", "string", 0),
            col("Phase", "string", 0),
            col("IP", "string", 0),
            col("NodeName", "string", 0),
        ],
        Resource::PersistentVolumes => vec![
            col("Name", "string", 0),
            col("Capacity", "string", 0),
            col("Access Modes", "string", 0),
            col("Reclaim Policy", "string", 0),
            col("Status", "string", 0),
            col("Claim", "string", 0),
            col("StorageClass", "string", 0),
            col("Reason", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::PersistentVolumeClaims => vec![
            col("Name", "string", 0),
            col("Status", "string", 0),
            col("Volume", "string", 0),
            col("Capacity", "string", 0),
            col("Access Modes", "string", 0),
            col("StorageClass", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::Leases => vec![
            col("Name", "string", 0),
            col("Holder", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::EvictionRequests => vec![
            col("Name", "string", 0),
            col("Target", "string", 0),
            col("Intent", "string", 0),
            col("Evicted", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::Evictions => vec![
            col("Name", "string", 0),
            col("Target", "string", 0),
            col("Active", "string", 0),
            col("Evicted", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::PodGroups => vec![col("Name", "string", 0), col("Age", "string", 0)],
        Resource::ServiceAccounts => vec![
            col("Name", "string", 0),
            col("Secrets", "integer", 0),
            col("Age", "string", 0),
        ],
        Resource::ConfigMaps => vec![
            col("Name", "string", 0),
            col("Data", "integer", 0),
            col("Age", "string", 0),
        ],
        Resource::Secrets => vec![
            col("Name", "string", 0),
            col("Type", "string", 0),
            col("Data", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::Roles | Resource::ClusterRoles => {
            vec![col("Name", "string", 0), col("Created At", "date", 0)]
        }
        Resource::RoleBindings | Resource::ClusterRoleBindings => vec![
            col("Name", "string", 0),
            col("Role", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::VolumeAttachments => vec![
            col("Name", "string", 0),
            col("Attacher", "string", 0),
            col("PV", "string", 0),
            col("Node", "string", 0),
            col("Attached", "boolean", 0),
            col("Age", "string", 0),
        ],
        Resource::StorageClasses => vec![
            col("Name", "string", 0),
            col("Provisioner", "string", 0),
            col("ReclaimPolicy", "string", 0),
            col("VolumeBindingMode", "string", 0),
            col("AllowVolumeExpansion", "string", 0),
            col("Age", "string", 0),
        ],
        Resource::Events => vec![
            col("Last Seen", "string", 0),
            col("Type", "string", 0),
            col("Reason", "string", 0),
            col("Object", "string", 0),
            col("Message", "string", 0),
        ],
    }
}

/// `RWO,ROX`: kubectl's short access modes.
fn access_modes(modes: Option<&Value>) -> String {
    modes
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|m| match m {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn age(obj: &Value) -> String {
    obj.at("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(seconds_since)
        .map_or_else(|| "<unknown>".to_string(), human_duration)
}

fn int(obj: &Value, ptr: &str) -> i64 {
    obj.at(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn str_or<'a>(obj: &'a Value, ptr: &str, default: &'a str) -> &'a str {
    obj.at(ptr)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(default)
}

/// kube-apiserver's node printer (pkg/printers/internalversion/printers.go,
/// printNode): `Ready` when the Ready condition is True, `NotReady` when it
/// is anything else (False or Unknown), `Unknown` only without one.
fn node_cells(n: &Value) -> Vec<Value> {
    let ready = n
        .at("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .map_or("Unknown", |c| match c["status"].as_str() {
            Some("True") => "Ready",
            _ => "NotReady",
        });
    let mut status = ready.to_string();
    if n.at("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = n
        .at("/metadata/labels")
        .and_then(Value::as_object)
        .map(|l| {
            l.iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("node-role.kubernetes.io/")
                        .map(str::to_string)
                        .or_else(|| {
                            (k == "kubernetes.io/role")
                                .then(|| v.as_str().unwrap_or_default().to_string())
                        })
                })
                .filter(|r| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    let addr = |kind: &str| {
        n.at("/status/addresses")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().find(|x| x["type"] == kind))
            .and_then(|x| x["address"].as_str())
            .unwrap_or("<none>")
            .to_string()
    };
    vec![
        json!(n["metadata"]["name"]),
        json!(status),
        json!(if roles.is_empty() {
            "<none>".to_string()
        } else {
            roles.join(",")
        }),
        json!(age(n)),
        json!(str_or(n, "/status/nodeInfo/kubeletVersion", "")),
        json!(addr("InternalIP")),
        json!(addr("ExternalIP")),
        json!(str_or(n, "/status/nodeInfo/osImage", "<unknown>")),
        json!(str_or(n, "/status/nodeInfo/kernelVersion", "<unknown>")),
        json!(str_or(
            n,
            "/status/nodeInfo/containerRuntimeVersion",
            "<unknown>"
        )),
    ]
}

fn pod_status_reason(p: &Value) -> String {
    let mut reason = str_or(p, "/status/reason", str_or(p, "/status/phase", "Pending")).to_string();
    let statuses = p.at("/status/containerStatuses").and_then(Value::as_array);
    let mut restarts = 0;
    for cs in statuses.into_iter().flatten().rev() {
        restarts += cs["restartCount"].as_i64().unwrap_or(0);
        if let Some(w) = cs.at("/state/waiting/reason").and_then(Value::as_str) {
            reason = w.to_string();
        } else if let Some(t) = cs.at("/state/terminated") {
            reason = t["reason"].as_str().map_or_else(
                || format!("ExitCode:{}", t["exitCode"].as_i64().unwrap_or(0)),
                str::to_string,
            );
        }
    }
    let _ = restarts;
    if pods::is_terminating(p) {
        if p.at("/status/reason").and_then(Value::as_str) == Some("NodeLost") {
            return "Unknown".into();
        }
        return "Terminating".into();
    }
    reason
}

fn pod_cells(p: &Value) -> Vec<Value> {
    let total = p
        .at("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let statuses = p.at("/status/containerStatuses").and_then(Value::as_array);
    let ready = statuses
        .into_iter()
        .flatten()
        .filter(|c| c["ready"] == true)
        .count();
    let restarts: i64 = statuses
        .into_iter()
        .flatten()
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum();
    vec![
        json!(p["metadata"]["name"]),
        json!(format!("{ready}/{total}")),
        json!(pod_status_reason(p)),
        json!(restarts.to_string()),
        json!(age(p)),
        json!(str_or(p, "/status/podIP", "<none>")),
        json!(str_or(p, "/spec/nodeName", "<none>")),
        json!(str_or(p, "/status/nominatedNodeName", "<none>")),
        json!("<none>"),
    ]
}

fn int_or_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => "N/A".into(),
    }
}

#[allow(clippy::too_many_lines)] // long on purpose: a table of data: each resource's cells, in its columns' order
fn own_cells(res: Resource, o: &Value) -> Vec<Value> {
    let name = json!(o["metadata"]["name"]);
    match res {
        Resource::Nodes => node_cells(o),
        Resource::Pods => pod_cells(o),
        Resource::PodDisruptionBudgets => vec![
            name,
            json!(int_or_string(o.at("/spec/minAvailable"))),
            json!(int_or_string(o.at("/spec/maxUnavailable"))),
            json!(int(o, "/status/disruptionsAllowed")),
            json!(age(o)),
        ],
        Resource::Deployments => vec![
            name,
            json!(format!(
                "{}/{}",
                int(o, "/status/readyReplicas"),
                o.at("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)
            )),
            json!(int(o, "/status/updatedReplicas")),
            json!(int(o, "/status/availableReplicas")),
            json!(age(o)),
        ],
        Resource::ReplicaSets | Resource::ReplicationControllers => vec![
            name,
            json!(o.at("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)),
            json!(int(o, "/status/replicas")),
            json!(int(o, "/status/readyReplicas")),
            json!(age(o)),
        ],
        Resource::StatefulSets => vec![
            name,
            json!(format!(
                "{}/{}",
                int(o, "/status/readyReplicas"),
                o.at("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)
            )),
            json!(age(o)),
        ],
        Resource::DaemonSets => {
            let sel = o
                .at("/spec/template/spec/nodeSelector")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "<none>".into());
            vec![
                name,
                json!(int(o, "/status/desiredNumberScheduled")),
                json!(int(o, "/status/currentNumberScheduled")),
                json!(int(o, "/status/numberReady")),
                json!(int(o, "/status/updatedNumberScheduled")),
                json!(int(o, "/status/numberAvailable")),
                json!(sel),
                json!(age(o)),
            ]
        }
        Resource::Jobs => {
            let completions = o
                .at("/spec/completions")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            let succeeded = int(o, "/status/succeeded");
            let status = if pods::condition_true(o, "Complete") {
                "Complete"
            } else if pods::condition_true(o, "Failed") {
                "Failed"
            } else {
                "Running"
            };
            let duration = o
                .at("/status/startTime")
                .and_then(Value::as_str)
                .and_then(seconds_since)
                .map_or_else(String::new, human_duration);
            vec![
                name,
                json!(status),
                json!(format!("{succeeded}/{completions}")),
                json!(duration),
                json!(age(o)),
            ]
        }
        Resource::Namespaces => vec![
            name,
            json!(str_or(o, "/status/phase", "Active")),
            json!(age(o)),
        ],
        Resource::VirtualMachineInstances => vec![
            name,
            json!(age(o)),
            json!(str_or(o, "/status/phase", "")),
            json!(str_or(o, "/status/interfaces/0/ipAddress", "")),
            json!(str_or(o, "/status/nodeName", "")),
        ],
        Resource::PersistentVolumes => {
            let claim = match (
                o.at("/spec/claimRef/namespace").and_then(Value::as_str),
                o.at("/spec/claimRef/name").and_then(Value::as_str),
            ) {
                (Some(ns), Some(n)) => format!("{ns}/{n}"),
                _ => String::new(),
            };
            vec![
                name,
                json!(str_or(o, "/spec/capacity/storage", "")),
                json!(access_modes(o.at("/spec/accessModes"))),
                json!(str_or(o, "/spec/persistentVolumeReclaimPolicy", "Retain")),
                json!(str_or(o, "/status/phase", "Available")),
                json!(claim),
                json!(str_or(o, "/spec/storageClassName", "")),
                json!(str_or(o, "/status/reason", "")),
                json!(age(o)),
            ]
        }
        Resource::PersistentVolumeClaims => vec![
            name,
            json!(str_or(o, "/status/phase", "Pending")),
            json!(str_or(o, "/spec/volumeName", "")),
            json!(str_or(o, "/status/capacity/storage", "")),
            json!(access_modes(o.at("/status/accessModes"))),
            json!(str_or(o, "/spec/storageClassName", "")),
            json!(age(o)),
        ],
        Resource::Leases => vec![
            name,
            json!(str_or(o, "/spec/holderIdentity", "")),
            json!(age(o)),
        ],
        Resource::EvictionRequests => vec![
            name,
            json!(str_or(o, "/spec/target/pod/name", "")),
            json!(str_or(o, "/spec/intent", "")),
            json!(condition_status(o, "TargetEvicted")),
            json!(age(o)),
        ],
        Resource::Evictions => {
            let active = o
                .at("/status/targetResponders")
                .and_then(Value::as_array)
                .and_then(|rs| rs.iter().find(|r| r["state"] == "Active"))
                .and_then(|r| r["name"].as_str())
                .unwrap_or("<none>");
            vec![
                name,
                json!(str_or(o, "/spec/target/pod/name", "")),
                json!(active),
                json!(condition_status(o, "TargetEvicted")),
                json!(age(o)),
            ]
        }
        Resource::PodGroups => vec![name, json!(age(o))],
        Resource::ServiceAccounts => vec![
            name,
            json!(
                o.at("/secrets")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len)
            ),
            json!(age(o)),
        ],
        Resource::ConfigMaps => vec![
            name,
            json!(
                o.at("/data")
                    .and_then(Value::as_object)
                    .map_or(0, serde_json::Map::len)
                    + o.at("/binaryData")
                        .and_then(Value::as_object)
                        .map_or(0, serde_json::Map::len)
            ),
            json!(age(o)),
        ],
        // kubectl's printer (pkg/printers/internalversion printSecret):
        // the number of keys, never a value.
        Resource::Secrets => vec![
            name,
            json!(str_or(o, "/type", "")),
            json!(
                o.at("/data")
                    .and_then(Value::as_object)
                    .map_or(0, serde_json::Map::len)
                    .to_string()
            ),
            json!(age(o)),
        ],
        Resource::Roles | Resource::ClusterRoles => {
            vec![name, json!(str_or(o, "/metadata/creationTimestamp", ""))]
        }
        Resource::RoleBindings | Resource::ClusterRoleBindings => vec![
            name,
            json!(format!(
                "{}/{}",
                str_or(o, "/roleRef/kind", ""),
                str_or(o, "/roleRef/name", "")
            )),
            json!(age(o)),
        ],
        Resource::VolumeAttachments => vec![
            name,
            json!(str_or(o, "/spec/attacher", "")),
            json!(str_or(o, "/spec/source/persistentVolumeName", "")),
            json!(str_or(o, "/spec/nodeName", "")),
            json!(
                o.at("/status/attached")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ),
            json!(age(o)),
        ],
        Resource::StorageClasses => vec![
            name,
            json!(str_or(o, "/provisioner", "")),
            json!(str_or(o, "/reclaimPolicy", "Delete")),
            json!(str_or(o, "/volumeBindingMode", "Immediate")),
            json!(
                o.get("allowVolumeExpansion")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                    .to_string()
            ),
            json!(age(o)),
        ],
        Resource::Events => {
            let last = o
                .at("/lastTimestamp")
                .and_then(Value::as_str)
                .or_else(|| o.at("/eventTime").and_then(Value::as_str))
                .and_then(seconds_since)
                .map_or_else(|| "<unknown>".into(), human_duration);
            let obj = format!(
                "{}/{}",
                o.at("/involvedObject/kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_lowercase(),
                o.at("/involvedObject/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            );
            vec![
                json!(last),
                json!(o["type"]),
                json!(o["reason"]),
                json!(obj),
                json!(o["message"]),
            ]
        }
    }
}

/// A Table of the given objects, with the resourceVersion and continue
/// token of the list they came from; each row carries what `include` asks.
pub(crate) fn table(
    res: Resource,
    objects: &[std::sync::Arc<Value>],
    list_meta: &Value,
    include: IncludeObject,
) -> Value {
    let mut t = rows_only(res, objects, list_meta, include);
    t["columnDefinitions"] = column_definitions(res);
    t
}

/// A Table without its column definitions: the watch events after the
/// first, as kube-apiserver sends them.
pub(crate) fn rows_only(
    res: Resource,
    objects: &[std::sync::Arc<Value>],
    list_meta: &Value,
    include: IncludeObject,
) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut row = json!({"cells": cells(res, o)});
            match include {
                IncludeObject::None => {}
                IncludeObject::Metadata => {
                    row["object"] = json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": o["metadata"],
                    });
                }
                IncludeObject::Object => row["object"] = (**o).clone(),
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "rows": rows,
    })
}

fn column_definitions(res: Resource) -> Value {
    let defs: Vec<Value> = columns(res)
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "type": c.kind,
                "format": if c.name == "Name" { "name" } else { "" },
                "description": "",
                "priority": c.priority,
            })
        })
        .collect();
    Value::Array(defs)
}

/// A condition's status, `Unknown` when it is not there.
fn condition_status(o: &Value, kind: &str) -> String {
    o.at("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
        .and_then(|c| c["status"].as_str())
        .unwrap_or("Unknown")
        .to_string()
}
