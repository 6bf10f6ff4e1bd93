//! The simulation loop: one task hears of every write to the store, asks
//! each controller and the kubelets what they owe for it (their own
//! `triggers`, beside their `reconcile`), and has them reconcile it; kubelet
//! work that takes time waits in one timer queue.

use crate::objects::path::At;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use tokio::runtime::RuntimeFlavor;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::controllers::work::{Changed, Work};
use crate::controllers::{
    self, attach_detach, cluster_autoscaler, daemonset, disruption, eviction_request,
    garbage_collector, namespace, node_lifecycle, pod_gc, scheduler,
};
use crate::kubelet::triggers::{Knobs, Later, Owed};
use crate::kubelet::{self, kubevirt, outage, reboot};
use crate::resources::Resource;
use crate::shared::{Shared, StoreGuard};
use crate::store::{Change, Key, Store, key_of};
use crate::stored::{Held, Stored};
use crate::timers::{Timer, TimerQueue};

/// Changes reconciled under one hold of the store's lock, before the
/// simulation lets the API server's tasks run. 2,000 held watches back: on
/// a 5,000-node cluster under a pool drain (8,000 changes a second), the
/// watch of every budget fell up to 1.5 s behind the store (traced from
/// the disruption controller's write to the watch's send); with 200 it
/// keeps up within milliseconds, for the same work.
const MAX_BATCH: usize = 200;

/// At most this many pods' trees are held for their timers (`Later`): a
/// 5,000-node pool drain has about 1,500 pods between their eviction and
/// their end or between their binding and their start at once; a
/// scenario that binds 100,000 pods at once holds JSON for the rest.
const TIMER_TREES: usize = 4096;

struct Sim {
    shared: Arc<Shared>,
    /// Each timer, with the tree it holds (`Later`).
    timers: TimerQueue<(Timer, Option<Held>)>,
    /// How many trees the timers hold.
    held: Arc<AtomicUsize>,
    /// Pods the scheduler could not place, tried again when nodes change.
    pending: BTreeSet<Key>,
    /// The first pass over what the scenario loaded is running.
    loading: bool,
    /// Where the scheduler's next search over the nodes starts.
    next_start_node: Option<String>,
    /// When the simulation started: the pod garbage collector's period
    /// counts from here.
    started: Instant,
    /// Pods waiting for a volume to detach from another node, by volume.
    waiting_attach: BTreeMap<String, BTreeSet<Key>>,
    /// Pods whose eviction responder has a step timed.
    eviction_timers: BTreeSet<Key>,
    /// The nodes cluster-autoscaler finds unneeded, when there is one.
    unneeded: cluster_autoscaler::Unneeded,
}

/// The store, the simulation's wait for it counted (crate::lag).
fn lock(shared: &Shared) -> StoreGuard<'_> {
    let asked = Instant::now();
    let store = shared.store();
    shared.lag.waited(asked.elapsed());
    store
}

impl Sim {
    fn after(&mut self, delay: Duration, t: Timer) {
        self.timers.push(Instant::now() + delay, (t, None));
    }

    /// `after`, holding the tree of the pod the timer is about.
    fn after_holding(&mut self, later: Later) {
        let held = later
            .tree
            .and_then(|t| Held::new(&t, &self.held, TIMER_TREES));
        self.timers
            .push(Instant::now() + later.delay, (later.timer, held));
    }

    fn knobs(&self) -> Knobs {
        Knobs {
            ready_seconds: self.shared.config.ready_seconds,
            shutdown_seconds: self.shared.config.shutdown_seconds,
            loading: self.loading,
            node_monitor_grace: self.shared.config.node_monitor_grace_period(),
        }
    }

