//! Kubernetes 1.37's eviction requests (KEP-4563, gate EvictionRequestAPI),
//! as kube-controller-manager runs them: the evictionrequest controller
//! (kubernetes pkg/controller/evictionrequest) turns the EvictionRequests
//! naming one pod into one Eviction, lists their requesters, and hands the
//! pod to its responders one at a time, highest priority first (the pod's
//! `spec.evictionResponders`, then `imperative-eviction.k8s.io/evictor` at
//! 100); the imperative responder (pkg/controller/imperativeevictionresponder)
//! calls the pods/eviction subresource, budgets and all, and on a refusal
//! writes the refusal as its message and tries again after a backoff. The
//! types follow staging/src/k8s.io/api/lifecycle/v1alpha1 (k8s-openapi's
//! `v1_37`).
//!
//! When every requester has withdrawn (intent `Withdrawn`, or its request
//! deleted) the responders are Canceled and the Eviction Failed; a requester
//! that sets `intent: Eviction` again starts it over. A responder that stops
//! heart-beating for 20 minutes is Interrupted and the next one runs.
//!
//! The sandbox's own responder stands in for an interceptor (a live
//! migration, a database switchover): a pod whose annotation
//! `sandbox.kubectl-maintain.io/respond-after` is a duration has its first
//! responder delete it that long after it became Active (the workload moved);
//! `never` keeps it working and heart-beating until it is canceled.
//!
//! Differences from a real cluster, said in docs/sandbox.md: the Eviction is
//! named after the pod's uid (upstream's name is only informative), and a
//! grouped pod's request (`spec.schedulingGroup`) is Failed by the
//! controller with reason `TargetNotSupported`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::apiserver::deletion::{self, DeleteOptions};
use crate::clock::{format_time, now, seconds_since};
use crate::objects::path::At;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

use super::work::{Changed, Work};

/// The default responder every pod's Eviction ends with.
pub(crate) const IMPERATIVE: &str = "imperative-eviction.k8s.io/evictor";
const IMPERATIVE_PRIORITY: i64 = 100;
/// How long a responder may go without a heartbeat before the next runs.
const HEARTBEAT_DEADLINE: Duration = Duration::from_secs(20 * 60);
/// The imperative responder's wait before it asks the eviction subresource
/// again after a refusal.
const IMPERATIVE_RETRY: Duration = Duration::from_secs(2);
/// How often the sandbox's responder heart-beats while it works.
const HEARTBEAT_EVERY: Duration = Duration::from_secs(20);
/// A pod's annotation: when the sandbox's responder finishes (`5s`), or
/// `never`.
pub(crate) const RESPOND_AFTER: &str = "sandbox.kubectl-maintain.io/respond-after";

/// The pods whose eviction requests changed, or which left while one was
/// open: keyed by the pod's namespace and name.
pub(crate) fn triggers(store: &Store, c: &Changed<'_>, work: &mut Work) {
    match c.resource {
        Resource::EvictionRequests => {
            if let Some(pod) = c
                .object()
                .at("/spec/target/pod/name")
                .and_then(Value::as_str)
            {
                work.evictions.insert((c.key.0.clone(), pod.to_string()));
            }
        }
        Resource::Pods => {
            let leaving = c.new.is_none_or(pods::is_terminating);
            let uid = c.object().at("/metadata/uid").and_then(Value::as_str);
            if leaving
                && let Some(uid) = uid
                && store
                    .get(Resource::Evictions, &(c.key.0.clone(), uid.to_string()))
                    .is_some()
            {
                work.evictions.insert(c.key.clone());
            }
        }
        _ => {}
    }
}

