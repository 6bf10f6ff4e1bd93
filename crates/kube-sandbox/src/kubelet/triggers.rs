//! What the kubelets react to: a pod bound (start it), running (complete it
//! when its run time is up), deleted (kill it, stop it after its grace); a
//! node Ready again (start and finish what waited, restart after a reboot)
//! or asked to reboot; a VM's evacuation begun. Work that takes time comes
//! back as timers, which the simulation loop fires.

use crate::objects::path::At;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::outage::{self, Turn};
use super::{kubevirt, reboot};
use crate::controllers::work::Changed;
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::store::{Store, key_of};
use crate::timers::Timer;

/// The scenario's kubelet settings, and whether the first pass over what it
/// loaded is running.
pub(crate) struct Knobs {
    /// Seconds a started pod takes to be Ready, unless it says otherwise.
    pub(crate) ready_seconds: f64,
    /// Seconds a deleted pod takes to stop, if not its grace period.
    pub(crate) shutdown_seconds: Option<f64>,
    /// The first pass over the loaded scenario.
    pub(crate) loading: bool,
    /// How long a stopped kubelet's node stays Ready.
    pub(crate) node_monitor_grace: Duration,
}

/// What the kubelets owe after a batch of changes.
#[derive(Default)]
pub(crate) struct Owed {
    /// Timers to set.
    pub(crate) later: Vec<Later>,
    /// Nodes asked to reboot, and for how long they stay down.
    pub(crate) reboots: Vec<(String, Duration)>,
    /// Nodes whose stopped kubelet runs again and posts Ready.
    pub(crate) revived: Vec<String>,
    /// Nodes asked to shut down gracefully, and how long until they are off.
    pub(crate) shutdowns: Vec<(String, Duration)>,
}

/// A timer owed, after its delay; with the tree of the pod whose change
/// owed it, which the simulation keeps alive until the timer fires, so
/// that the kubelet's step reads it without parsing the pod again.
pub(crate) struct Later {
    pub(crate) delay: Duration,
    pub(crate) timer: Timer,
    pub(crate) tree: Option<Arc<Value>>,
}

impl Owed {
    fn after(&mut self, delay: Duration, timer: Timer) {
        self.later.push(Later {
            delay,
            timer,
            tree: None,
        });
    }
}

pub(crate) fn triggers(store: &Store, c: &Changed<'_>, knobs: &Knobs, owed: &mut Owed) {
    match c.resource {
        Resource::Pods => {
            if let Some(new) = c.new {
                pod_timers(c.old, new, knobs, owed);
                if crate::objects::strimzi::roll_asked(c.old, new) {
                    let (key, uid) = (c.key.clone(), uid(new));
                    let delay = crate::objects::strimzi::roll_delay(new);
                    owed.after(delay, Timer::StrimziRoll { key, uid });
                }
            }
        }
        Resource::Nodes => {
            let up = |n: Option<&Value>| n.is_some_and(nodes::is_ready);
            if let Some(was) = c.old
                && up(c.new)
                && !up(c.old)
            {
                let rebooted = c.new.is_some_and(|n| reboot::rebooted(was, n));
                back(store, &c.key.1, rebooted, knobs, owed);
            }
            if let Some(down_for) = c.new.and_then(reboot::asked) {
                owed.reboots.push((c.key.1.clone(), down_for));
            }
            if let Some(off_in) = c.new.and_then(super::graceful_shutdown::asked) {
                owed.shutdowns.push((c.key.1.clone(), off_in));
            }
            let node = c.key.1.clone();
            match outage::turn(c.old, c.new) {
                Some(Turn::Stopped) => owed.after(knobs.node_monitor_grace, Timer::Silent { node }),
                // Back within the grace period: nothing else changes, so
                // the kubelet's catching up starts here.
                Some(Turn::Started) if up(c.new) => back(store, &node, false, knobs, owed),
                Some(Turn::Started) => owed.revived.push(node),
                None => {}
            }
        }
        Resource::VolumeAttachments => {
            if c.old.is_none()
                && let Some(va) = c.new
            {
                attached(store, va, knobs, owed);
            }
        }
        Resource::VirtualMachineInstances => {
            if let Some(new) = c.new
                && kubevirt::evacuation_started(c.old, new)
            {
                let (key, uid) = (c.key.clone(), uid(new));
                owed.after(kubevirt::migration_delay(new), Timer::Evacuate { key, uid });
            }
        }
        _ => {}
    }
}