    /// What each controller and the kubelets owe for one change.
    fn note_change(&mut self, store: &Store, c: &Change, work: &mut Work, owed: &mut Owed) {
        self.shared.lag.change(c.at.elapsed());
        let old = c.old.as_ref().map(Stored::value);
        let new = c.new.as_deref();
        let object = new.or(old.as_deref()).expect("a change has an object");
        let changed = Changed {
            resource: c.resource,
            key: key_of(object),
            old: old.as_deref(),
            new,
        };
        controllers::triggers(&changed, work);
        daemonset::triggers(store, &changed, work);
        disruption::triggers(store, &changed, work);
        scheduler::triggers(&changed, work);
        attach_detach::triggers(&changed, work);
        node_lifecycle::triggers(&changed, work);
        garbage_collector::triggers(&changed, work);
        pod_gc::triggers(&changed, work);
        namespace::triggers(&changed, work);
        eviction_request::triggers(store, &changed, work);
        let before = owed.later.len();
        kubelet::triggers::triggers(store, &changed, &self.knobs(), owed);
        // A pod's own timers read the pod when they fire: they hold the
        // version that owed them (still current unless written since).
        if c.resource == Resource::Pods {
            for later in &mut owed.later[before..] {
                later.tree.clone_from(&c.new);
            }
        }
    }