fn text(v: &Value, path: &str) -> String {
    v.at(path)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn stamp() -> String {
    format_time(now())
}

/// Sets one metav1.Condition in `status.conditions`, its transition time
/// kept while its status does not change.
fn set_condition(status: &mut Value, kind: &str, state: bool, reason: &str, message: &str) {
    let value = if state { "True" } else { "False" };
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let list = status["conditions"].as_array_mut().expect("an array");
    let old = list.iter().position(|c| c["type"] == kind);
    let since = old
        .filter(|&i| list[i]["status"] == value)
        .map_or_else(stamp, |i| text(&list[i], "/lastTransitionTime"));
    let condition = json!({
        "type": kind, "status": value, "reason": reason, "message": message,
        "lastTransitionTime": since,
    });
    match old {
        Some(i) => list[i] = condition,
        None => list.push(condition),
    }
}

fn condition_true(obj: &Value, kind: &str) -> bool {
    obj.at("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

/// Reconciles the eviction of one pod: its requests, its Eviction, the
/// responder at work. `step`: a timer fired, so the active responder acts
/// (heart-beats, retries, finishes). The next step's delay, if one is owed.
pub(crate) fn reconcile(store: &mut Store, key: &Key, step: bool) -> Option<Duration> {
    let (ns, name) = key;
    let requests: Vec<(Key, Arc<Value>)> = store
        .iter(Resource::EvictionRequests, Some(ns), None)
        .filter(|(_, r)| r.at("/spec/target/pod/name").and_then(Value::as_str) == Some(name))
        .map(|(k, r)| (k.clone(), r))
        .collect();
    let pod = store.get(Resource::Pods, key);
    let pod_uid = pod.as_ref().map(|p| text(p, "/metadata/uid"));
    let live: Vec<&(Key, Arc<Value>)> = requests
        .iter()
        .filter(|(_, r)| Some(text(r, "/spec/target/pod/uid")) == pod_uid)
        .collect();
    // Requests for a pod (uid) that no longer exists: their target is gone.
    for (k, r) in &requests {
        if Some(text(r, "/spec/target/pod/uid")) != pod_uid {
            mirror(
                store,
                k,
                None,
                Some(("TargetEvicted", "the target pod no longer exists")),
            );
        }
    }
    let (Some(pod), Some(uid)) = (pod, pod_uid) else {
        collect_evictions(store, ns, name);
        return None;
    };
    let eviction_key = (ns.clone(), uid.clone());
    if live.is_empty() {
        collect_evictions(store, ns, name);
        return None;
    }
    let mut eviction = store
        .get(Resource::Evictions, &eviction_key)
        .map_or_else(|| new_eviction(&pod, live[0].1.as_ref()), |e| (*e).clone());
    let before = eviction.clone();
    let status = &mut eviction["status"];
    status["requesters"] = json!(requesters(&live));
    status["observedGeneration"] = json!(1);
    let next = if pods::is_terminating(&pod) {
        set_condition(
            status,
            "TargetEvicted",
            true,
            "TargetEvicted",
            "the pod is terminating",
        );
        None
    } else if pod.at("/spec/schedulingGroup").is_some() {
        set_condition(
            status,
            "Failed",
            true,
            "TargetNotSupported",
            "pods of a PodGroup (.spec.schedulingGroup) are not supported",
        );
        None
    } else if !status["requesters"]
        .as_array()
        .is_some_and(|rs| rs.iter().any(|r| r["intent"] == "Eviction"))
    {
        cancel(status);
        None
    } else {
        restart_if_canceled(status);
        advance(store, &pod, status, step)
    };
    write_eviction(store, &eviction_key, &before, eviction.clone());
    for (k, _) in &live {
        mirror(store, k, Some(&eviction), None);
    }
    next
}

/// A pod's new Eviction: its target, its requesters' labels, its responders
/// by priority (highest first; a tie by name), all Inactive.
fn new_eviction(pod: &Value, request: &Value) -> Value {
    let mut responders: Vec<(i64, String)> = pod
        .at("/spec/evictionResponders")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| (r["priority"].as_i64().unwrap_or(0), text(r, "/name")))
                .collect()
        })
        .unwrap_or_default();
    responders.push((IMPERATIVE_PRIORITY, IMPERATIVE.to_string()));
    responders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let requester = text(request, "/spec/requester");
    json!({
        "apiVersion": "lifecycle.k8s.io/v1alpha1",
        "kind": "Eviction",
        "metadata": {
            "name": text(pod, "/metadata/uid"),
            "namespace": text(pod, "/metadata/namespace"),
            "labels": {requester: "requester"},
        },
        "spec": {"target": {"pod": {
            "name": text(pod, "/metadata/name"),
            "uid": text(pod, "/metadata/uid"),
        }}},
        "status": {
            "targetResponders": responders.iter().map(|(p, n)| json!({
                "name": n, "priority": p, "state": "Inactive",
            })).collect::<Vec<_>>(),
            "responders": responders.iter().map(|(_, n)| json!({"name": n})).collect::<Vec<_>>(),
        },
    })
}

/// The requesters of the live requests; at most 100, withdrawn ones
/// dropped first.
fn requesters(live: &[&(Key, Arc<Value>)]) -> Vec<Value> {
    let mut out: Vec<Value> = live
        .iter()
        .map(
            |(_, r)| json!({"name": text(r, "/spec/requester"), "intent": text(r, "/spec/intent")}),
        )
        .collect();
    out.sort_by_key(|r| r["intent"] != "Eviction");
    out.truncate(100);
    out
}

