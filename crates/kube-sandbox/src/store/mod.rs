//! The sandbox's etcd: every object as JSON bytes (crate::stored), one global
//! resourceVersion, a bounded history of changes for watches per resource
//! (kube-apiserver keeps one watch cache per resource, each with its own
//! capacity: staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go,
//! up to `defaultUpperBoundCapacity`, 100 * 1024 events; so a burst of
//! Events or budget writes never expires a pod watch), and indexes
//! for the lookups a drain and the controllers make often (pods by node,
//! objects by owner), each a small type in `indexes/`.
//!
//! All writes go through here so that each bumps the resourceVersion, records
//! one watch event and tells the simulator what changed.

use foldhash::{HashMap, HashMapExt};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::api_error::ApiError;
use crate::clock::{IdGen, now_rfc3339};
use crate::objects::{nodes, pods};
use crate::resources::Resource;
use crate::stored::{self, Held, Recent, Stored};
use kube_conventions::selector::Selector;

mod indexes;
mod node_triggers;

use indexes::Indexes;
pub(crate) use indexes::{NodeInfo, Requested, Scale};
use node_triggers::NodeTriggers;

/// (namespace, name); the namespace is empty for cluster-scoped objects.
pub(crate) type Key = (String, String);

pub(crate) fn key_of(obj: &Value) -> Key {
    let meta = &obj["metadata"];
    (
        meta["namespace"].as_str().unwrap_or_default().to_string(),
        meta["name"].as_str().unwrap_or_default().to_string(),
    )
}

/// A watch event's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// An object was created.
    Added,
    /// An object was written.
    Modified,
    /// An object was removed.
    Deleted,
}

impl EventType {
    /// As the API writes it: ADDED, MODIFIED, DELETED.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change in the watch history.
#[derive(Debug)]
pub struct WatchEvent {
    /// The resourceVersion the change made.
    pub rv: u64,
    /// The kind of object changed.
    pub resource: Resource,
    /// Added, modified or deleted.
    pub kind: EventType,
    object: Stored,
    /// The object before the change, so a watch can tell when a change moves
    /// an object into or out of its selector.
    old: Option<Stored>,
    /// For a pod, what scans read of `object` and of `old`: enough for a
    /// watch by node or labels to decide without parsing either.
    facts: [Option<Arc<pods::Facts>>; 2],
    /// When the change happened (tests compare it with the request log).
    pub at: std::time::SystemTime,
}

impl WatchEvent {
    /// The object as the change left it (as it was, for a deletion).
    pub fn object(&self) -> Arc<Value> {
        self.object.value()
    }

    /// The object before a modification.
    pub fn old(&self) -> Option<Arc<Value>> {
        self.old.as_ref().map(Stored::value)
    }

    /// The object's JSON, as the event carries it.
    pub(crate) fn object_json(&self) -> std::borrow::Cow<'_, [u8]> {
        self.object.json()
    }

    /// A pod's facts as the change left it.
    pub(crate) fn facts(&self) -> Option<&pods::Facts> {
        self.facts[0].as_deref()
    }

    /// A modified pod's facts before the change.
    pub(crate) fn old_facts(&self) -> Option<&pods::Facts> {
        self.facts[1].as_deref()
    }
}

/// What the simulator hears about every write.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) resource: Resource,
    /// What the change replaced or deleted, as its JSON (`Stored::compacted`).
    pub(crate) old: Option<Stored>,
    pub(crate) new: Option<Arc<Value>>,
    /// The tree of `old`, held while the change waits to be handled so
    /// that the simulation does not parse it again (`Held`).
    _held: Option<Held>,
    /// When it was written (crate::lag: how long it waited).
    pub(crate) at: std::time::Instant,
}

/// At most this many replaced or deleted trees are held for the
/// simulation at once (`Held`): a few rounds' worth. A queue longer than
/// that (a reconcile rewriting thousands of workloads) holds only JSON.
const HELD_TREES: usize = 2048;

pub(crate) struct Store {
    rv: u64,
    tables: HashMap<Resource, BTreeMap<Key, Stored>>,
    indexes: Indexes,
    /// Each resource's changes, oldest first, at most `history_limit`.
    history: HashMap<Resource, VecDeque<Arc<WatchEvent>>>,
    history_limit: usize,
    /// Watches of a resource may resume from its floor or later; older is
    /// 410 Expired.
    floors: HashMap<Resource, u64>,
    /// Every version before this is too old, whatever the resource
    /// (`compact`).
    compacted: u64,
    /// The version just before the first change recorded: what was loaded
    /// before it has no watch event, so, as from a watch cache started on
    /// a list, resuming from an older version is 410 Expired.
    started: u64,
    changes: Option<mpsc::UnboundedSender<Change>>,
    /// How many trees the queued changes hold (`Held`).
    held: Arc<AtomicUsize>,
    latest: watch::Sender<u64>,
    /// Pod watches by their `spec.nodeName` trigger (`NodeTriggers`).
    node_triggers: NodeTriggers,
    /// Workloads kept as JSON (`Options::compact_workloads`), and their
    /// trees read last (`stored::Recent`).
    compact_workloads: bool,
    recent: Recent,
    pub(crate) ids: IdGen,
}