    fn reconcile(&mut self, store: &mut Store, work: Work, owed: Owed) {
        for later in owed.later {
            self.after_holding(later);
        }
        garbage_collector::collect(store, &work.gc);
        if work.all_daemonsets {
            let keys: Vec<Key> = store
                .iter(Resource::DaemonSets, None, None)
                .map(|(k, _)| k.clone())
                .collect();
            for k in keys {
                controllers::reconcile(store, Resource::DaemonSets, &k);
            }
        }
        for (res, key) in owners_in_order(store, &work.owners) {
            controllers::reconcile(store, *res, key);
        }
        for key in &work.pdbs {
            disruption::reconcile(store, key);
        }
        for key in &work.attach {
            self.attach(store, key);
        }
        for pod in &work.left {
            for (name, delay) in attach_detach::unneeded(store, pod) {
                self.after(delay, Timer::Detach { name });
            }
        }

        for node in &work.out_of_service {
            for (name, delay) in attach_detach::out_of_service_detaches(store, node) {
                self.after(delay, Timer::Detach { name });
            }
        }
        let elapsed = self.started.elapsed();
        for node in work.collect {
            if pod_gc::owed(store, &node) {
                self.after(
                    pod_gc::next_pass(elapsed, Duration::ZERO),
                    Timer::PodGc { node },
                );
            }
        }
        for ns in &work.namespaces {
            namespace::reconcile(store, ns);
        }
        if self.shared.config.controller_gate("EvictionRequestAPI") {
            for key in work.evictions {
                self.eviction_step(store, key, false);
            }
        }
        for node in work.orphans {
            let after = pod_gc::next_pass(elapsed, pod_gc::QUARANTINE);
            self.after(after, Timer::Orphans { node });
        }
        for node in owed.revived {
            outage::post_ready(store, &node);
        }
        for (node, off_in) in owed.shutdowns {
            let minor = self.shared.config.minor_number();
            kubelet::graceful_shutdown::begin(store, &node, minor);
            self.after(off_in, Timer::PowerOff { node });
        }
        for (node, down_for) in owed.reboots {
            reboot::shut_down(store, &node);
            self.after(down_for, Timer::Boot { node });
        }
        for key in &work.nodes {
            kubelet::heartbeat::sync(store, &key.1);
            for (after, pod, uid) in node_lifecycle::reconcile(store, key) {
                if after.is_zero() {
                    node_lifecycle::evict(store, &pod, &uid);
                } else {
                    self.after(after, Timer::TaintEvict { key: pod, uid });
                }
            }
        }
        self.pending.extend(work.unscheduled);
        if work.retry_pending || !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            let minor = self.shared.config.minor().parse().unwrap_or(33);
            for key in pending {
                if !scheduler::schedule_from(store, &key, minor, &mut self.next_start_node) {
                    self.pending.insert(key);
                }
            }
        }
    }

    /// Listens to the store and reconciles everything the scenario loaded.
    fn first_pass(&mut self, changes: mpsc::UnboundedSender<Change>) {
        let shared = self.shared.clone();
        let mut store = shared.store();
        store.set_change_listener(changes);
        let mut work = Work::everything(&store);
        let mut owed = Owed::default();
        // Only a pod waiting for its kubelet or being deleted has timers
        // to set, and only an unbound one waits for the scheduler: the
        // store's facts say which without parsing every pod.
        let mut attention = Vec::new();
        // Volumes of the pods loaded bound are attached (when some
        // volume is a CSI one at all: only then is a pod worth reading).
        let csi = store
            .iter(Resource::PersistentVolumes, None, None)
            .any(|(_, pv)| pv.at("/spec/csi/driver").is_some());
        for (key, f) in store.pod_facts(None) {
            if f.node.is_none() && !f.terminating && !f.terminal {
                work.unscheduled.insert(key.clone());
            }
            if csi && f.claims && f.node.is_some() && !f.terminal {
                work.attach.insert(key.clone());
            }
            if f.terminating || (f.node.is_some() && !f.started) {
                attention.push(key.clone());
            }
        }
        let knobs = self.knobs();
        for key in attention {
            if let Some(pod) = store.get(Resource::Pods, &key) {
                kubelet::triggers::pod_timers(None, &pod, &knobs, &mut owed);
            }
        }
        self.reconcile(&mut store, work, owed);
        self.loading = false;
        if let Some(ca) = &self.shared.config.cluster_autoscaler {
            self.after(ca.scan_interval(), Timer::AutoscalerScan);
        }
    }

    /// Attaches a pod's volumes, or notes the volumes it waits for.
    fn attach(&mut self, store: &mut Store, key: &Key) {
        if let Some(pod) = store.get(Resource::Pods, key) {
            for pv in attach_detach::attach(store, &pod) {
                self.waiting_attach
                    .entry(pv)
                    .or_default()
                    .insert(key.clone());
            }
        }
    }

    /// A deleted pod's shutdown time is up. A local-image process still
    /// running has its whole grace period, and is killed at its end; its
    /// exit finishes the deletion (kubelet/runtime.rs).
    fn stop(&mut self, store: &mut Store, key: Key, uid: String) {
        if !self.shared.runtime.has_process(&key, &uid) {
            kubelet::finish_termination(store, &key, &uid);
            return;
        }
        let remaining = store
            .get(Resource::Pods, &key)
            .and_then(|p| {
                p.at("/metadata/deletionTimestamp")
                    .and_then(serde_json::Value::as_str)
                    .and_then(crate::clock::seconds_since)
            })
            .map_or(0, |elapsed| -elapsed);
        if remaining > 0 {
            self.after(
                Duration::from_secs(remaining as u64),
                Timer::Stop { key, uid },
            );
        } else {
            self.shared
                .runtime
                .signal(&key, &uid, rustix::process::Signal::KILL);
        }
    }

    /// One pass of the evictionrequest controller over a pod, its next
    /// step timed. A timer already due replaces none: a step that finds
    /// nothing to do owes nothing.
    fn eviction_step(&mut self, store: &mut Store, key: Key, step: bool) {
        if let Some(after) = eviction_request::reconcile(store, &key, step)
            && (step || !self.eviction_timers.contains(&key))
        {
            self.eviction_timers.insert(key.clone());
            self.after(after, Timer::EvictionStep { key });
        }
    }

    fn fire(&mut self, store: &mut Store, t: Timer) {
        match t {
            Timer::Start { key, uid, ready } => {
                kubelet::start(store, &key, &uid, ready);
                kubelet::runtime::start_pod(&self.shared, store, &key, &uid);
            }
            Timer::Complete { key, uid } => kubelet::complete(store, &key, &uid),
            Timer::Stop { key, uid } => self.stop(store, key, uid),
            Timer::Evacuate { key, uid } => kubevirt::evacuate(store, &key, &uid),
            Timer::StrimziRoll { key, uid } => {
                // The operator deletes the pod; its controller makes it again.
                if store
                    .get(Resource::Pods, &key)
                    .is_some_and(|p| p["metadata"]["uid"] == uid.as_str())
                {
                    let opts = crate::apiserver::deletion::DeleteOptions::default();
                    let _ = crate::apiserver::deletion::delete(store, Resource::Pods, &key, &opts);
                }
            }
            Timer::TaintEvict { key, uid } => node_lifecycle::evict(store, &key, &uid),
            Timer::Kill { key, uid } => {
                kubelet::killing(store, &key, &uid);
                let term = rustix::process::Signal::TERM;
                self.shared.runtime.signal(&key, &uid, term);
            }
            Timer::Boot { node } => reboot::boot(store, &node),
            Timer::PowerOff { node } => kubelet::graceful_shutdown::power_off(store, &node),
            Timer::EvictionStep { key } => {
                self.eviction_timers.remove(&key);
                self.eviction_step(store, key, true);
            }
            Timer::Detach { name } => {
                if let Some(pv) = attach_detach::detach(store, &name) {
                    for key in self.waiting_attach.remove(&pv).unwrap_or_default() {
                        self.attach(store, &key);
                    }
                }
            }
            Timer::Silent { node } => node_lifecycle::silent(store, &node),
            Timer::PodGc { node } => pod_gc::collect_terminating(store, &node),
            Timer::Orphans { node } => pod_gc::collect_orphans(store, &node),
            Timer::AutoscalerScan => {
                if let Some(ca) = self.shared.config.cluster_autoscaler.clone() {
                    self.unneeded.scan(store, &ca, Instant::now());
                    self.after(ca.scan_interval(), Timer::AutoscalerScan);
                }
            }
            Timer::Restart { key, uid, ready } => reboot::restart(store, &key, &uid, ready),
        }
    }
}