fn states(status: &mut Value) -> &mut Vec<Value> {
    if !status["targetResponders"].is_array() {
        status["targetResponders"] = json!([]);
    }
    status["targetResponders"].as_array_mut().expect("an array")
}

fn responder_status<'a>(status: &'a mut Value, name: &str) -> &'a mut Value {
    if !status["responders"].is_array() {
        status["responders"] = json!([]);
    }
    let list = status["responders"].as_array_mut().expect("an array");
    let at = list
        .iter()
        .position(|r| r["name"] == name)
        .unwrap_or_else(|| {
            list.push(json!({"name": name}));
            list.len() - 1
        });
    &mut list[at]
}

/// Every requester withdrew: the responders stop, the Eviction fails.
fn cancel(status: &mut Value) {
    for r in states(status).iter_mut() {
        if matches!(r["state"].as_str(), Some("Active" | "Inactive")) {
            r["state"] = json!("Canceled");
        }
    }
    set_condition(
        status,
        "Failed",
        true,
        "Canceled",
        "every requester withdrew its eviction intent",
    );
}

/// A requester asked again after a cancellation: the responders start over.
fn restart_if_canceled(status: &mut Value) {
    let canceled = status
        .at("/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c["type"] == "Failed" && c["status"] == "True" && c["reason"] == "Canceled"
            })
        });
    if !canceled {
        return;
    }
    for r in states(status).iter_mut() {
        if r["state"] == "Canceled" {
            r["state"] = json!("Inactive");
        }
    }
    if let Some(list) = status["responders"].as_array_mut() {
        for r in list.iter_mut() {
            *r = json!({"name": r["name"]});
        }
    }
    set_condition(
        status,
        "Failed",
        false,
        "Restarted",
        "a requester asked for the eviction again",
    );
}

/// The active responder's turn: one becomes Active when none is, and the
/// active one acts when it has just started or its timer fired.
fn advance(store: &mut Store, pod: &Value, status: &mut Value, step: bool) -> Option<Duration> {
    let mut started = false;
    let active = if let Some(i) = states(status).iter().position(|r| r["state"] == "Active") {
        i
    } else {
        let Some(i) = states(status).iter().position(|r| r["state"] == "Inactive") else {
            set_condition(
                status,
                "Failed",
                true,
                "NoResponderLeft",
                "no responder evicted the pod",
            );
            return None;
        };
        states(status)[i]["state"] = json!("Active");
        let name = text(&states(status)[i], "/name");
        let r = responder_status(status, &name);
        r["startTime"] = json!(stamp());
        r["heartbeatTime"] = json!(stamp());
        started = true;
        i
    };
    let name = text(&states(status)[active], "/name");
    if !(started || step) {
        return Some(IMPERATIVE_RETRY);
    }
    if name == IMPERATIVE {
        return imperative(store, pod, status, &name);
    }
    let annotation = format!("/metadata/annotations/{}", RESPOND_AFTER.replace('/', "~1"));
    if let Some(after) = pod.at(&annotation) {
        return test_responder(store, pod, status, &name, after.as_str().unwrap_or("never"));
    }
    // Nobody answers for this responder: passed over at the deadline.
    let r = responder_status(status, &name);
    let silent = r
        .at("/heartbeatTime")
        .and_then(Value::as_str)
        .and_then(seconds_since)
        .unwrap_or(0);
    let left = HEARTBEAT_DEADLINE
        .as_secs()
        .saturating_sub(u64::try_from(silent).unwrap_or(0));
    if left == 0 {
        r["message"] = json!("no heartbeat within the deadline");
        states(status)[active]["state"] = json!("Interrupted");
        return advance(store, pod, status, true);
    }
    Some(Duration::from_secs(left))
}

/// pkg/controller/imperativeevictionresponder: the eviction subresource,
/// the refusal kept as the message and retried.
fn imperative(store: &mut Store, pod: &Value, status: &mut Value, name: &str) -> Option<Duration> {
    let key = (
        text(pod, "/metadata/namespace"),
        text(pod, "/metadata/name"),
    );
    let body = json!({
        "metadata": {"name": key.1},
        "deleteOptions": {"preconditions": {"uid": text(pod, "/metadata/uid")}},
    });
    // The controller runs only where the API is served: 1.37 or later.
    let answer = crate::apiserver::eviction::evict(store, &key, &body, false, 37);
    let r = responder_status(status, name);
    r["heartbeatTime"] = json!(stamp());
    match answer {
        Ok(_) => {
            r["message"] = json!("the pod was evicted through the eviction subresource");
            r["completionTime"] = json!(stamp());
            if let Some(s) = states(status).iter_mut().find(|s| s["name"] == name) {
                s["state"] = json!("Completed");
            }
            None
        }
        Err(e) => {
            let cause = e
                .details
                .as_ref()
                .and_then(|d| d.at("/causes/0/message"))
                .and_then(Value::as_str)
                .map(str::to_string);
            r["message"] = json!(cause.unwrap_or(e.message));
            Some(IMPERATIVE_RETRY)
        }
    }
}

