//! Simulated kubelets: a bound pod starts and becomes Ready after its
//! ready time; a deleted pod stops after its shutdown time and the kubelet
//! then finishes the deletion with a zero grace period, as the real one
//! does (`DELETE` with `gracePeriodSeconds: 0` and a uid precondition).

pub(crate) mod containers;
pub(crate) mod graceful_shutdown;
pub(crate) mod heartbeat;
pub(crate) mod kubevirt;
pub(crate) mod outage;
pub(crate) mod reboot;
pub(crate) mod runtime;
pub(crate) mod triggers;

use crate::objects::path::At;
use std::time::Duration;

use serde_json::{Value, json};

use crate::apiserver::deletion::{self, DeleteOptions};
use crate::clock::{now_rfc3339, seconds_since};
use crate::config::{COMPLETE_AFTER_SECONDS, READY_SECONDS, SHUTDOWN_SECONDS};
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::{Key, Store};

/// A seconds annotation: a number, or `never`.
enum Knob {
    Never,
    Seconds(f64),
}

fn seconds_knob(pod: &Value, key: &str) -> Option<Knob> {
    let v = pods::annotation(pod, key)?;
    if v == "never" {
        return Some(Knob::Never);
    }
    v.parse::<f64>().ok().map(|s| Knob::Seconds(s.max(0.0)))
}

/// When a just-bound pod should start: `None` when it never becomes Ready.
/// The annotation decides; else the readiness probe (its first success
/// after `initialDelaySeconds`, then `successThreshold - 1` periods more),
/// and never sooner than the scenario's default.
pub(crate) fn ready_delay(pod: &Value, default_seconds: f64) -> Option<Duration> {
    match seconds_knob(pod, READY_SECONDS) {
        Some(Knob::Never) => None,
        Some(Knob::Seconds(s)) => Some(Duration::from_secs_f64(s)),
        None => {
            let probe = |p: &Value| {
                let field = |f: &str, d: i64| p[f].as_i64().unwrap_or(d) as f64;
                field("initialDelaySeconds", 0)
                    + (field("successThreshold", 1) - 1.0).max(0.0) * field("periodSeconds", 10)
            };
            let probed = pod["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("readinessProbe").map(probe))
                .fold(0.0, f64::max);
            Some(Duration::from_secs_f64(probed.max(default_seconds)))
        }
    }
}

/// Seconds a container's preStop hook keeps it running: a `sleep` action,
/// or an exec whose command ends in `sleep N`.
fn pre_stop_seconds(pod: &Value) -> Option<f64> {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let hook = c.at("/lifecycle/preStop")?;
            if let Some(s) = hook.at("/sleep/seconds").and_then(Value::as_f64) {
                return Some(s);
            }
            let command = hook.at("/exec/command")?.as_array()?;
            let last = command.last()?.as_str()?;
            let mut words = last.split_whitespace().rev();
            let n = words.next()?.parse::<f64>().ok()?;
            (words.next()? == "sleep").then_some(n)
        })
        .reduce(f64::max)
}