/// Wires the store to a new simulator and runs it until `shutdown` fires.
/// The first pass reconciles everything the scenario loaded.
pub(crate) fn spawn(
    shared: &Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
    idle: watch::Sender<bool>,
) -> tokio::task::JoinHandle<()> {
    let (changes_tx, mut changes) = mpsc::unbounded_channel::<Change>();
    let mut sim = Sim {
        shared: shared.clone(),
        timers: TimerQueue::new(),
        held: Arc::new(AtomicUsize::new(0)),
        pending: BTreeSet::new(),
        loading: true,
        next_start_node: None,
        started: Instant::now(),
        waiting_attach: BTreeMap::new(),
        eviction_timers: BTreeSet::new(),
        unneeded: cluster_autoscaler::Unneeded::default(),
    };
    sim.first_pass(changes_tx);
    let run = async move {
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
            let busy_since = Instant::now();
            // Reconciling writes again; loop until the store is quiet. The
            // lock is handed to whoever waits for it between rounds of at
            // most MAX_BATCH changes, so API requests are answered while the
            // simulation is busy. Timers come due in every round: under a
            // steady stream of writes the store is never quiet, and a
            // kubelet's start or stop must not wait for it.
            loop {
                let fired = sim.timers.pop_due(Instant::now());
                if !fired.is_empty() {
                    let mut store = lock(&shared);
                    for (due, (t, _held)) in fired {
                        sim.shared
                            .lag
                            .timer(Instant::now().saturating_duration_since(due));
                        sim.fire(&mut store, t);
                    }
                    StoreGuard::unlock_fair(store);
                }
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
                    let mut store = lock(&shared);
                    let (mut work, mut owed) = (Work::default(), Owed::default());
                    for c in batch.drain(..) {
                        sim.note_change(&store, &c, &mut work, &mut owed);
                    }
                    sim.reconcile(&mut store, work, owed);
                    StoreGuard::unlock_fair(store);
                }
                // A task among the API server's on a single-threaded runtime.
                tokio::task::yield_now().await;
            }
            sim.shared.lag.busy(busy_since.elapsed());
        }
    };
    start(run)
}

/// Runs the simulation on a thread of its own under a multi-threaded
/// runtime, so that it never waits behind the API server's tasks for a
/// turn (it had waited a quarter of the time behind them during a
/// 5,000-node pool drain, while thousands of changes queued); under a
/// single-threaded runtime (a paused clock, which only that runtime's
/// tasks follow) it is one more task.
fn start(
    run: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    if tokio::runtime::Handle::current().runtime_flavor() != RuntimeFlavor::MultiThread {
        return tokio::spawn(run);
    }
    let (done_tx, done) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("sandbox-simulation".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the simulation");
            // A panic is handed to the task below, so the sandbox's
            // supervisor hears of it as of any task's.
            let ended = std::panic::catch_unwind(AssertUnwindSafe(|| rt.block_on(run)));
            let _ = done_tx.send(ended);
        })
        .expect("a thread for the simulation");
    tokio::spawn(async move {
        if let Ok(Err(payload)) = done.await {
            std::panic::resume_unwind(payload);
        }
    })
}