/// The sandbox's interceptor: works for `after`, then deletes the pod (its
/// workload moved elsewhere); `never` works until canceled.
fn test_responder(
    store: &mut Store,
    pod: &Value,
    status: &mut Value,
    name: &str,
    after: &str,
) -> Option<Duration> {
    let r = responder_status(status, name);
    r["heartbeatTime"] = json!(stamp());
    let Some(after) = duration(after) else {
        r["message"] = json!("moving the workload (this responder never finishes)");
        return Some(HEARTBEAT_EVERY);
    };
    let since = r
        .at("/startTime")
        .and_then(Value::as_str)
        .and_then(seconds_since)
        .unwrap_or(0)
        .max(0) as u64;
    if since < after.as_secs() {
        r["message"] = json!(format!(
            "moving the workload: {since}s of {}s",
            after.as_secs()
        ));
        return Some(Duration::from_secs(after.as_secs() - since).min(HEARTBEAT_EVERY));
    }
    let key = (
        text(pod, "/metadata/namespace"),
        text(pod, "/metadata/name"),
    );
    let opts = DeleteOptions {
        uid: Some(text(pod, "/metadata/uid")),
        ..DeleteOptions::default()
    };
    let _ = deletion::delete(store, Resource::Pods, &key, &opts);
    r["message"] = json!("the workload moved; the pod was deleted");
    r["completionTime"] = json!(stamp());
    if let Some(s) = states(status).iter_mut().find(|s| s["name"] == name) {
        s["state"] = json!("Completed");
    }
    None
}

/// `30s`, `2m` or `45` (seconds); `None` for `never` or anything else.
fn duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (n, unit) = match s.strip_suffix('m') {
        Some(n) => (n, 60),
        None => (s.strip_suffix('s').unwrap_or(s), 1),
    };
    n.parse::<u64>().ok().map(|n| Duration::from_secs(n * unit))
}

fn write_eviction(store: &mut Store, key: &Key, before: &Value, after: Value) {
    if *before == after {
        return;
    }
    if store.get(Resource::Evictions, key).is_none() {
        let _ = store.create(Resource::Evictions, after);
    } else {
        let _ = store.modify(Resource::Evictions, key, |e| {
            e["status"] = after["status"].clone();
        });
    }
}

/// An EvictionRequest's status from its Eviction's: the same conditions,
/// its generation observed. `forced`: a condition set without an Eviction.
fn mirror(store: &mut Store, key: &Key, eviction: Option<&Value>, forced: Option<(&str, &str)>) {
    let Some(request) = store.get(Resource::EvictionRequests, key) else {
        return;
    };
    let mut status = request.get("status").cloned().unwrap_or_else(|| json!({}));
    status["observedGeneration"] = request["metadata"]["generation"].clone();
    if let Some(e) = eviction {
        for kind in ["TargetEvicted", "Failed"] {
            if let Some(c) = e
                .at("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
            {
                set_condition(
                    &mut status,
                    kind,
                    c["status"] == "True",
                    c["reason"].as_str().unwrap_or_default(),
                    c["message"].as_str().unwrap_or_default(),
                );
            }
        }
    }
    if let Some((kind, message)) = forced
        && !condition_true(&request, kind)
    {
        set_condition(&mut status, kind, true, kind, message);
    }
    if request.get("status") != Some(&status) {
        let _ = store.modify(Resource::EvictionRequests, key, |r| r["status"] = status);
    }
}

/// Evictions of this pod name, whose requests are all gone: garbage
/// collected.
fn collect_evictions(store: &mut Store, ns: &str, name: &str) {
    let stale: Vec<Key> = store
        .iter(Resource::Evictions, Some(ns), None)
        .filter(|(_, e)| e.at("/spec/target/pod/name").and_then(Value::as_str) == Some(name))
        .map(|(k, _)| k.clone())
        .collect();
    for k in stale {
        let _ = deletion::delete(store, Resource::Evictions, &k, &DeleteOptions::default());
    }
}
