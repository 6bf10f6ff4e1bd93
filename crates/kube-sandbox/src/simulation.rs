//! The simulation loop: one task hears of every write to the store, works
//! out which objects are now out of date, and has the controllers and
//! kubelets reconcile them; kubelet work that takes time waits in one timer
//! queue.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::controllers::{
    self, attach_detach, disruption, garbage_collector, node_lifecycle, owner_resource, scheduler,
};
use crate::kubelet::{self, kubevirt, reboot};
use crate::objects::budgets;
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::shared::Shared;
use crate::store::{Change, Key, Store, key_of};
use crate::stored::Stored;
use crate::timers::TimerQueue;

/// Changes reconciled under one hold of the store's lock.
const MAX_BATCH: usize = 2_000;

#[derive(Debug)]
enum Timer {
    Start {
        key: Key,
        uid: String,
        ready: bool,
    },
    Complete {
        key: Key,
        uid: String,
    },
    Stop {
        key: Key,
        uid: String,
    },
    Evacuate {
        key: Key,
        uid: String,
    },
    /// A NoExecute taint's eviction, once the pod's toleration ran out.
    TaintEvict {
        key: Key,
        uid: String,
    },
    /// The kubelet begins stopping a deleted pod (its Killing Events).
    Kill {
        key: Key,
        uid: String,
    },
    /// A volume's last pod on a node left: it detaches.
    Detach {
        name: String,
    },
    /// A rebooting node's kubelet is back.
    Boot {
        node: String,
    },
    /// After a reboot, the kubelet restarts a running pod's containers.
    Restart {
        key: Key,
        uid: String,
        ready: bool,
    },
}

/// Reconciles owed after a batch of changes, each object once.
#[derive(Default)]
struct Dirty {
    owners: BTreeSet<(Resource, Key)>,
    pdbs: BTreeSet<Key>,
    unscheduled: BTreeSet<Key>,
    all_daemonsets: bool,
    /// Nodes whose taints the node lifecycle controller owes a look.
    nodes: BTreeSet<Key>,
    retry_pending: bool,
    gc: Vec<String>,
    /// Nodes asked to reboot, and for how long they stay down.
    reboots: Vec<(String, Duration)>,
    /// Pods bound to a node whose volumes are to be attached.
    attach: BTreeSet<Key>,
    /// Pods that left a node (deleted or finished), as they were: their
    /// volumes may detach.
    left: Vec<Arc<Value>>,
}

struct Sim {
    shared: Arc<Shared>,
    timers: TimerQueue<Timer>,
    /// Pods the scheduler could not place, tried again when nodes change.
    pending: BTreeSet<Key>,
    /// The first pass over what the scenario loaded is running.
    loading: bool,
    /// Where the scheduler's next search over the nodes starts.
    next_start_node: usize,
}

impl Sim {
    fn after(&mut self, delay: Duration, t: Timer) {
        self.timers.push(Instant::now() + delay, t);
    }