fn uid(obj: &Value) -> String {
    obj["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Timers a pod's new state calls for.
pub(crate) fn pod_timers(old: Option<&Value>, new: &Value, knobs: &Knobs, owed: &mut Owed) {
    let key = key_of(new);
    let uid = uid(new);
    let was_bound = old.is_some_and(|o| pods::node_name(o).is_some());
    // A pod as a dump recorded it (its kubelet's container statuses)
    // stays as it was on load: Pending in ImagePullBackOff stays Pending.
    // Hand-written pods have no such record: their kubelet starts them.
    let as_dumped = knobs.loading && new.at("/status/containerStatuses").is_some();
    if super::needs_start(new) && !was_bound && !as_dumped {
        let ready = super::ready_delay(new, knobs.ready_seconds);
        let delay = ready.unwrap_or(Duration::from_millis(100));
        let (key, uid, ready) = (key.clone(), uid.clone(), ready.is_some());
        owed.after(delay, Timer::Start { key, uid, ready });
    }
    let started = old.is_some_and(|o| pods::phase(o) != "Running") && pods::phase(new) == "Running";
    if started && let Some(d) = super::completion_delay(new) {
        let (key, uid) = (key.clone(), uid.clone());
        owed.after(d, Timer::Complete { key, uid });
    }
    let grace = |p: &Value| p["metadata"]["deletionGracePeriodSeconds"].as_i64();
    let newly_terminating = pods::is_terminating(new)
        && old.is_none_or(|o| !pods::is_terminating(o) || grace(o) != grace(new));
    if newly_terminating {
        if old.is_none_or(|o| !pods::is_terminating(o)) && pods::node_name(new).is_some() {
            let (key, uid) = (key.clone(), uid.clone());
            owed.after(Duration::ZERO, Timer::Kill { key, uid });
        }
        owed.after(
            super::shutdown_delay(new, knobs.shutdown_seconds),
            Timer::Stop { key, uid },
        );
    }
}

/// A node is Ready again: its kubelet starts what was bound to it and
/// finishes what was being deleted meanwhile; after a reboot it also
/// restarts the containers of the pods that were running.
fn back(store: &Store, node: &str, rebooted: bool, knobs: &Knobs, owed: &mut Owed) {
    for key in store.pods_on_node(node) {
        let Some(pod) = store.get(Resource::Pods, &key) else {
            continue;
        };
        let uid = uid(&pod);
        if pods::is_terminating(&pod) {
            let delay = super::shutdown_delay(&pod, knobs.shutdown_seconds);
            owed.after(delay, Timer::Stop { key, uid });
            continue;
        }
        let start = super::needs_start(&pod);
        if !start && !rebooted {
            continue;
        }
        let ready = super::ready_delay(&pod, knobs.ready_seconds);
        let delay = ready.unwrap_or(Duration::from_millis(100));
        let ready = ready.is_some();
        let timer = if start {
            Timer::Start { key, uid, ready }
        } else {
            Timer::Restart { key, uid, ready }
        };
        owed.after(delay, timer);
    }
}

/// A volume attached to a node: the pods there that waited for it start.
fn attached(store: &Store, va: &Value, knobs: &Knobs, owed: &mut Owed) {
    let node = va["spec"]["nodeName"].as_str().unwrap_or_default();
    let pv = va.at("/spec/source/persistentVolumeName");
    for key in store.pods_on_node(node) {
        let Some(pod) = store.get(Resource::Pods, &key) else {
            continue;
        };
        let uses = crate::controllers::attach_detach::csi_volumes(store, &pod)
            .iter()
            .any(|(v, _)| pv.and_then(Value::as_str) == Some(v));
        if uses && super::needs_start(&pod) {
            let ready = super::ready_delay(&pod, knobs.ready_seconds);
            let delay = ready.unwrap_or(Duration::from_millis(100));
            let (uid, ready) = (uid(&pod), ready.is_some());
            owed.after(delay, Timer::Start { key, uid, ready });
        }
    }
}