/// The order a pass reconciles its workloads in: Deployments last, each
/// right after its own ReplicaSets, since its status sums theirs, which the
/// pass may have just written. Side by side, a Deployment finds its
/// ReplicaSets' trees still held (`stored::Recent`) instead of parsing
/// them again after every other workload of a large pass (the first one
/// of a copy of a cluster, 14,500 workloads).
fn owners_in_order<'a>(
    store: &Store,
    owners: &'a BTreeSet<(Resource, Key)>,
) -> Vec<&'a (Resource, Key)> {
    let mut others: BTreeSet<&(Resource, Key)> = owners
        .iter()
        .filter(|(res, _)| *res != Resource::Deployments)
        .collect();
    let mut last = Vec::new();
    for deployment in owners
        .iter()
        .filter(|(res, _)| *res == Resource::Deployments)
    {
        let uid = store.get(deployment.0, &deployment.1).and_then(|d| {
            d.at("/metadata/uid")
                .and_then(|u| u.as_str().map(str::to_string))
        });
        for rs in uid.map_or_else(Vec::new, |uid| store.owned_of(Resource::ReplicaSets, &uid)) {
            if let Some(owned) = others.take(&(Resource::ReplicaSets, rs)) {
                last.push(owned);
            }
        }
        last.push(deployment);
    }
    others.into_iter().chain(last).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn a_deployment_reconciles_right_after_its_own_replicasets() {
        let mut store = Store::new(100);
        let key = |name: &str| ("shop".to_string(), name.to_string());
        for d in ["api", "web"] {
            store
                .load(
                    Resource::Deployments,
                    json!({"metadata": {"name": d, "namespace": "shop", "uid": d}}),
                )
                .unwrap();
        }
        for (rs, owner) in [
            ("api-1", Some("api")),
            ("api-2", Some("api")),
            ("lone", None),
            ("web-1", Some("web")),
        ] {
            let owners: Vec<Value> = owner
                .map(|o| json!({"kind": "Deployment", "name": o, "uid": o, "controller": true}))
                .into_iter()
                .collect();
            store
                .load(
                    Resource::ReplicaSets,
                    json!({"metadata": {"name": rs, "namespace": "shop", "ownerReferences": owners}}),
                )
                .unwrap();
        }
        let mut owners: BTreeSet<(Resource, Key)> = BTreeSet::new();
        for d in ["api", "web"] {
            owners.insert((Resource::Deployments, key(d)));
        }
        // web-1 has no work of its own in this pass; a StatefulSet has.
        for rs in ["api-1", "api-2", "lone"] {
            owners.insert((Resource::ReplicaSets, key(rs)));
        }
        owners.insert((Resource::StatefulSets, key("db")));
        let order: Vec<(Resource, &str)> = owners_in_order(&store, &owners)
            .into_iter()
            .map(|(r, k)| (*r, k.1.as_str()))
            .collect();
        assert_eq!(order.len(), owners.len(), "each once: {order:?}");
        let at = |r: Resource, n: &str| order.iter().position(|o| *o == (r, n)).unwrap();
        let api = at(Resource::Deployments, "api");
        assert_eq!(
            (
                at(Resource::ReplicaSets, "api-1"),
                at(Resource::ReplicaSets, "api-2")
            ),
            (api - 2, api - 1),
            "{order:?}"
        );
        assert!(at(Resource::ReplicaSets, "lone") < at(Resource::Deployments, "api"));
        assert!(at(Resource::StatefulSets, "db") < at(Resource::Deployments, "api"));
        assert!(
            order
                .iter()
                .skip(api)
                .all(|(r, _)| matches!(r, Resource::Deployments | Resource::ReplicaSets))
        );
    }
}
