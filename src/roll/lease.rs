//! One lock per node: a Lease (coordination.k8s.io/v1) named
//! `kubectl-maintain-<node>`, held by one run of kubectl-maintain at a
//! time, renewed while held, as client-go's leader election uses one
//! (holderIdentity, leaseDurationSeconds, acquireTime, renewTime,
//! leaseTransitions; kubernetes staging/src/k8s.io/client-go/tools/leaderelection).
//! Every write is an update at the resourceVersion read, so two runs never
//! both think they took it. The lease also records where the node's roll
//! is (crate::roll::phase), for a rerun to take it up; releasing it keeps
//! that record and empties the holder.
//!
//! A lease is stale when its holder has not renewed it within its duration,
//! or when its holder was a process on this machine that the OS says no
//! longer runs (crate::roll::holder: a roll killed with kill -9 is taken up
//! at once by its rerun; another user's live roll is not). A stale lease is
//! taken over with a warning.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

use super::phase::{ActionRun, Phase, Record};
use crate::vocabulary::DrainError;
use crate::vocabulary::api_error::api_error;
use crate::vocabulary::warning::Warning;

pub(crate) const ROLL: &str = "kubectl-maintain.io/roll";
pub(crate) const PHASE: &str = "kubectl-maintain.io/phase";
pub(crate) const BOOT_ID: &str = "kubectl-maintain.io/boot-id";
pub(crate) const FINISHED_AT: &str = "kubectl-maintain.io/finished-at";
/// The budgets the node's drain evicted pods of, comma-separated.
pub(crate) const BUDGETS: &str = "kubectl-maintain.io/budgets";
/// When the node's action started (RFC 3339).
pub(crate) const ACTION_STARTED: &str = "kubectl-maintain.io/action-started";
/// Where it runs: `HOST/GROUP`, its machine and process group.
pub(crate) const ACTION_BY: &str = "kubectl-maintain.io/action-by";
/// How it ended: `ok` or `failed`; absent while it may run.
pub(crate) const ACTION_ENDED: &str = "kubectl-maintain.io/action-ended";

/// The lease that locks a node.
pub(crate) fn name(node: &str) -> String {
    format!("{PREFIX}{node}")
}

/// The node a lock's lease is for.
pub(crate) fn node_of(lease: &str) -> Option<&str> {
    lease.strip_prefix(PREFIX)
}

const PREFIX: &str = "kubectl-maintain-";

/// This run's identity as a lease holder (crate::roll::holder).
pub(crate) fn holder() -> String {
    super::holder::ours()
}

use super::holder::gone_from_here;
pub(crate) use super::holder::hostname;

