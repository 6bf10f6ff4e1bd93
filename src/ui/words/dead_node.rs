//! A node whose kubelet is down, in words: what says so, what the drain does
//! about it, what a pod counted as gone still holds, and what helps.

use std::fmt;
use std::time::Duration;

use crate::duration::human;
use crate::policy::node_health::NodeDown;
use crate::vocabulary::outcome::{RECOVERY_HORIZON, Recovery, Stuck};

/// `NotReady (Ready Unknown since T, 3m ago: NodeStatusUnknown; kubelet last
/// heard T; tainted node.kubernetes.io/unreachable)`.
pub(crate) struct State<'a>(pub(crate) &'a NodeDown);

impl fmt::Display for State<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        let mut facts = Vec::new();
        let ago = d
            .seconds(kube_conventions::time::now())
            .map(|s| match s {
                0 => ", under 1s ago".to_string(),
                s => format!(", {} ago", human(Duration::from_secs(s.unsigned_abs()))),
            })
            .unwrap_or_default();
        let since = d
            .since
            .as_deref()
            .map(|s| format!(" since {s}{ago}"))
            .unwrap_or_default();
        let reason = if d.reason.is_empty() {
            String::new()
        } else {
            format!(": {}", d.reason)
        };
        if d.ready == "True" {
            facts.push(format!("its kubelet stopped renewing its lease{since}"));
        } else {
            facts.push(format!("Ready {}{since}{reason}", d.ready));
        }
        if let Some(heard) = &d.kubelet_last_heard
            && d.ready != "True"
        {
            facts.push(format!("kubelet last heard {heard}"));
        }
        if !d.taints.is_empty() {
            facts.push(format!("tainted {}", d.taints.join(", ")));
        }
        write!(f, "NotReady ({})", facts.join("; "))
    }
}

/// What the drain does on a node that is down, said before anything
/// changes (and when a node goes down during the drain).
pub(crate) fn warning(
    f: &mut fmt::Formatter<'_>,
    node: &str,
    down: &NodeDown,
    lost_after: Option<Duration>,
) -> fmt::Result {
    if down.shutting_down() {
        write!(
            f,
            "node/{node} is shutting down (GracefulNodeShutdownInProgress): its kubelet is stopping its pods and the node is going away, not coming back"
        )?;
        return match lost_after {
            Some(t) => write!(
                f,
                "; a pod whose deletion was asked more than {} ago counts as gone once the kubelet is silent (--lost-pod-timeout), and the drain does not wait for the node to return",
                human(t)
            ),
            None => f.write_str(
                "; the drain waits for its pods as kubectl drain does (--lost-pod-timeout=0)",
            ),
        };
    }
    write!(
        f,
        "node/{node} is {}: its kubelet is not running, so nothing stops its pods",
        State(down)
    )?;
    if down.out_of_service() {
        return f.write_str(
            "; it is out of service (node.kubernetes.io/out-of-service), so the pod garbage collector deletes them and their volumes detach at once",
        );
    }
    match lost_after {
        Some(t) => write!(
            f,
            "; a pod whose deletion was asked more than {} ago counts as gone (--lost-pod-timeout; kubectl drain would wait for it, as --lost-pod-timeout=0 does)",
            human(t)
        )?,
        None => f.write_str(
            "; the drain waits for its pods as kubectl drain does (--lost-pod-timeout=0)",
        )?,
    }
    write!(
        f,
        ". If node/{node} is powered off, --node-shut-down lets its StatefulSet pods and volumes move; otherwise bring its kubelet back (the machine, its network, systemctl status kubelet)"
    )
}

/// A pod counted as gone, on its own line.
pub(crate) fn lost_line(node: &str, pod: &str, seconds: i64, timeout: Duration) -> String {
    format!(
        "node/{node} pod/{pod} counted as gone: its deletion was asked {} ago and the node's kubelet is not running (--lost-pod-timeout {})",
        human(Duration::from_secs(seconds.unsigned_abs())),
        human(timeout)
    )
}

/// A lost pod in the report: what it still holds, each with its remedy.
pub(crate) fn lost_detail(seconds: i64, stuck: &[Stuck]) -> String {
    let mut parts = vec![format!(
        "deletion asked {} ago on a node whose kubelet is not running",
        human(Duration::from_secs(seconds.unsigned_abs()))
    )];
    parts.extend(stuck.iter().map(held));
    parts.join("; ")
}

fn held(s: &Stuck) -> String {
    match s {
        Stuck::StatefulSet { name } => format!(
            "StatefulSet {name} makes no replacement until this pod object is gone: rerun with --node-shut-down once the node is powered off"
        ),
        Stuck::Volume {
            claim,
            volume,
            attachment,
        } => {
            let what = match (volume, attachment) {
                (Some(v), Some(a)) => format!("volume {v} (claim {claim}, VolumeAttachment {a})"),
                (Some(v), None) => format!("volume {v} (claim {claim})"),
                _ => format!("the volume of claim {claim}"),
            };
            format!(
                "{what} stays attached to the node: the attach/detach controller force-detaches it 6m after the pod is gone, at once with --node-shut-down"
            )
        }
    }
}

/// What helps a pod whose node's kubelet is down.
pub(crate) const REMEDY: &str = "the node's kubelet is not running: bring it back (the machine, its network, systemctl status kubelet); if the node is powered off, rerun with --node-shut-down; --lost-pod-timeout counts such pods as gone";

/// What helps a rolled node that did not come back: it was drained before
/// its action, so only its DaemonSet pods wait on it.
pub(crate) const NOT_BACK: &str = "its kubelet is not running: bring the machine back (its console, its power, its network, systemctl status kubelet), then rerun the roll, which takes it up here; if it is gone for good, delete the Node (kubectl delete node) once it is powered off";

/// A predicted pod's successor Ready `ms` after the drain's start.
pub(crate) fn ready_after(r: &Recovery, ms: u64) -> String {
    format!(
        "Ready on {} after {}",
        r.on.as_deref().unwrap_or("another node"),
        human(Duration::from_millis(ms))
    )
}

/// A predicted pod's successor Ready `ms` after the out-of-service taint.
pub(crate) fn ready_after_taint(r: &Recovery, ms: u64) -> String {
    format!(
        "Ready on {} {} after the taint",
        r.on.as_deref().unwrap_or("another node"),
        human(Duration::from_millis(ms))
    )
}

/// No successor within the prediction's horizon.
pub(crate) fn not_within() -> String {
    format!("not within {}", human(RECOVERY_HORIZON))
}

/// A predicted pod kept by a dead node, for `drain --simulate`'s verdict.
#[cfg(feature = "sandbox")]
pub(crate) fn recovery_line(r: &Recovery) -> String {
    let kept = format!("{} ({}) kept by node/{}", r.pod, r.holds, r.node);
    match (r.soft_ms, r.hard_ms) {
        (Some(ms), _) => format!("{kept}: {}", ready_after(r, ms)),
        (None, Some(ms)) => format!(
            "{kept}: not Ready elsewhere within {} while the node is down; with --node-shut-down, {}",
            human(RECOVERY_HORIZON),
            ready_after_taint(r, ms)
        ),
        (None, None) => format!(
            "{kept}: not Ready elsewhere within {}, even with --node-shut-down",
            human(RECOVERY_HORIZON)
        ),
    }
}