/// How long a deleted pod takes to stop: the annotation, else its preStop
/// hook, else the scenario's `shutdownSeconds`, else the whole grace
/// period; never past its deletionTimestamp (the kubelet kills what still
/// runs then, so a shortened grace period shortens the shutdown).
pub(crate) fn shutdown_delay(pod: &Value, default_seconds: Option<f64>) -> Duration {
    let remaining = pod
        .at("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(seconds_since)
        .map_or(0, |elapsed| -elapsed);
    let grace = Duration::from_secs(remaining.max(0) as u64);
    let wanted = match seconds_knob(pod, SHUTDOWN_SECONDS) {
        Some(Knob::Seconds(secs)) => Some(secs),
        Some(Knob::Never) => None,
        None => pre_stop_seconds(pod).or(default_seconds),
    };
    wanted.map_or(grace, |s| Duration::from_secs_f64(s.max(0.0)).min(grace))
}

pub(crate) fn completion_delay(pod: &Value) -> Option<Duration> {
    match seconds_knob(pod, COMPLETE_AFTER_SECONDS)? {
        Knob::Seconds(s) => Some(Duration::from_secs_f64(s)),
        Knob::Never => None,
    }
}

/// Does this pod wait for the kubelet to start it?
pub(crate) fn needs_start(pod: &Value) -> bool {
    pods::node_name(pod).is_some()
        && !pods::is_terminating(pod)
        && matches!(pods::phase(pod), "" | "Pending")
}

fn container_names(pod: &Value) -> Vec<String> {
    pod.at("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn pod_ip(store: &Store) -> String {
    let n = store.ids.next();
    format!(
        "10.{}.{}.{}",
        (n >> 16) & 0xff,
        (n >> 8) & 0xff,
        (n & 0xfd) + 2
    )
}

/// Is the kubelet of the pod's node up (its node Ready)? A kubelet that
/// is down starts nothing and confirms no deletion; the simulation resumes
/// its work when the node is Ready again.
pub(crate) fn node_up(store: &Store, pod: &Value) -> bool {
    let Some(node) = pods::node_name(pod)
        .and_then(|n| store.get(Resource::Nodes, &(String::new(), n.to_string())))
    else {
        return true;
    };
    crate::objects::nodes::kubelet_running(&node)
}

/// The kubelet runs the pod's containers; they become Ready unless `ready`
/// is false.
pub(crate) fn start(store: &mut Store, key: &Key, uid: &str, ready: bool) {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return;
    };
    if pod["metadata"]["uid"] != uid || !needs_start(&pod) || !node_up(store, &pod) {
        return;
    }
    // Its volumes are mounted first: it starts once they are attached.
    if !crate::controllers::attach_detach::volumes_attached(store, &pod) {
        return;
    }
    let now = now_rfc3339();
    let ip = pod_ip(store);
    let readiness = if ready { "True" } else { "False" };
    let _ = store.modify(Resource::Pods, key, |p| {
        let statuses: Vec<Value> = container_names(p)
            .into_iter()
            .map(|name| {
                json!({
                    "name": name,
                    "ready": ready,
                    "started": true,
                    "restartCount": 0,
                    "image": "sandbox",
                    "imageID": "",
                    "state": {"running": {"startedAt": now}},
                })
            })
            .collect();
        let st = &mut p["status"];
        st["phase"] = json!("Running");
        st["podIP"] = json!(ip);
        st["podIPs"] = json!([{"ip": ip}]);
        st["hostIP"] = json!("10.0.0.1");
        if st.get("startTime").is_none() {
            st["startTime"] = json!(now);
        }
        st["containerStatuses"] = json!(statuses);
        for (c, s) in [
            ("PodScheduled", "True"),
            ("Initialized", "True"),
            ("ContainersReady", readiness),
            ("Ready", readiness),
        ] {
            pods::set_condition(p, c, s, "", "", &now);
        }
    });
    for c in pod["spec"]["containers"].as_array().into_iter().flatten() {
        let name = c["name"].as_str().unwrap_or_default();
        let image = c["image"].as_str().unwrap_or_default();
        for (reason, message) in [
            (
                "Pulled",
                format!("Container image \"{image}\" already present on machine"),
            ),
            ("Created", format!("Created container: {name}")),
            ("Started", format!("Started container {name}")),
        ] {
            crate::events::record(store, &pod, "Normal", reason, &message, "kubelet");
        }
    }
}

/// The kubelet starts stopping a deleted pod's containers.
pub(crate) fn killing(store: &mut Store, key: &Key, uid: &str) {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return;
    };
    if pod["metadata"]["uid"] != uid || !pods::is_terminating(&pod) || !node_up(store, &pod) {
        return;
    }
    for c in pod["spec"]["containers"].as_array().into_iter().flatten() {
        let message = format!(
            "Stopping container {}",
            c["name"].as_str().unwrap_or_default()
        );
        crate::events::record(store, &pod, "Normal", "Killing", &message, "kubelet");
    }
}

/// The pod's containers exit 0 on their own (a Job's work is done).
pub(crate) fn complete(store: &mut Store, key: &Key, uid: &str) {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return;
    };
    if pod["metadata"]["uid"] != uid || pods::is_terminal(&pod) {
        return;
    }
    exited(store, key, ("Succeeded", 0, "Completed"));
}