/// Too-old watch resourceVersion: answered with a 410 `Expired` ERROR event.
#[derive(Debug)]
pub(crate) struct Expired {
    pub(crate) requested: u64,
    pub(crate) oldest: u64,
}

impl Store {
    pub(crate) fn new(history_limit: usize) -> Self {
        let (latest, _) = watch::channel(1);
        Store {
            rv: 1,
            tables: HashMap::new(),
            indexes: Indexes::default(),
            history: HashMap::new(),
            history_limit: history_limit.max(1),
            floors: HashMap::new(),
            compacted: 0,
            started: 0,
            changes: None,
            held: Arc::new(AtomicUsize::new(0)),
            latest,
            node_triggers: NodeTriggers::default(),
            compact_workloads: false,
            recent: Recent::default(),
            ids: IdGen::from_time(),
        }
    }

    /// Keeps workloads as JSON from now on (`Options::compact_workloads`).
    pub(crate) fn compact_workloads(&mut self) {
        self.compact_workloads = true;
    }

    /// Whether an object of `res` is kept as JSON.
    fn kept_as_json(&self, res: Resource) -> bool {
        stored::compact(res, self.compact_workloads)
    }

    /// Every write after this is also sent to `tx` (the simulator).
    pub(crate) fn set_change_listener(&mut self, tx: mpsc::UnboundedSender<Change>) {
        self.changes = Some(tx);
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.latest.subscribe()
    }

    /// Woken only by changes of pods on `node` (before or after the change).
    pub(crate) fn subscribe_node(&mut self, node: &str) -> watch::Receiver<u64> {
        self.node_triggers.subscribe(node, self.rv)
    }

    /// The changes of pods on `node` after `rv`, as `events_since` gives
    /// them: an event of the node's no longer kept is 410 Expired; others'
    /// are not this watch's to miss.
    pub(crate) fn pod_events_on(
        &self,
        node: &str,
        rv: u64,
    ) -> Result<Vec<Arc<WatchEvent>>, Expired> {
        let floor = self.history_floor(Resource::Pods);
        let expired = Expired {
            requested: rv,
            oldest: floor,
        };
        let history = self.history.get(&Resource::Pods);
        let mut out = Vec::new();
        for at in self.node_triggers.touched_after(node, rv) {
            if at <= floor {
                return Err(expired);
            }
            let event = history.and_then(|h| {
                let i = h.partition_point(|e| e.rv < at);
                h.get(i).filter(|e| e.rv == at)
            });
            match event {
                Some(e) => out.push(e.clone()),
                None => return Err(expired),
            }
        }
        Ok(out)
    }

    pub(crate) fn resource_version(&self) -> u64 {
        self.rv
    }

    pub(crate) fn get(&self, res: Resource, key: &Key) -> Option<Arc<Value>> {
        let tree = self.tables.get(&res)?.get(key)?.value();
        if self.compact_workloads && stored::workload(res) {
            self.recent.hold(&tree);
        }
        Some(tree)
    }

    /// A node by its name.
    pub(crate) fn node(&self, name: &str) -> Option<Arc<Value>> {
        self.get(Resource::Nodes, &(String::new(), name.to_string()))
    }

    /// An object as stored, unparsed.
    pub(crate) fn doc(&self, res: Resource, key: &Key) -> Option<&Stored> {
        self.tables.get(&res)?.get(key)
    }

    fn contains(&self, res: Resource, key: &Key) -> bool {
        self.tables.get(&res).is_some_and(|t| t.contains_key(key))
    }

    pub(crate) fn len(&self, res: Resource) -> usize {
        self.tables.get(&res).map_or(0, BTreeMap::len)
    }