    /// Timers a pod's new state calls for.
    fn pod_timers(&mut self, old: Option<&Value>, new: &Value) {
        let key = key_of(new);
        let uid = new["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let was_bound = old.is_some_and(|o| pods::node_name(o).is_some());
        // A pod as a dump recorded it (its kubelet's container statuses)
        // stays as it was on load: Pending in ImagePullBackOff stays Pending.
        // Hand-written pods have no such record: their kubelet starts them.
        let as_dumped = self.loading && new.pointer("/status/containerStatuses").is_some();
        if kubelet::needs_start(new) && !was_bound && !as_dumped {
            match kubelet::ready_delay(new, self.shared.config.ready_seconds) {
                Some(d) => self.after(
                    d,
                    Timer::Start {
                        key: key.clone(),
                        uid: uid.clone(),
                        ready: true,
                    },
                ),
                None => self.after(
                    Duration::from_millis(100),
                    Timer::Start {
                        key: key.clone(),
                        uid: uid.clone(),
                        ready: false,
                    },
                ),
            }
        }
        let started =
            old.is_some_and(|o| pods::phase(o) != "Running") && pods::phase(new) == "Running";
        if started && let Some(d) = kubelet::completion_delay(new) {
            self.after(
                d,
                Timer::Complete {
                    key: key.clone(),
                    uid: uid.clone(),
                },
            );
        }
        let grace = |p: &Value| p["metadata"]["deletionGracePeriodSeconds"].as_i64();
        let newly_terminating = pods::is_terminating(new)
            && old.is_none_or(|o| !pods::is_terminating(o) || grace(o) != grace(new));
        if newly_terminating {
            if old.is_none_or(|o| !pods::is_terminating(o)) && pods::node_name(new).is_some() {
                let (key, uid) = (key.clone(), uid.clone());
                self.after(Duration::ZERO, Timer::Kill { key, uid });
            }
            self.after(
                kubelet::shutdown_delay(new, self.shared.config.shutdown_seconds),
                Timer::Stop { key, uid },
            );
        }
    }

    /// A node is Ready again: its kubelet starts what was bound to it and
    /// finishes what was being deleted meanwhile; after a reboot it also
    /// restarts the containers of the pods that were running.
    fn kubelet_back(&mut self, store: &Store, node: &str, rebooted: bool) {
        for key in store.pods_on_node(node) {
            let Some(pod) = store.get(Resource::Pods, &key) else {
                continue;
            };
            let uid = pod["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if pods::is_terminating(&pod) {
                self.after(
                    kubelet::shutdown_delay(&pod, self.shared.config.shutdown_seconds),
                    Timer::Stop { key, uid },
                );
                continue;
            }
            let start = kubelet::needs_start(&pod);
            if !start && !rebooted {
                continue;
            }
            let ready = kubelet::ready_delay(&pod, self.shared.config.ready_seconds);
            let delay = ready.unwrap_or(Duration::from_millis(100));
            let ready = ready.is_some();
            self.after(
                delay,
                if start {
                    Timer::Start { key, uid, ready }
                } else {
                    Timer::Restart { key, uid, ready }
                },
            );
        }
    }

    #[allow(clippy::too_many_lines)] // left over: to go when each controller declares its triggers (issue #26)
    fn note_change(&mut self, store: &Store, c: &Change, dirty: &mut Dirty) {
        let old = c.old.as_ref().map(Stored::value);
        let obj = c
            .new
            .as_deref()
            .or(old.as_deref())
            .expect("a change has an object");
        let key = key_of(obj);
        match c.resource {
            Resource::Pods => {
                if let Some(new) = c.new.as_deref() {
                    self.pod_timers(old.as_deref(), new);
                    if pods::node_name(new).is_none() && !pods::is_terminating(new) {
                        dirty.unscheduled.insert(key.clone());
                    }
                    // Just bound: its volumes are attached to the node.
                    let was_bound = old.as_deref().and_then(pods::node_name).is_some();
                    if !was_bound && pods::node_name(new).is_some() && pods::has_claims(new) {
                        dirty.attach.insert(key.clone());
                    }
                    // A pod that finished frees what it requested.
                    if pods::is_terminal(new)
                        && old.as_deref().is_some_and(|o| !pods::is_terminal(o))
                    {
                        dirty.retry_pending = true;
                        if pods::has_claims(new) {
                            dirty.left.push(Arc::new(new.clone()));
                        }
                    }
                } else {
                    // A pod left: room on its node for a pending one.
                    dirty.retry_pending = true;
                    if let Some(o) = old.as_deref()
                        && !pods::is_terminal(o)
                        && pods::has_claims(o)
                    {
                        dirty.left.push(Arc::new(o.clone()));
                    }
                }
                for p in [old.as_deref(), c.new.as_deref()].into_iter().flatten() {
                    if let Some(owner) = pods::controller_of(p)
                        && let Some(res) = owner_resource(&owner.kind)
                    {
                        dirty.owners.insert((res, (key.0.clone(), owner.name)));
                    }
                    dirty.pdbs.extend(budgets::pdbs_for_pod(store, p));
                }
            }
            Resource::Nodes => {
                // DaemonSets place pods by labels and taints (they tolerate
                // the cordon); pending pods wait for a node to open up.
                let field = |o: Option<&Value>, f: &str| o.and_then(|n| n.pointer(f)).cloned();
                let (old, new) = (old.as_deref(), c.new.as_deref());
                if old.is_none()
                    || new.is_none()
                    || field(old, "/metadata/labels") != field(new, "/metadata/labels")
                    || field(old, "/spec/taints") != field(new, "/spec/taints")
                {
                    dirty.all_daemonsets = true;
                }
                dirty.retry_pending = true;
                dirty.nodes.insert(key.clone());
                let up = |n: Option<&Value>| n.is_some_and(nodes::is_ready);
                if let Some(was) = old
                    && up(new)
                    && !up(old)
                {
                    let rebooted = new.is_some_and(|n| reboot::rebooted(was, n));
                    self.kubelet_back(store, &key.1, rebooted);
                }
                if let Some(down_for) = new.and_then(reboot::asked) {
                    dirty.reboots.push((key.1.clone(), down_for));
                }
            }
            Resource::PodDisruptionBudgets => {
                let stale = c.new.as_deref().is_some_and(|p| {
                    p.pointer("/status/observedGeneration")
                        .and_then(Value::as_i64)
                        != p.pointer("/metadata/generation").and_then(Value::as_i64)
                });
                if stale {
                    dirty.pdbs.insert(key);
                }
            }
            Resource::ReplicaSets
            | Resource::ReplicationControllers
            | Resource::Deployments
            | Resource::StatefulSets
            | Resource::DaemonSets
            | Resource::Jobs => {
                if c.new.is_some() {
                    dirty.owners.insert((c.resource, key.clone()));
                }
                if let Some(owner) = old
                    .as_deref()
                    .or(c.new.as_deref())
                    .and_then(pods::controller_of)
                    && let Some(res) = owner_resource(&owner.kind)
                {
                    dirty.owners.insert((res, (key.0.clone(), owner.name)));
                }
            }
            // A claim bound or a volume made: pods waiting on them may fit now.
            Resource::PersistentVolumes
            | Resource::PersistentVolumeClaims
            | Resource::StorageClasses => dirty.retry_pending = true,
            Resource::VirtualMachineInstances => {
                if let Some(new) = c.new.as_deref()
                    && kubevirt::evacuation_started(old.as_deref(), new)
                {
                    let uid = new["metadata"]["uid"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    self.after(
                        kubevirt::migration_delay(new),
                        Timer::Evacuate {
                            key: key.clone(),
                            uid,
                        },
                    );
                }
            }
            Resource::Namespaces
            | Resource::Events
            | Resource::Leases
            | Resource::VolumeAttachments => {}
        }
        // Garbage collection scans every object for owner references, so
        // only owners' deletions ask for it: pods and events own nothing.
        if c.new.is_none()
            && !matches!(c.resource, Resource::Pods | Resource::Events)
            && let Some(uid) = obj["metadata"]["uid"].as_str()
        {
            dirty.gc.push(uid.to_string());
        }
    }

    fn reconcile(&mut self, store: &mut Store, dirty: Dirty) {
        garbage_collector::collect(store, &dirty.gc);
        if dirty.all_daemonsets {
            let keys: Vec<Key> = store
                .iter(Resource::DaemonSets, None, None)
                .map(|(k, _)| k.clone())
                .collect();
            for k in keys {
                controllers::reconcile(store, Resource::DaemonSets, &k);
            }
        }
        // Deployments last: their status sums their ReplicaSets', which
        // this pass may have just written.
        let (deployments, others): (Vec<_>, Vec<_>) = dirty
            .owners
            .iter()
            .partition(|(res, _)| *res == Resource::Deployments);
        for (res, key) in others.into_iter().chain(deployments) {
            controllers::reconcile(store, *res, key);
        }
        for key in &dirty.pdbs {
            disruption::reconcile(store, key);
        }
        for key in &dirty.attach {
            if let Some(pod) = store.get(Resource::Pods, key) {
                attach_detach::attach(store, &pod);
            }
        }
        for pod in &dirty.left {
            for (name, delay) in attach_detach::unneeded(store, pod) {
                self.after(delay, Timer::Detach { name });
            }
        }

        for (node, down_for) in dirty.reboots {
            reboot::shut_down(store, &node);
            self.after(down_for, Timer::Boot { node });
        }
        for key in &dirty.nodes {
            kubelet::heartbeat::sync(store, &key.1);
            for (after, pod, uid) in node_lifecycle::reconcile(store, key) {
                if after.is_zero() {
                    node_lifecycle::evict(store, &pod, &uid);
                } else {
                    self.after(after, Timer::TaintEvict { key: pod, uid });
                }
            }
        }
        self.pending.extend(dirty.unscheduled);
        if dirty.retry_pending || !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            let minor = self.shared.config.minor().parse().unwrap_or(33);
            for key in pending {
                if !scheduler::schedule_from(store, &key, minor, &mut self.next_start_node) {
                    self.pending.insert(key);
                }
            }
        }
    }

    fn fire(store: &mut Store, t: Timer) {
        match t {
            Timer::Start { key, uid, ready } => kubelet::start(store, &key, &uid, ready),
            Timer::Complete { key, uid } => kubelet::complete(store, &key, &uid),
            Timer::Stop { key, uid } => kubelet::finish_termination(store, &key, &uid),
            Timer::Evacuate { key, uid } => kubevirt::evacuate(store, &key, &uid),
            Timer::TaintEvict { key, uid } => node_lifecycle::evict(store, &key, &uid),
            Timer::Kill { key, uid } => kubelet::killing(store, &key, &uid),
            Timer::Boot { node } => reboot::boot(store, &node),
            Timer::Detach { name } => attach_detach::detach(store, &name),
            Timer::Restart { key, uid, ready } => reboot::restart(store, &key, &uid, ready),
        }
    }
}

/// Wires the store to a new simulator and runs it until `shutdown` fires.
/// The first pass reconciles everything the scenario loaded.
#[allow(clippy::too_many_lines)] // left over: to go when each controller declares its triggers (issue #26)
pub(crate) fn spawn(
    shared: &Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
    idle: watch::Sender<bool>,
) -> tokio::task::JoinHandle<()> {
    let (changes_tx, mut changes) = mpsc::unbounded_channel::<Change>();
    let mut sim = Sim {
        shared: shared.clone(),
        timers: TimerQueue::new(),
        pending: BTreeSet::new(),
        loading: true,
        next_start_node: 0,
    };
    {
        let mut store = shared.store();
        store.set_change_listener(changes_tx);
        let mut dirty = Dirty {
            all_daemonsets: true,
            ..Dirty::default()
        };
        for res in [
            Resource::Deployments,
            Resource::ReplicaSets,
            Resource::ReplicationControllers,
            Resource::StatefulSets,
            Resource::Jobs,
        ] {
            dirty
                .owners
                .extend(store.iter(res, None, None).map(|(k, _)| (res, k.clone())));
        }
        dirty.pdbs.extend(
            store
                .iter(Resource::PodDisruptionBudgets, None, None)
                .map(|(k, _)| k.clone()),
        );
        dirty.nodes.extend(
            store
                .iter(Resource::Nodes, None, None)
                .map(|(k, _)| k.clone()),
        );
        // Only a pod waiting for its kubelet or being deleted has timers
        // to set, and only an unbound one waits for the scheduler: the
        // store's facts say which without parsing every pod.
        let mut attention = Vec::new();
        // Volumes of the pods loaded bound are attached (when some
        // volume is a CSI one at all: only then is a pod worth reading).
        let csi = store
            .iter(Resource::PersistentVolumes, None, None)
            .any(|(_, pv)| pv.pointer("/spec/csi/driver").is_some());
        for (key, f) in store.pod_facts(None) {
            if f.node.is_none() && !f.terminating && !f.terminal {
                dirty.unscheduled.insert(key.clone());
            }
            if csi && f.claims && f.node.is_some() && !f.terminal {
                dirty.attach.insert(key.clone());
            }
            if f.terminating || (f.node.is_some() && !f.started) {
                attention.push(key.clone());
            }
        }
        for key in attention {
            if let Some(pod) = store.get(Resource::Pods, &key) {
                sim.pod_timers(None, &pod);
            }
        }
        sim.reconcile(&mut store, dirty);
        sim.loading = false;
    }
    tokio::spawn(async move {
        loop {
            let mut batch = Vec::new();
            let _ = idle.send(true);
            let next_timer = sim.timers.next_due();
            let timer_due = async move {
                match next_timer {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                Some(c) = changes.recv() => batch.push(c),
                () = timer_due => {}
                _ = shutdown.changed() => return,
            }
            let _ = idle.send(false);
            let shared = sim.shared.clone();
            let fired = sim.timers.pop_due(Instant::now());
            if !fired.is_empty() {
                let mut store = shared.store();
                for t in fired {
                    Sim::fire(&mut store, t);
                }
            }
            // Reconciling writes again; loop until the store is quiet. The
            // lock is let go between rounds of at most MAX_BATCH changes, so
            // API requests are answered while the simulation is busy.
            loop {
                while batch.len() < MAX_BATCH {
                    match changes.try_recv() {
                        Ok(c) => batch.push(c),
                        Err(_) => break,
                    }
                }
                if batch.is_empty() {
                    break;
                }
                {
                    let mut store = shared.store();
                    let mut dirty = Dirty::default();
                    for c in batch.drain(..) {
                        sim.note_change(&store, &c, &mut dirty);
                    }
                    sim.reconcile(&mut store, dirty);
                }
                tokio::task::yield_now().await;
            }
        }
    })
}
