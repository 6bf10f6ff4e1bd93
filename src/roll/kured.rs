//! kured's reboot lock, honoured so that kured and a roll never take nodes
//! down at once. kured keeps its lock as an annotation on its own
//! DaemonSet (kubereboot/kured pkg/daemonsetlock/daemonsetlock.go):
//! `weave.works/kured-node-lock`, a JSON value `{"nodeID", "metadata",
//! "created", "TTL"}` (TTL in nanoseconds, 0 for none), or with
//! `--concurrency` above 1 `{"maxOwners": N, "locks": [...]}`; it is held
//! while present and not past its TTL, and taken and given back by updates
//! at the resourceVersion read. While any node of the roll is in its action
//! or waiting to be Ready, the roll holds that lock under its own ID, and
//! waits when kured holds it.

use std::time::Duration;

use k8s_openapi::api::apps::v1::DaemonSet;
use kube::Api;
use kube::api::PostParams;
use serde_json::{Value, json};

use crate::vocabulary::DrainError;
use crate::vocabulary::api_error::api_error;

pub(crate) const ANNOTATION: &str = "weave.works/kured-node-lock";
/// How long a lock the roll forgot (killed) keeps kured waiting.
const TTL: Duration = Duration::from_secs(3600);

/// Who else holds the lock now, from its annotation; `None` when it is
/// free or ours. Pure.
pub(crate) fn holders(value: &str, ours: &str, now_s: i64) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(value) else {
        return Vec::new();
    };
    let entries: Vec<&Value> = match v.get("locks") {
        Some(locks) => locks.as_array().into_iter().flatten().collect(),
        None => vec![&v],
    };
    entries
        .into_iter()
        .filter(|e| live(e, now_s))
        .filter_map(|e| e["nodeID"].as_str())
        .filter(|id| !id.is_empty() && *id != ours)
        .map(str::to_string)
        .collect()
}

fn live(entry: &Value, now_s: i64) -> bool {
    let ttl_ns = entry["TTL"].as_i64().unwrap_or(0);
    let created = entry["created"]
        .as_str()
        .and_then(kube_conventions::time::parse_time)
        .map(k8s_openapi::jiff::Timestamp::as_second);
    match created {
        Some(c) if ttl_ns > 0 => now_s - c < ttl_ns / 1_000_000_000,
        _ => true,
    }
}