    /// Objects of one resource, in key order, optionally in one namespace,
    /// starting after `after` (for `continue`), each parsed as it is reached.
    pub(crate) fn iter<'a>(
        &'a self,
        res: Resource,
        namespace: Option<&'a str>,
        after: Option<&Key>,
    ) -> impl Iterator<Item = (&'a Key, Arc<Value>)> + 'a {
        self.docs(res, namespace, after)
            .map(|(k, d)| (k, d.value()))
    }

    /// The stored documents behind `iter`.
    pub(crate) fn docs<'a>(
        &'a self,
        res: Resource,
        namespace: Option<&'a str>,
        after: Option<&Key>,
    ) -> Box<dyn Iterator<Item = (&'a Key, &'a Stored)> + 'a> {
        let Some(table) = self.tables.get(&res) else {
            return Box::new(std::iter::empty());
        };
        let start: Key = match (after, namespace) {
            (Some(k), _) => k.clone(),
            (None, Some(ns)) => (ns.to_string(), String::new()),
            (None, None) => (String::new(), String::new()),
        };
        let range = table.range(start.clone()..);
        let skip_start = after.is_some();
        Box::new(
            range
                .skip_while(move |(k, _)| skip_start && **k == start)
                .take_while(move |(k, _)| namespace.is_none_or(|ns| k.0 == ns)),
        )
    }

    /// What scans read of every pod, optionally of one namespace.
    pub(crate) fn pod_facts<'a>(
        &'a self,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a Key, &'a pods::Facts)> + 'a {
        self.indexes.pod_facts.all(namespace)
    }

    /// The pods of a namespace a selector matches, with their facts. A
    /// selector requiring a label's value (`=`, `in`) reads its candidates
    /// from the label index, the fewest first; any other scans the namespace.
    pub(crate) fn pods_selected<'a>(
        &'a self,
        namespace: &'a str,
        selector: &Selector,
    ) -> Vec<(&'a Key, &'a pods::Facts)> {
        let Selector::All(reqs) = selector else {
            return Vec::new();
        };
        let by_label = &self.indexes.pods_by_label;
        let fewest = reqs
            .iter()
            .filter_map(|r| by_label.candidates(namespace, r))
            .min_by_key(Vec::len);
        let Some(fewest) = fewest else {
            return self
                .pod_facts(Some(namespace))
                .filter(|(_, f)| f.matches(selector))
                .collect();
        };
        fewest
            .into_iter()
            .filter_map(|k| self.indexes.pod_facts.entry(k))
            .filter(|(_, f)| f.matches(selector))
            .collect()
    }

    /// A scalable workload's replicas and controller, unparsed.
    pub(crate) fn scale_of(&self, res: Resource, key: &Key) -> Option<&Scale> {
        self.indexes.scales.of(res, key)
    }

    /// The PodDisruptionBudgets of a namespace whose selector matches the
    /// object's labels.
    pub(crate) fn budgets_selecting(&self, namespace: &str, object: &Value) -> Vec<Key> {
        self.indexes.budgets_by_label.selecting(namespace, object)
    }

    /// The PodDisruptionBudgets of the pod's namespace that select it.
    pub(crate) fn budgets_of_pod(&self, pod: &Value) -> Vec<Key> {
        let ns = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        self.budgets_selecting(ns, pod)
    }

    /// Every node with what the scheduler knows of it, in name order from
    /// the first after `after` round to `after` itself: the table of nodes
    /// and their NodeInfo walked side by side, so a scheduling cycle over
    /// hundreds of nodes looks none of them up.
    pub(crate) fn nodes_to_schedule_on<'a>(
        &'a self,
        after: Option<&str>,
    ) -> impl Iterator<Item = (&'a String, &'a Value, &'a nodes::Facts, &'a NodeInfo)> + use<'a>
    {
        let after = after.map(|a| (String::new(), a.to_string()));
        let (rest, head) = match &after {
            Some(a) => ((Excluded(a), Unbounded), (Unbounded, Included(a))),
            // `head` is empty: Excluded of the least key there is.
            None => (
                (Unbounded, Unbounded),
                (Unbounded, Excluded(&(String::new(), String::new()))),
            ),
        };
        self.walk_nodes(rest).chain(self.walk_nodes(head))
    }

    fn walk_nodes<'a>(
        &'a self,
        range: (Bound<&Key>, Bound<&Key>),
    ) -> impl Iterator<Item = (&'a String, &'a Value, &'a nodes::Facts, &'a NodeInfo)> + use<'a>
    {
        let names = (range.0.map(|k| k.1.as_str()), range.1.map(|k| k.1.as_str()));
        let mut infos = self.indexes.node_infos.nodes(names).peekable();
        let table = self.tables.get(&Resource::Nodes);
        let docs = table
            .map(|t| t.range::<Key, _>(range))
            .into_iter()
            .flatten();
        docs.filter_map(move |((_, name), doc)| {
            while infos.next_if(|(n, _, _)| *n < name).is_some() {}
            let (_, facts, info) = infos.next_if(|(n, _, _)| *n == name)?;
            // Nodes are kept parsed (`Stored::Kept`): borrowed, not cloned.
            Some((name, doc.kept()?, facts, info))
        })
    }

    /// What scans read of one pod.
    pub(crate) fn pod_facts_of(&self, key: &Key) -> Option<&pods::Facts> {
        self.indexes.pod_facts.entry(key).map(|(_, f)| f)
    }

    /// A pod's facts, shared, for a watch event (none for other kinds).
    fn shared_facts(&self, res: Resource, key: &Key) -> Option<Arc<pods::Facts>> {
        (res == Resource::Pods)
            .then(|| self.indexes.pod_facts.shared(key))
            .flatten()
    }

    /// Keys of the pods bound to a node, from the index.
    pub(crate) fn pods_on_node(&self, node: &str) -> Vec<Key> {
        self.indexes.pods_by_node.on(node)
    }

    /// Bound pods with required pod anti-affinity terms.
    pub(crate) fn anti_affine_pods(&self) -> impl Iterator<Item = &Key> {
        self.indexes.anti_affine.iter()
    }

    /// Keys of the pods whose ownerReferences name this uid.
    pub(crate) fn pods_owned_by(&self, uid: &str) -> Vec<Key> {
        self.owned_of(Resource::Pods, uid)
    }

    /// The facts of the pods whose ownerReferences name this uid, borrowed
    /// (a controller's reconcile reads them after every change of one).
    pub(crate) fn owned_pod_facts(&self, uid: &str) -> impl Iterator<Item = (&Key, &pods::Facts)> {
        self.indexes
            .owned_by
            .keys_of(Resource::Pods, uid)
            .filter_map(|k| self.indexes.pod_facts.entry(k))
    }

    /// Objects of one resource whose ownerReferences name `uid`.
    pub(crate) fn owned_of(&self, res: Resource, uid: &str) -> Vec<Key> {
        self.indexes.owned_by.of(res, uid)
    }

    /// Watch events after `rv` for one resource, or `Expired` when its
    /// history no longer reaches back that far.
    pub(crate) fn events_since(
        &self,
        res: Resource,
        rv: u64,
    ) -> Result<Vec<Arc<WatchEvent>>, Expired> {
        let floor = self.history_floor(res);
        if rv < floor {
            return Err(Expired {
                requested: rv,
                oldest: floor,
            });
        }
        let Some(history) = self.history.get(&res) else {
            return Ok(Vec::new());
        };
        // History is ordered by rv: binary-search the start.
        let start = history.partition_point(|e| e.rv <= rv);
        Ok(history.range(start..).cloned().collect())
    }

    /// The oldest resourceVersion a resource's history still reaches back to.
    pub(crate) fn history_floor(&self, res: Resource) -> u64 {
        self.floors
            .get(&res)
            .copied()
            .unwrap_or(self.started)
            .max(self.compacted)
    }

    /// Drops all watch history: every resourceVersion before now is too old.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.rv += 1;
        self.compacted = self.rv;
        let _ = self.latest.send(self.rv);
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Tells the simulator and the watches. `object` is the object the
    /// change left (as it was, for a deletion), `old` what it replaced.
    fn record(
        &mut self,
        res: Resource,
        kind: EventType,
        object: (&Arc<Value>, Stored),
        old: Option<(&Arc<Value>, &Stored)>,
        facts: [Option<Arc<pods::Facts>>; 2],
    ) {
        let rv = self.rv;
        // Only the store's current version stays a tree; what it replaced
        // or deleted is kept as JSON.
        let old_doc = old.map(|(_, doc)| doc.compacted());
        let object_doc = match kind {
            EventType::Deleted => object.1.compacted(),
            _ => object.1,
        };
        // No controller reacts to an Event written (kube-controller-manager
        // watches none); one deleted may leave a namespace being deleted
        // empty.
        // A third of the writes of a busy drain are Events: the simulation
        // is not told of them, so the changes it must act on do not queue
        // behind them.
        let told = res != Resource::Events || kind == EventType::Deleted;
        if let Some(tx) = self.changes.as_ref().filter(|_| told) {
            let (o, n, tree) = match kind {
                EventType::Deleted => (Some(object_doc.clone()), None, Some(object.0)),
                _ => (
                    old_doc.clone(),
                    Some(object.0.clone()),
                    old.map(|(tree, _)| tree),
                ),
            };
            let _ = tx.send(Change {
                resource: res,
                old: o,
                new: n,
                _held: tree.and_then(|t| Held::new(t, &self.held, HELD_TREES)),
                at: std::time::Instant::now(),
            });
        }
        if self.started == 0 {
            self.started = rv - 1;
        }
        let pod_facts = (res == Resource::Pods).then(|| facts.clone());
        let history = self.history.entry(res).or_default();
        history.push_back(Arc::new(WatchEvent {
            rv,
            resource: res,
            kind,
            object: object_doc,
            old: old_doc,
            facts,
            at: std::time::SystemTime::from(crate::clock::now()),
        }));
        while history.len() > self.history_limit {
            if let Some(dropped) = history.pop_front() {
                // Resuming from `dropped.rv` still works: what follows it is kept.
                self.floors.insert(res, dropped.rv);
            }
        }
        if let Some(facts) = pod_facts {
            let floor = self.history_floor(res);
            let nodes = facts.iter().flatten().filter_map(|f| f.node.as_deref());
            self.node_triggers.touch(nodes, rv, floor);
        }
        let _ = self.latest.send(rv);
    }

    fn index(&mut self, res: Resource, key: &Key, obj: &Value, add: bool) {
        self.indexes.apply(res, key, obj, add);
    }

    /// Stores an object as loaded from a scenario: no watch event, its own
    /// uid and timestamps kept, resourceVersion assigned.
    pub(crate) fn load(&mut self, res: Resource, mut obj: Value) -> Result<(), ApiError> {
        let key = key_of(&obj);
        if self.contains(res, &key) {
            return Err(ApiError::already_exists(res, &key.1));
        }
        self.stamp_new(res, &mut obj, false);
        let rv = self.next_rv();
        obj["metadata"]["resourceVersion"] = json!(rv.to_string());
        self.index(res, &key, &obj, true);
        let doc = Stored::new(&Arc::new(obj), self.kept_as_json(res));
        self.tables.entry(res).or_default().insert(key, doc);
        Ok(())
    }

    /// Takes back an object loaded before the simulation started (no event).
    pub(crate) fn unload(&mut self, res: Resource, key: &Key) {
        if let Some(old) = self.tables.get_mut(&res).and_then(|t| t.remove(key)) {
            self.index(res, key, &old.value(), false);
        }
    }

    fn stamp_new(&mut self, res: Resource, obj: &mut Value, fresh: bool) {
        let info = res.info();
        obj["apiVersion"] = json!(res.api_version());
        obj["kind"] = json!(info.kind);
        let meta = obj
            .as_object_mut()
            .expect("object")
            .entry("metadata")
            .or_insert_with(|| json!({}));
        if fresh || meta.get("uid").and_then(Value::as_str).is_none() {
            meta["uid"] = json!(self.ids.uid());
        }
        if fresh
            || meta
                .get("creationTimestamp")
                .and_then(Value::as_str)
                .is_none()
        {
            meta["creationTimestamp"] = json!(now_rfc3339());
        }
        if res.has_generation() && (fresh || meta.get("generation").is_none()) {
            meta["generation"] = json!(1);
        }
        if fresh && let Some(m) = meta.as_object_mut() {
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
        }
        if res == Resource::Jobs {
            crate::objects::jobs::selector(obj);
        }
    }

    /// Creates an object: fills in name from `generateName`, uid, timestamps.
    pub(crate) fn create(&mut self, res: Resource, mut obj: Value) -> Result<Arc<Value>, ApiError> {
        drop_empty_metadata(&mut obj);
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request was not an object",
            ));
        }
        let meta = &mut obj["metadata"];
        if meta["name"].as_str().is_none_or(str::is_empty) {
            let Some(prefix) = meta["generateName"].as_str().map(str::to_string) else {
                return Err(ApiError::invalid(
                    res,
                    "",
                    "metadata.name: Required value: name or generateName is required",
                ));
            };
            // Retry on the (unlikely) collision like the apiserver's name generator.
            let ns = meta["namespace"].as_str().unwrap_or_default().to_string();
            let name = loop {
                let candidate = format!("{prefix}{}", self.ids.name_suffix());
                if !self.contains(res, &(ns.clone(), candidate.clone())) {
                    break candidate;
                }
            };
            meta["name"] = json!(name);
        }
        if let Some(m) = meta.as_object_mut() {
            m.remove("resourceVersion");
        }
        let key = key_of(&obj);
        if self.contains(res, &key) {
            return Err(ApiError::already_exists(res, &key.1));
        }
        self.stamp_new(res, &mut obj, true);
        let rv = self.next_rv();
        obj["metadata"]["resourceVersion"] = json!(rv.to_string());
        self.index(res, &key, &obj, true);
        let obj = Arc::new(obj);
        let doc = Stored::new(&obj, self.kept_as_json(res));
        let facts = [self.shared_facts(res, &key), None];
        self.tables.entry(res).or_default().insert(key, doc.clone());
        self.record(res, EventType::Added, (&obj, doc), None, facts);
        Ok(obj)
    }

    /// Replaces an object. With `check_rv`, a `metadata.resourceVersion` in
    /// `obj` that is not the stored one is a 409 Conflict; generation rises
    /// when spec changes. What clients may not change is the API layer's
    /// business (`api::keep_immutable`).
    pub(crate) fn update(
        &mut self,
        res: Resource,
        obj: Value,
        check_rv: bool,
    ) -> Result<Arc<Value>, ApiError> {
        let key = key_of(&obj);
        let Some(old) = self.get(res, &key) else {
            return Err(ApiError::not_found(res, &key.1));
        };
        self.replace(res, key, old, obj, check_rv)
    }

    /// `update` of the object now stored as `old`, already read.
    fn replace(
        &mut self,
        res: Resource,
        key: Key,
        old: Arc<Value>,
        mut obj: Value,
        check_rv: bool,
    ) -> Result<Arc<Value>, ApiError> {
        let old_rv = old["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        if check_rv
            && let Some(rv) = obj["metadata"]["resourceVersion"].as_str()
            && !rv.is_empty()
            && rv != old_rv
        {
            return Err(ApiError::conflict(res, &key.1));
        }
        obj["apiVersion"] = json!(res.api_version());
        obj["kind"] = json!(res.info().kind);
        drop_empty_metadata(&mut obj);
        if res.has_generation() {
            let gen_old = old["metadata"]["generation"].as_i64().unwrap_or(1);
            let spec_changed = old.get("spec") != obj.get("spec");
            obj["metadata"]["generation"] = json!(if spec_changed { gen_old + 1 } else { gen_old });
        }
        // A write that changes nothing is not a write (the apiserver skips it too).
        obj["metadata"]["resourceVersion"] = json!(old_rv);
        if *old == obj {
            return Ok(old);
        }
        let old_facts = self.shared_facts(res, &key);
        let rv = self.next_rv();
        obj["metadata"]["resourceVersion"] = json!(rv.to_string());
        self.indexes.replace(res, &key, &old, &obj);
        let facts = [self.shared_facts(res, &key), old_facts];
        let obj = Arc::new(obj);
        let doc = Stored::new(&obj, self.kept_as_json(res));
        let old_doc = self
            .tables
            .entry(res)
            .or_default()
            .insert(key, doc.clone())
            .expect("the object was there");
        self.record(
            res,
            EventType::Modified,
            (&obj, doc),
            Some((&old, &old_doc)),
            facts,
        );
        Ok(obj)
    }

    /// Removes an object for good (the end of a deletion).
    pub(crate) fn remove(&mut self, res: Resource, key: &Key) -> Option<Arc<Value>> {
        let old = self.tables.get_mut(&res)?.remove(key)?.value();
        let facts = [self.shared_facts(res, key), None];
        self.index(res, key, &old, false);
        let rv = self.next_rv();
        let mut gone = (*old).clone();
        gone["metadata"]["resourceVersion"] = json!(rv.to_string());
        let gone = Arc::new(gone);
        let doc = Stored::new(&gone, self.kept_as_json(res));
        self.record(res, EventType::Deleted, (&gone, doc), None, facts);
        Some(gone)
    }

    /// Applies `f` to a copy of the stored object and writes the result.
    pub(crate) fn modify(
        &mut self,
        res: Resource,
        key: &Key,
        f: impl FnOnce(&mut Value),
    ) -> Result<Arc<Value>, ApiError> {
        let Some(old) = self.get(res, key) else {
            return Err(ApiError::not_found(res, &key.1));
        };
        let mut obj = (*old).clone();
        f(&mut obj);
        let written = key_of(&obj);
        if written != *key {
            return self.update(res, obj, false);
        }
        // Written back over the version just read: not parsed a second time.
        self.replace(res, written, old, obj, false)
    }

    /// Objects whose ownerReferences name `uid`, of any resource (for garbage collection).
    pub(crate) fn dependents_of(&self, uid: &str) -> Vec<(Resource, Key)> {
        self.indexes.owned_by.all(uid)
    }
}