/// A deleted pod's containers have exited: 0 when they stopped within the
/// grace period (Succeeded), killed at its end otherwise (137, Failed).
fn stopped(store: &mut Store, key: &Key, pod: &Value) {
    let killed = pod
        .at("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(seconds_since)
        .is_some_and(|past| past >= 0);
    let how = if killed {
        ("Failed", 137, "Error")
    } else {
        ("Succeeded", 0, "Completed")
    };
    exited(store, key, how);
}

/// Every container of the pod terminated with this exit code and reason,
/// the pod in this phase and not Ready.
fn exited(store: &mut Store, key: &Key, (phase, code, reason): (&str, i32, &str)) {
    let now = now_rfc3339();
    let _ = store.modify(Resource::Pods, key, |p| {
        let statuses: Vec<Value> = container_names(p)
            .into_iter()
            .map(|name| {
                json!({
                    "name": name, "ready": false, "started": false, "restartCount": 0,
                    "image": "sandbox", "imageID": "",
                    "state": {"terminated": {"exitCode": code, "reason": reason, "finishedAt": now}},
                })
            })
            .collect();
        p["status"]["containerStatuses"] = json!(statuses);
        ended(p, phase, &now);
    });
}

/// The pod's containers have all ended: it is in its terminal `phase`,
/// and not Ready.
pub(crate) fn ended(p: &mut Value, phase: &str, now: &str) {
    p["status"]["phase"] = json!(phase);
    for c in ["Ready", "ContainersReady"] {
        pods::set_condition(p, c, "False", "PodCompleted", "", now);
    }
}

/// The containers have stopped: the kubelet deletes the pod for good
/// (finalizers may still hold it).
pub(crate) fn finish_termination(store: &mut Store, key: &Key, uid: &str) {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return;
    };
    if pod["metadata"]["uid"] != uid || !pods::is_terminating(&pod) || !node_up(store, &pod) {
        return;
    }
    // A pod its finalizers keep shows that its containers stopped (since
    // 1.27 the kubelet moves a deleted pod to a terminal phase, KEP-3329);
    // one without is gone with the delete below.
    let held = pod
        .at("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    if held && !pods::is_terminal(&pod) {
        stopped(store, key, &pod);
    }
    let opts = DeleteOptions {
        grace_period_seconds: Some(0),
        uid: Some(uid.to_string()),
        ..DeleteOptions::default()
    };
    let _ = deletion::delete(store, Resource::Pods, key, &opts);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_comes_from_the_probe_and_shutdown_from_pre_stop() {
        let probed = json!({"spec": {"containers": [
            {"name": "a", "readinessProbe": {"initialDelaySeconds": 5, "periodSeconds": 2, "successThreshold": 3}},
            {"name": "b"}]}});
        assert_eq!(ready_delay(&probed, 1.0), Some(Duration::from_secs(9)));
        assert_eq!(
            ready_delay(&json!({"spec": {}}), 1.0),
            Some(Duration::from_secs(1))
        );
        let far =
            crate::clock::format_time(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(30));
        let stopping = |hook: Value| {
            json!({"metadata": {"deletionTimestamp": far},
                "spec": {"containers": [{"name": "a", "lifecycle": {"preStop": hook}}]}})
        };
        let slept = shutdown_delay(&stopping(json!({"sleep": {"seconds": 7}})), None);
        assert!(
            slept <= Duration::from_secs(7) && slept >= Duration::from_secs(6),
            "{slept:?}"
        );
        let exec = stopping(json!({"exec": {"command": ["/bin/sh", "-c", "sleep 4"]}}));
        assert_eq!(shutdown_delay(&exec, Some(1.0)), Duration::from_secs(4));
        let plain = stopping(json!({}));
        assert_eq!(shutdown_delay(&plain, Some(2.0)), Duration::from_secs(2));
        assert!(
            shutdown_delay(&plain, None) >= Duration::from_secs(28),
            "the grace period"
        );
    }
}