/// What a lease's record says of an earlier run.
pub(crate) fn record(lease: &Lease) -> Option<Record> {
    let a = lease.metadata.annotations.as_ref()?;
    Some(Record {
        roll: a.get(ROLL)?.clone(),
        phase: Phase::parse(a.get(PHASE)?)?,
        boot_id: a.get(BOOT_ID).cloned(),
        finished_at: a
            .get(FINISHED_AT)
            .and_then(|t| kube_conventions::time::parse_time(t))
            .map(k8s_openapi::jiff::Timestamp::as_millisecond),
        budgets: a
            .get(BUDGETS)
            .map(|b| {
                b.split(',')
                    .filter(|k| !k.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        action: action_run(a),
    })
}

fn action_run(a: &std::collections::BTreeMap<String, String>) -> Option<ActionRun> {
    let started_ms = kube_conventions::time::parse_time(a.get(ACTION_STARTED)?)?.as_millisecond();
    let (host, group) = a.get(ACTION_BY)?.rsplit_once('/')?;
    Some(ActionRun {
        started_ms,
        host: host.to_string(),
        group: group.parse().ok()?,
        ended_ok: a.get(ACTION_ENDED).map(|e| e == "ok"),
    })
}

/// Someone else holds the node: who, and for how long at most.
#[derive(Debug, Clone)]
pub(crate) struct HeldBy {
    pub(crate) holder: String,
    pub(crate) expires_in: Duration,
}

/// Seconds since the lease was last renewed (or taken), and its duration.
fn age(lease: &Lease) -> Option<(i64, i64)> {
    let spec = lease.spec.as_ref()?;
    let renewed = spec.renew_time.as_ref().or(spec.acquire_time.as_ref())?;
    let since = kube_conventions::time::now().as_second() - renewed.0.as_second();
    Some((since, i64::from(spec.lease_duration_seconds.unwrap_or(0))))
}

fn current_holder(lease: &Lease) -> Option<&str> {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .filter(|h| !h.is_empty())
}

/// The locks of one run.
#[derive(Clone)]
pub(crate) struct Locks {
    api: Api<Lease>,
    holder: String,
    duration: Duration,
}

/// A node's lease, held by this run; renewed until released or dropped.
pub(crate) struct Lock {
    api: Api<Lease>,
    name: String,
    holder: String,
    lease: Arc<tokio::sync::Mutex<Lease>>,
    /// Set when another holder took the lease from us.
    lost: Arc<Mutex<Option<String>>>,
    renew: tokio::task::JoinHandle<()>,
}

impl Drop for Lock {
    fn drop(&mut self) {
        self.renew.abort();
    }
}

/// Taking a node's lock.
pub(crate) enum Taken {
    /// Ours: what the lease recorded before, and a warning when a stale
    /// holder's lease was taken over.
    Ours {
        lock: Box<Lock>,
        before: Option<Record>,
        took_over: Option<Warning>,
    },
    Held(HeldBy),
}

impl Locks {
    pub(crate) fn new(client: &kube::Client, namespace: &str, duration: Duration) -> Self {
        Locks {
            api: Api::namespaced(client.clone(), namespace),
            holder: holder(),
            duration,
        }
    }

    pub(crate) fn holder(&self) -> &str {
        &self.holder
    }

    /// What each node's lease records, without taking any.
    pub(crate) async fn records(
        &self,
        nodes: &[String],
    ) -> Result<Vec<Option<Record>>, DrainError> {
        let mut out = Vec::new();
        for node in nodes {
            let lease = self
                .api
                .get_opt(&name(node))
                .await
                .map_err(|e| api_error("get", "leases", None, e))?;
            out.push(lease.as_ref().and_then(record));
        }
        Ok(out)
    }

    /// Takes the node's lease if nobody else holds it.
    pub(crate) async fn try_take(&self, node: &str) -> Result<Taken, DrainError> {
        let lease_name = name(node);
        let err = |verb: &'static str| move |e: kube::Error| api_error(verb, "leases", None, e);
        loop {
            let now = MicroTime(kube_conventions::time::now());
            let existing = self.api.get_opt(&lease_name).await.map_err(err("get"))?;
            let Some(mut lease) = existing else {
                let mut lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(lease_name.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(LeaseSpec::default()),
                };
                self.hold(&mut lease, &now, false);
                match self.api.create(&PostParams::default(), &lease).await {
                    Ok(lease) => return Ok(self.ours(node, lease, None, None)),
                    // Someone made it first: read it again.
                    Err(kube::Error::Api(s)) if s.code == 409 => continue,
                    Err(e) => return Err(err("create")(e)),
                }
            };
            let before = record(&lease);
            let mut took_over = None;
            if let Some(h) = current_holder(&lease).filter(|h| *h != self.holder) {
                let (since, duration) = age(&lease).unwrap_or((i64::MAX, 0));
                let expired = since >= duration;
                if !expired && !gone_from_here(h) {
                    return Ok(Taken::Held(HeldBy {
                        holder: h.to_string(),
                        expires_in: Duration::from_secs(
                            u64::try_from(duration - since).unwrap_or(0),
                        ),
                    }));
                }
                took_over = Some(Warning::TookOverLock {
                    node: node.to_string(),
                    holder: h.to_string(),
                    expired: expired.then_some((since, duration)),
                });
            }
            let transition = current_holder(&lease) != Some(self.holder.as_str());
            self.hold(&mut lease, &now, transition);
            match self
                .api
                .replace(&lease_name, &PostParams::default(), &lease)
                .await
            {
                Ok(lease) => return Ok(self.ours(node, lease, before, took_over)),
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => return Err(err("update")(e)),
            }
        }
    }

    fn hold(&self, lease: &mut Lease, now: &MicroTime, transition: bool) {
        let spec = lease.spec.get_or_insert_with(Default::default);
        spec.holder_identity = Some(self.holder.clone());
        spec.lease_duration_seconds = Some(i32::try_from(self.duration.as_secs()).unwrap_or(60));
        spec.acquire_time = Some(now.clone());
        spec.renew_time = Some(now.clone());
        if transition {
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
    }

    fn ours(
        &self,
        node: &str,
        lease: Lease,
        before: Option<Record>,
        took_over: Option<Warning>,
    ) -> Taken {
        let lease = Arc::new(tokio::sync::Mutex::new(lease));
        let lost = Arc::new(Mutex::new(None));
        let renew = tokio::spawn(renew(
            self.api.clone(),
            name(node),
            self.holder.clone(),
            self.duration,
            lease.clone(),
            lost.clone(),
        ));
        Taken::Ours {
            lock: Box::new(Lock {
                api: self.api.clone(),
                name: name(node),
                holder: self.holder.clone(),
                lease,
                lost,
                renew,
            }),
            before,
            took_over,
        }
    }
}

/// Renews the lease a third of its duration apart, until it is lost.
async fn renew(
    api: Api<Lease>,
    name: String,
    holder: String,
    duration: Duration,
    lease: Arc<tokio::sync::Mutex<Lease>>,
    lost: Arc<Mutex<Option<String>>>,
) {
    loop {
        tokio::time::sleep(duration / 3).await;
        let mut held = lease.lock().await;
        // A failed renewal is tried again at the next tick; the lease
        // lasts three of them.
        if let Err(Write::Lost(by)) = write(&api, &name, &holder, &mut held, |_| {}).await {
            *lost.lock().expect("lost") = Some(by);
            return;
        }
    }
}

enum Write {
    Lost(String),
    Failed(kube::Error),
}

/// Writes the held lease with `change` applied and renewed now, at the
/// resourceVersion last seen; on a conflict reads it again and, if it is
/// still ours, writes again.
async fn write(
    api: &Api<Lease>,
    name: &str,
    holder: &str,
    held: &mut Lease,
    change: impl Fn(&mut Lease),
) -> Result<(), Write> {
    for _ in 0..5 {
        let mut next = held.clone();
        change(&mut next);
        if let Some(spec) = next.spec.as_mut() {
            spec.renew_time = Some(MicroTime(kube_conventions::time::now()));
        }
        match api.replace(name, &PostParams::default(), &next).await {
            Ok(written) => {
                *held = written;
                return Ok(());
            }
            Err(kube::Error::Api(s)) if s.code == 409 => {
                let now = api.get(name).await.map_err(Write::Failed)?;
                match current_holder(&now) {
                    Some(h) if h == holder => *held = now,
                    other => return Err(Write::Lost(other.unwrap_or("nobody").to_string())),
                }
            }
            Err(e) => return Err(Write::Failed(e)),
        }
    }
    Err(Write::Lost("a writer that kept changing it".into()))
}

impl Lock {
    /// Who took the lease away, if someone did.
    pub(crate) fn lost(&self) -> Option<String> {
        self.lost.lock().expect("lost").clone()
    }

    fn failed(&self, e: Write) -> DrainError {
        match e {
            Write::Lost(by) => {
                *self.lost.lock().expect("lost") = Some(by.clone());
                DrainError::Conflict(format!("the lock {} was taken by {by}", self.name))
            }
            Write::Failed(e) => api_error("update", "leases", None, e),
        }
    }

    /// Records where the node's roll is, for a rerun to take it up.
    pub(crate) async fn record(
        &self,
        roll: &str,
        phase: Phase,
        boot_id: Option<&str>,
    ) -> Result<(), DrainError> {
        let mut held = self.lease.lock().await;
        write(&self.api, &self.name, &self.holder, &mut held, |l| {
            annotate(l, roll, phase, boot_id);
            if phase == Phase::Action {
                // A new action: an earlier one's record goes.
                forget_action(l);
            }
        })
        .await
        .map_err(|e| self.failed(e))
    }

    /// Records that the node's action started, in this process group.
    pub(crate) async fn note_action_started(&self, group: u32) -> Result<(), DrainError> {
        let by = format!("{}/{group}", hostname());
        let at = kube_conventions::time::now_rfc3339_micros();
        self.annotate_held(|a| {
            a.insert(ACTION_STARTED.into(), at.clone());
            a.insert(ACTION_BY.into(), by.clone());
            a.remove(ACTION_ENDED);
        })
        .await
    }

    /// Records how the node's action ended.
    pub(crate) async fn note_action_ended(&self, ok: bool) -> Result<(), DrainError> {
        let ended = if ok { "ok" } else { "failed" };
        self.annotate_held(|a| {
            a.insert(ACTION_ENDED.into(), ended.into());
        })
        .await
    }

    async fn annotate_held(
        &self,
        change: impl Fn(&mut std::collections::BTreeMap<String, String>),
    ) -> Result<(), DrainError> {
        let mut held = self.lease.lock().await;
        write(&self.api, &self.name, &self.holder, &mut held, |l| {
            change(l.metadata.annotations.get_or_insert_with(Default::default));
        })
        .await
        .map_err(|e| self.failed(e))
    }

    /// Records the budgets the node's drain evicted pods of.
    pub(crate) async fn note_budgets(&self, budgets: &[String]) -> Result<(), DrainError> {
        let list = budgets.join(",");
        self.annotate_held(|a| {
            a.insert(BUDGETS.into(), list.clone());
        })
        .await
    }

    /// Gives the lease up, keeping the record of where the roll is.
    pub(crate) async fn release(self, roll: &str, phase: Phase) -> Result<(), DrainError> {
        self.renew.abort();
        let mut held = self.lease.lock().await;
        let boot_id = record(&held).and_then(|r| r.boot_id);
        write(&self.api, &self.name, &self.holder, &mut held, |l| {
            annotate(l, roll, phase, boot_id.as_deref());
            if let Some(spec) = l.spec.as_mut() {
                spec.holder_identity = None;
            }
        })
        .await
        .map_err(|e| self.failed(e))
    }
}

fn annotate(lease: &mut Lease, roll: &str, phase: Phase, boot_id: Option<&str>) {
    let a = lease
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    a.insert(ROLL.into(), roll.into());
    a.insert(PHASE.into(), phase.as_str().into());
    if phase == Phase::Finished {
        a.insert(
            FINISHED_AT.into(),
            kube_conventions::time::now_rfc3339_micros(),
        );
    } else {
        a.remove(FINISHED_AT);
    }
    match boot_id {
        Some(b) => a.insert(BOOT_ID.into(), b.into()),
        None => a.remove(BOOT_ID),
    };
    if phase != Phase::Action {
        forget_action(lease);
    }
}

fn forget_action(lease: &mut Lease) {
    if let Some(a) = lease.metadata.annotations.as_mut() {
        for key in [ACTION_STARTED, ACTION_BY, ACTION_ENDED] {
            a.remove(key);
        }
    }
}

/// Marks the records of a roll that finished on every node, so that the
/// same command run again starts over.
pub(crate) async fn finish(locks: &Locks, nodes: &[String], roll: &str) -> Result<(), DrainError> {
    for node in nodes {
        let Some(mut lease) = locks
            .api
            .get_opt(&name(node))
            .await
            .map_err(|e| api_error("get", "leases", None, e))?
        else {
            continue;
        };
        if record(&lease).is_some_and(|r| r.roll == roll) && current_holder(&lease).is_none() {
            annotate(&mut lease, roll, Phase::Finished, None);
            // A conflict means someone took it since: their record stands.
            let _ = locks
                .api
                .replace(&name(node), &PostParams::default(), &lease)
                .await;
        }
    }
    Ok(())
}