/// ObjectMeta's maps and lists are `omitempty`: the apiserver stores and
/// serves no `annotations: {}` (a merge patch that removes the last
/// annotation leaves none), and neither labels, finalizers nor
/// ownerReferences when empty (k8s.io/apimachinery pkg/apis/meta/v1 types.go).
fn drop_empty_metadata(obj: &mut Value) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    for field in ["labels", "annotations", "finalizers", "ownerReferences"] {
        let empty = match meta.get(field) {
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Null) => true,
            _ => false,
        };
        if empty {
            meta.remove(field);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    fn pod(name: &str, node: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "default"}, "spec": {"nodeName": node}})
    }

    #[test]
    fn workloads_kept_as_json_read_and_index_as_trees_do() {
        let key = ("default".to_string(), "rs".to_string());
        let answers = |compact: bool| {
            let mut s = Store::new(100);
            if compact {
                s.compact_workloads();
            }
            let rs = json!({"metadata": {"name": "rs", "namespace": "default", "ownerReferences": [
                {"kind": "Deployment", "name": "d", "uid": "u", "controller": true}]},
                "spec": {"replicas": 2}});
            s.create(Resource::ReplicaSets, rs).unwrap();
            s.modify(Resource::ReplicaSets, &key, |rs| {
                rs["spec"]["replicas"] = json!(3);
            })
            .unwrap();
            let got = s.get(Resource::ReplicaSets, &key).unwrap();
            let json: Value =
                serde_json::from_slice(&s.doc(Resource::ReplicaSets, &key).unwrap().json())
                    .unwrap();
            assert_eq!(*got, json);
            (
                got["spec"].clone(),
                s.scale_of(Resource::ReplicaSets, &key).cloned(),
                s.owned_of(Resource::ReplicaSets, "u"),
                s.doc(Resource::ReplicaSets, &key).unwrap().kept().is_none(),
            )
        };
        let (tree, compact) = (answers(false), answers(true));
        assert_eq!(
            (&tree.0, &tree.1, &tree.2),
            (&compact.0, &compact.1, &compact.2)
        );
        assert_eq!(tree.1.map(|s| s.replicas), Some(3));
        assert!(!tree.3 && compact.3, "kept as a tree, then as JSON");
        // A budget too, and it is still found by its pods' labels.
        let mut s = Store::new(100);
        s.compact_workloads();
        let pdb = json!({"metadata": {"name": "b", "namespace": "default"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}});
        s.create(Resource::PodDisruptionBudgets, pdb).unwrap();
        let b = ("default".to_string(), "b".to_string());
        let doc = s.doc(Resource::PodDisruptionBudgets, &b).unwrap();
        assert!(doc.kept().is_none(), "a budget kept as JSON");
        let mut web = pod("w", "n1");
        web["metadata"]["labels"] = json!({"app": "web"});
        assert_eq!(s.budgets_of_pod(&web), vec![b]);
    }

    #[test]
    fn writes_bump_versions_and_record_history() {
        let mut s = Store::new(100);
        let a = s.create(Resource::Pods, pod("a", "n1")).unwrap();
        let rv_a: u64 = a["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let mut changed = (*a).clone();
        changed["metadata"]["labels"] = json!({"x": "y"});
        s.update(Resource::Pods, changed, true).unwrap();
        s.remove(Resource::Pods, &("default".into(), "a".into()));
        let events = s.events_since(Resource::Pods, rv_a - 1).unwrap();
        let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [EventType::Added, EventType::Modified, EventType::Deleted]
        );
        assert!(events.windows(2).all(|w| w[0].rv < w[1].rv));
    }

    #[test]
    fn selected_pods_come_from_the_label_index_as_a_scan_would_find_them() {
        fn names(s: &Store, sel: &str) -> Vec<String> {
            let sel = Selector::parse(sel).unwrap();
            let indexed: Vec<String> = s
                .pods_selected("default", &sel)
                .iter()
                .map(|(k, _)| k.1.clone())
                .collect();
            let scanned: Vec<String> = s
                .pod_facts(Some("default"))
                .filter(|(_, f)| f.matches(&sel))
                .map(|(k, _)| k.1.clone())
                .collect();
            assert_eq!(indexed, scanned, "{sel:?}");
            indexed
        }
        let mut s = Store::new(100);
        for (name, app, tier) in [
            ("a", "web", "front"),
            ("b", "web", "back"),
            ("c", "db", "back"),
        ] {
            let mut p = pod(name, "n1");
            p["metadata"]["labels"] = json!({"app": app, "tier": tier});
            s.create(Resource::Pods, p).unwrap();
        }
        assert_eq!(names(&s, "app=web"), ["a", "b"]);
        assert_eq!(names(&s, "app=web,tier=back"), ["b"]);
        assert_eq!(names(&s, "app in (web,db),tier!=front"), ["b", "c"]);
        assert_eq!(names(&s, "tier"), ["a", "b", "c"]);
        assert!(names(&s, "app=none").is_empty());
        // A label changed or a pod removed leaves the index.
        let mut b = (*s
            .get(Resource::Pods, &("default".into(), "b".into()))
            .unwrap())
        .clone();
        b["metadata"]["labels"]["app"] = json!("db");
        s.update(Resource::Pods, b, true).unwrap();
        s.remove(Resource::Pods, &("default".into(), "a".into()));
        assert!(names(&s, "app=web").is_empty());
        assert_eq!(names(&s, "app=db"), ["b", "c"]);
    }

    #[test]
    fn the_budgets_over_a_pod_come_from_their_index() {
        let mut s = Store::new(100);
        let pdb = |name: &str, selector: Value| json!({"metadata": {"name": name, "namespace": "default"}, "spec": {"selector": selector}});
        let budgets = [
            pdb("web", json!({"matchLabels": {"app": "web"}})),
            pdb(
                "back",
                json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["back"]}]}),
            ),
            pdb("all", json!({})),
            pdb("none", Value::Null),
        ];
        for b in budgets {
            s.create(Resource::PodDisruptionBudgets, b).unwrap();
        }
        let over = |s: &Store, labels: Value| -> Vec<String> {
            let pod = json!({"metadata": {"namespace": "default", "labels": labels}});
            s.budgets_selecting("default", &pod)
                .into_iter()
                .map(|k| k.1)
                .collect()
        };
        assert_eq!(
            over(&s, json!({"app": "web", "tier": "back"})),
            ["all", "back", "web"]
        );
        assert_eq!(over(&s, json!({"app": "db"})), ["all"]);
        // A budget whose selector changes is found by its new one only.
        let key = ("default".to_string(), "web".to_string());
        let mut web = (*s.get(Resource::PodDisruptionBudgets, &key).unwrap()).clone();
        web["spec"]["selector"] = json!({"matchLabels": {"app": "db"}});
        s.update(Resource::PodDisruptionBudgets, web, true).unwrap();
        assert_eq!(over(&s, json!({"app": "db"})), ["all", "web"]);
        assert_eq!(over(&s, json!({"app": "web"})), ["all"]);
    }

    #[test]
    fn stale_resource_version_conflicts() {
        let mut s = Store::new(100);
        let a = s.create(Resource::Pods, pod("a", "n1")).unwrap();
        let mut first = (*a).clone();
        first["metadata"]["labels"] = json!({"v": "1"});
        s.update(Resource::Pods, first, true).unwrap();
        let mut stale = (*a).clone();
        stale["metadata"]["labels"] = json!({"v": "2"});
        let err = s.update(Resource::Pods, stale, true).unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(err.reason, "Conflict");
    }

    #[test]
    fn short_history_expires_old_versions() {
        let mut s = Store::new(2);
        for i in 0..5 {
            s.create(Resource::Pods, pod(&format!("p{i}"), "n1"))
                .unwrap();
        }
        assert!(s.events_since(Resource::Pods, 1).is_err());
        assert_eq!(
            s.events_since(Resource::Pods, s.resource_version() - 1)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn each_resource_keeps_its_own_history() {
        let mut s = Store::new(2);
        s.create(Resource::Pods, pod("p0", "n1")).unwrap();
        let rv = s.resource_version();
        for i in 0..5 {
            s.create(
                Resource::Namespaces,
                json!({"metadata": {"name": format!("ns{i}")}}),
            )
            .unwrap();
        }
        // Five namespace writes later, a pod watch still resumes.
        assert_eq!(s.events_since(Resource::Pods, rv - 1).unwrap().len(), 1);
        assert!(s.events_since(Resource::Namespaces, rv).is_err());
    }

    #[test]
    fn node_index_follows_pods() {
        let mut s = Store::new(10);
        s.create(Resource::Pods, pod("a", "n1")).unwrap();
        s.create(Resource::Pods, pod("b", "n2")).unwrap();
        assert_eq!(
            s.pods_on_node("n1"),
            vec![("default".to_string(), "a".to_string())]
        );
        s.remove(Resource::Pods, &("default".into(), "a".into()));
        assert!(s.pods_on_node("n1").is_empty());
    }

    #[test]
    fn the_simulation_hears_of_every_write_but_an_event_written() {
        let mut s = Store::new(10);
        let (tx, mut rx) = mpsc::unbounded_channel();
        s.set_change_listener(tx);
        let event = json!({"metadata": {"name": "e", "namespace": "default"}, "reason": "Killing"});
        s.create(Resource::Events, event).unwrap();
        s.modify(Resource::Events, &("default".into(), "e".into()), |e| {
            e["count"] = json!(2);
        })
        .unwrap();
        s.create(Resource::Pods, pod("a", "n1")).unwrap();
        s.remove(Resource::Events, &("default".into(), "e".into()));
        let heard: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|c| (c.resource, c.new.is_some()))
            .collect();
        assert_eq!(heard, [(Resource::Pods, true), (Resource::Events, false)]);
    }

    #[test]
    fn queued_changes_hold_at_most_so_many_replaced_trees() {
        let mut s = Store::new(10);
        let (tx, mut rx) = mpsc::unbounded_channel();
        s.set_change_listener(tx);
        s.create(Resource::Pods, pod("a", "n1")).unwrap();
        let key = ("default".to_string(), "a".to_string());
        for i in 0..HELD_TREES + 10 {
            s.modify(Resource::Pods, &key, |p| {
                p["metadata"]["labels"] = json!({"i": i.to_string()});
            })
            .unwrap();
        }
        let queued: Vec<Change> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(queued.len(), HELD_TREES + 11);
        assert_eq!(s.held.load(Ordering::Relaxed), HELD_TREES);
        // The first modification's old version is the tree it replaced.
        let first = queued[1].old.as_ref().unwrap().value();
        assert_eq!(first["metadata"].get("labels"), None);
        drop(queued);
        assert_eq!(s.held.load(Ordering::Relaxed), 0);
    }
}