/// The annotation with our entry added (`Some`), or `None` when kured's
/// multi-owner lock has no room for it. Pure.
pub(crate) fn with_ours(value: Option<&str>, ours: &str, now: &str, now_s: i64) -> Option<String> {
    let entry = json!({
        "nodeID": ours,
        "metadata": {"unschedulable": false},
        "created": now,
        "TTL": i64::try_from(TTL.as_nanos()).unwrap_or(i64::MAX),
    });
    let parsed = value.and_then(|v| serde_json::from_str::<Value>(v).ok());
    match parsed {
        Some(mut multi) if multi.get("locks").is_some() => {
            let max = multi["maxOwners"].as_u64().unwrap_or(1) as usize;
            let mut locks: Vec<Value> = multi["locks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| live(e, now_s) && e["nodeID"] != ours)
                .cloned()
                .collect();
            if locks.len() >= max {
                return None;
            }
            locks.push(entry);
            multi["locks"] = json!(locks);
            Some(multi.to_string())
        }
        _ => Some(entry.to_string()),
    }
}

/// The annotation without our entry: `None` to remove it. Pure.
pub(crate) fn without_ours(value: &str, ours: &str) -> Option<String> {
    let mut v: Value = serde_json::from_str(value).ok()?;
    if v.get("locks").is_some() {
        if let Some(locks) = v["locks"].as_array_mut() {
            locks.retain(|e| e["nodeID"] != ours);
        }
        return Some(v.to_string());
    }
    (v["nodeID"] != ours).then(|| value.to_string())
}

/// kured's DaemonSet, where there is one.
pub(crate) struct Kured {
    api: Api<DaemonSet>,
    name: String,
    ours: String,
}

/// Taking kured's lock.
pub(crate) enum Taking {
    Taken,
    /// No kured DaemonSet (or not readable): nothing to honour.
    Absent,
    HeldBy(Vec<String>),
}

impl Kured {
    /// `namespace/name` of kured's DaemonSet; `ours` is the roll's ID in it.
    pub(crate) fn new(client: &kube::Client, daemonset: &str, ours: String) -> Self {
        let (ns, name) = daemonset
            .split_once('/')
            .unwrap_or(("kube-system", daemonset));
        Kured {
            api: Api::namespaced(client.clone(), ns),
            name: name.to_string(),
            ours,
        }
    }

    pub(crate) async fn take(&self) -> Result<Taking, DrainError> {
        loop {
            let ds = match self.api.get_opt(&self.name).await {
                Ok(Some(ds)) => ds,
                Ok(None) => return Ok(Taking::Absent),
                Err(kube::Error::Api(s)) if s.code == 403 => return Ok(Taking::Absent),
                Err(e) => return Err(api_error("get", "daemonsets", None, e)),
            };
            let now = kube_conventions::time::now();
            let current = ds
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ANNOTATION))
                .cloned();
            let others = current
                .as_deref()
                .map(|v| holders(v, &self.ours, now.as_second()))
                .unwrap_or_default();
            let is_multi = current.as_deref().is_some_and(|v| v.contains("\"locks\""));
            if !others.is_empty() && !is_multi {
                return Ok(Taking::HeldBy(others));
            }
            let Some(value) = with_ours(
                current.as_deref(),
                &self.ours,
                &kube_conventions::time::format_time(now),
                now.as_second(),
            ) else {
                return Ok(Taking::HeldBy(others));
            };
            let mut ds = ds;
            ds.metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(ANNOTATION.into(), value);
            match self
                .api
                .replace(&self.name, &PostParams::default(), &ds)
                .await
            {
                Ok(_) => return Ok(Taking::Taken),
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => return Err(api_error("update", "daemonsets", None, e)),
            }
        }
    }

    pub(crate) async fn give_back(&self) -> Result<(), DrainError> {
        loop {
            let Some(mut ds) = self
                .api
                .get_opt(&self.name)
                .await
                .map_err(|e| api_error("get", "daemonsets", None, e))?
            else {
                return Ok(());
            };
            let annotations = ds.metadata.annotations.get_or_insert_with(Default::default);
            let Some(current) = annotations.get(ANNOTATION).cloned() else {
                return Ok(());
            };
            match without_ours(&current, &self.ours) {
                Some(v) if v == current => return Ok(()),
                Some(v) => annotations.insert(ANNOTATION.into(), v),
                None => annotations.remove(ANNOTATION),
            };
            match self
                .api
                .replace(&self.name, &PostParams::default(), &ds)
                .await
            {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => return Err(api_error("update", "daemonsets", None, e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_and_multi_owner_locks() {
        let now = 1_000_000;
        let single = r#"{"nodeID":"n1","metadata":{"unschedulable":false},"created":"2026-01-01T00:00:00Z","TTL":0}"#;
        assert_eq!(holders(single, "us", now), vec!["n1"]);
        assert!(holders(single, "n1", now).is_empty());
        // A TTL long past frees it.
        let expired = r#"{"nodeID":"n1","created":"1970-01-01T00:00:00Z","TTL":1000000000}"#;
        assert!(holders(expired, "us", now).is_empty());
        let taken = with_ours(None, "us", "2026-01-01T00:00:00Z", now).unwrap();
        assert!(holders(&taken, "n1", now) == vec!["us"]);
        assert_eq!(without_ours(&taken, "us"), None);
        // Multi-owner: room for one more, then none.
        let multi =
            r#"{"maxOwners":2,"locks":[{"nodeID":"n1","created":"2026-01-01T00:00:00Z","TTL":0}]}"#;
        let both = with_ours(Some(multi), "us", "2026-01-01T00:00:00Z", now).unwrap();
        assert_eq!(holders(&both, "x", now).len(), 2);
        assert!(with_ours(Some(&both), "other", "2026-01-01T00:00:00Z", now).is_none());
        let back = without_ours(&both, "us").unwrap();
        assert_eq!(holders(&back, "x", now), vec!["n1"]);
    }
}
