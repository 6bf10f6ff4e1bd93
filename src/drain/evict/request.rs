//! Evicting through Kubernetes 1.37's EvictionRequest API (KEP-4563,
//! `lifecycle.k8s.io/v1alpha1`, gate EvictionRequestAPI): one request per
//! pod, named after the pod's uid so that a pod is never asked for twice
//! and a rerun after kill -9 finds (adopts) its own; the pod's responders
//! (a live migration, a switchover) act first, the imperative responder
//! last, which evicts through the subresource and meets the budgets.
//!
//! Each ask is read back as the eviction subresource's answers are
//! (crate::drain::machine::Answer), so the waves, budgets, `--surge` and
//! `--deadline` stay one logic over both paths: the request's
//! `TargetEvicted` is an accepted eviction; the imperative responder's
//! budget refusal is a budget's refusal; another responder at work is
//! `Responding`, polled. A request no controller picks up within
//! `CONTROLLER_WAIT`, or one the controller fails, is deleted and its pod
//! evicted the old way, said once. At the end of a run, requests whose pod
//! went are deleted and the others withdrawn (`intent: Withdrawn`), so
//! Ctrl-C, `--timeout` and `abort` leave no standing request behind.
//!
//! The shapes follow staging/src/k8s.io/api/lifecycle/v1alpha1 (types.go) as
//! Kubernetes 1.37 serves them (k8s-openapi's `v1_37`); the controllers'
//! behaviour, kubernetes pkg/controller/evictionrequest and
//! pkg/controller/imperativeevictionresponder. The API is alpha and moves:
//! upstream's evictionrequest_controller.go after 1.37 serves it as
//! `coordination.k8s.io/v1alpha1`, names each request after its pod's uid
//! (one request per pod, shared by its requesters), calls the responders
//! interceptors and ends a request with `Evicted` or `Canceled`; the
//! 20-minute heartbeat deadline stays. This module is where that lands.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::header::CONTENT_TYPE;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::drain::machine::Answer;
use crate::vocabulary::pod_key::PodKey;
use crate::vocabulary::warning::Warning;

/// This tool, as the requester the API records.
pub(crate) const REQUESTER: &str = "kubectl-maintain.io/drain";
/// The default responder, the last of every pod's (1.37's
/// imperativeevictionresponder).
pub(crate) const IMPERATIVE: &str = "imperative-eviction.k8s.io/evictor";
const GROUP_VERSION: &str = "lifecycle.k8s.io/v1alpha1";
/// How long a new request may wait for the evictionrequest controller to
/// observe it before the drain concludes that no controller runs (the gate
/// can be on in the API server and off in the controller manager).
pub(crate) const CONTROLLER_WAIT: Duration = Duration::from_secs(10);
/// How soon a pod whose responder is at work is asked about again.
const POLL: Duration = Duration::from_secs(2);

/// `--eviction-api`: which API evicts a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum EvictionApi {
    /// EvictionRequest when the cluster serves it and its controller
    /// answers; the eviction subresource otherwise.
    #[default]
    Auto,
    /// EvictionRequest, or fail before any change when it is not served.
    Request,
    /// The eviction subresource, as kubectl drain.
    Eviction,
}

/// A request this run made or adopted.
struct Asked {
    namespace: String,
    name: String,
    since: Instant,
}

/// The requests of one run.
pub(crate) struct Requests {
    client: kube::Client,
    asked: Mutex<HashMap<String, Asked>>,
    /// Pods (uids) evicted the old way: the API refused their request or
    /// its controller failed it.
    old_way: Mutex<HashSet<String>>,
    /// No controller answered a request: every pod goes the old way.
    no_controller: AtomicBool,
    /// What the operator is told, once each.
    said: Mutex<Vec<Warning>>,
}

/// What one ask comes to: an answer, or "use the eviction subresource".
pub(crate) enum Asking {
    Answer(Answer),
    OldWay,
}

/// The request's name for a pod: its uid, unique in the namespace.
fn request_name(uid: &str) -> String {
    format!("kubectl-maintain-{uid}")
}

fn path(namespace: &str, name: Option<&str>) -> String {
    let base = format!("/apis/{GROUP_VERSION}/namespaces/{namespace}/evictionrequests");
    name.map_or(base.clone(), |n| format!("{base}/{n}"))
}

fn condition<'a>(obj: &'a Value, kind: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind && c["status"] == "True")
}

impl Requests {
    pub(crate) fn new(client: kube::Client) -> Self {
        Requests {
            client,
            asked: Mutex::new(HashMap::new()),
            old_way: Mutex::new(HashSet::new()),
            no_controller: AtomicBool::new(false),
            said: Mutex::new(Vec::new()),
        }
    }

    /// What to tell the operator since last asked.
    pub(crate) fn take_warnings(&self) -> Vec<Warning> {
        std::mem::take(&mut *self.said.lock().expect("said"))
    }

    fn say(&self, warning: Warning) {
        self.said.lock().expect("said").push(warning);
    }

    fn goes_old_way(&self, uid: &str) -> bool {
        self.no_controller.load(Ordering::Relaxed)
            || self.old_way.lock().expect("old way").contains(uid)
    }

    async fn send(
        &self,
        method: http::Method,
        path: &str,
        body: Option<Value>,
        content: &str,
    ) -> (u16, Value) {
        let req = http::Request::builder()
            .method(method)
            .uri(path)
            .header(CONTENT_TYPE, content)
            .body(
                body.map(|b| serde_json::to_vec(&b).expect("json"))
                    .unwrap_or_default(),
            )
            .expect("a request")
            .map(kube::client::Body::from);
        match self.client.send(req).await {
            Ok(res) => {
                let code = res.status().as_u16();
                let bytes = res.into_body().collect_bytes().await.unwrap_or_default();
                (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
            }
            Err(e) => (0, json!({"message": e.to_string()})),
        }
    }

    /// Asks for one pod's eviction (this uid) and reads how far it got.
    pub(crate) async fn ask(&self, key: &PodKey, uid: &str) -> Asking {
        if self.goes_old_way(uid) {
            // A request made before another pod's found no controller: it
            // goes as that one went, deleted, not left to be withdrawn.
            let made = self.asked.lock().expect("asked").contains_key(uid);
            if made {
                let said = Warning::NoEvictionRequestController {
                    waited: CONTROLLER_WAIT,
                };
                self.fall_back(key, uid, &request_name(uid), said).await;
            }
            return Asking::OldWay;
        }
        let known = self.asked.lock().expect("asked").contains_key(uid);
        if !known && let Some(answer) = self.create(key, uid).await {
            return answer;
        }
        let name = request_name(uid);
        let (code, request) = self
            .send(
                http::Method::GET,
                &path(&key.namespace, Some(&name)),
                None,
                "application/json",
            )
            .await;
        if code != 200 {
            return Asking::Answer(retry(code, &request));
        }
        if condition(&request, "TargetEvicted").is_some() {
            return Asking::Answer(Answer::Accepted);
        }
        if let Some(failed) = condition(&request, "Failed") {
            let reason = failed["reason"].as_str().unwrap_or("Failed").to_string();
            self.fall_back(
                key,
                uid,
                &name,
                Warning::EvictionRequestFailed {
                    pod: key.clone(),
                    reason,
                },
            )
            .await;
            return Asking::OldWay;
        }
        let observed = request["status"]["observedGeneration"]
            .as_i64()
            .unwrap_or(0);
        let generation = request["metadata"]["generation"].as_i64().unwrap_or(1);
        if observed < generation {
            let waited = self
                .asked
                .lock()
                .expect("asked")
                .get(uid)
                .map_or(Duration::ZERO, |a| a.since.elapsed());
            if waited >= CONTROLLER_WAIT {
                self.no_controller.store(true, Ordering::Relaxed);
                // The same words for every pod that finds it, so it is said
                // once.
                let said = Warning::NoEvictionRequestController {
                    waited: CONTROLLER_WAIT,
                };
                self.fall_back(key, uid, &name, said).await;
                return Asking::OldWay;
            }
            return Asking::Answer(Answer::Responding {
                responder: String::new(),
                message: "EvictionRequest made, not yet taken by its controller".into(),
                retry_after: Some(Duration::from_secs(1)),
            });
        }
        Asking::Answer(self.progress(key, uid).await)
    }

    /// Creates the pod's request, or adopts the one already there (a run
    /// killed before it could withdraw, or one that withdrew). `None`: go on
    /// reading it.
    async fn create(&self, key: &PodKey, uid: &str) -> Option<Asking> {
        let name = request_name(uid);
        let body = json!({
            "apiVersion": GROUP_VERSION,
            "kind": "EvictionRequest",
            "metadata": {
                "name": name,
                "namespace": key.namespace,
                "labels": {"app.kubernetes.io/managed-by": "kubectl-maintain"},
            },
            "spec": {
                "intent": "Eviction",
                "requester": REQUESTER,
                "target": {"pod": {"name": key.name, "uid": uid}},
            },
        });
        let (code, answer) = self
            .send(
                http::Method::POST,
                &path(&key.namespace, None),
                Some(body),
                "application/json",
            )
            .await;
        match code {
            201 | 200 => {}
            409 => {
                // Ours from before: asked again if it was withdrawn.
                let patch = json!({"spec": {"intent": "Eviction"}});
                let (code, answer) = self
                    .send(
                        http::Method::PATCH,
                        &path(&key.namespace, Some(&name)),
                        Some(patch),
                        "application/merge-patch+json",
                    )
                    .await;
                if code != 200 {
                    return Some(Asking::Answer(retry(code, &answer)));
                }
            }
            403 => {
                let message = answer["message"]
                    .as_str()
                    .unwrap_or("forbidden")
                    .to_string();
                return Some(Asking::Answer(Answer::Forbidden(message)));
            }
            // The API refuses a request for this pod: the old way.
            400 | 422 => {
                self.old_way
                    .lock()
                    .expect("old way")
                    .insert(uid.to_string());
                let message = answer["message"].as_str().unwrap_or_default().to_string();
                self.say(Warning::EvictionRequestRefused {
                    pod: key.clone(),
                    message,
                });
                return Some(Asking::OldWay);
            }
            _ => return Some(Asking::Answer(retry(code, &answer))),
        }
        self.asked.lock().expect("asked").insert(
            uid.to_string(),
            Asked {
                namespace: key.namespace.clone(),
                name,
                since: Instant::now(),
            },
        );
        None
    }

    /// The Eviction the controller made for the pod: which responder holds
    /// it and what it says. The imperative responder's budget refusal reads
    /// as the subresource's.
    async fn progress(&self, key: &PodKey, uid: &str) -> Answer {
        // The Eviction's name is only informative: found by its target.
        let list = format!(
            "/apis/{GROUP_VERSION}/namespaces/{}/evictions",
            key.namespace
        );
        let (code, evictions) = self
            .send(http::Method::GET, &list, None, "application/json")
            .await;
        if code != 200 {
            return retry(code, &evictions);
        }
        let eviction = evictions["items"].as_array().and_then(|items| {
            items
                .iter()
                .find(|e| e["spec"]["target"]["pod"]["uid"] == uid)
        });
        let Some(status) = eviction.map(|e| &e["status"]) else {
            return Answer::Responding {
                responder: String::new(),
                message: "EvictionRequest taken, its Eviction not made yet".into(),
                retry_after: Some(Duration::from_secs(1)),
            };
        };
        let active = status["targetResponders"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["state"] == "Active"))
            .and_then(|r| r["name"].as_str())
            .unwrap_or_default()
            .to_string();
        let message = status["responders"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["name"] == active.as_str()))
            .and_then(|r| r["message"].as_str())
            .unwrap_or_default()
            .to_string();
        // Two budgets over the pod: refused for good, as the subresource's
        // 500 says it.
        if active == IMPERATIVE && kube_conventions::eviction::is_multiple_budgets(&message) {
            return Answer::MultiplePdbs(message);
        }
        if active == IMPERATIVE
            && let Some(pdb) = super::refusal::pdb_name_from_cause(&message)
        {
            return Answer::PdbBlocked {
                pdb,
                message,
                api_message: super::refusal::PDB_REFUSAL.to_string(),
                retry_after: None,
            };
        }
        let message = if active.is_empty() && message.is_empty() {
            "EvictionRequest in progress, no responder active".to_string()
        } else {
            message
        };
        Answer::Responding {
            responder: active,
            message,
            retry_after: Some(POLL),
        }
    }

    /// Deletes the pod's request and sends it the old way, saying why.
    async fn fall_back(&self, key: &PodKey, uid: &str, name: &str, why: Warning) {
        let _ = self
            .send(
                http::Method::DELETE,
                &path(&key.namespace, Some(name)),
                None,
                "application/json",
            )
            .await;
        self.asked.lock().expect("asked").remove(uid);
        self.old_way
            .lock()
            .expect("old way")
            .insert(uid.to_string());
        self.say(why);
    }

    /// The run ends: requests whose pod went are deleted, the others
    /// withdrawn. How many were withdrawn.
    pub(crate) async fn finish(&self) -> usize {
        let asked: Vec<(String, String)> = self
            .asked
            .lock()
            .expect("asked")
            .drain()
            .map(|(_, a)| (a.namespace, a.name))
            .collect();
        let mut withdrawn = 0;
        for (namespace, name) in asked {
            let at = path(&namespace, Some(&name));
            let (code, request) = self
                .send(http::Method::GET, &at, None, "application/json")
                .await;
            if code != 200 {
                continue;
            }
            if condition(&request, "TargetEvicted").is_some() {
                let _ = self
                    .send(http::Method::DELETE, &at, None, "application/json")
                    .await;
            } else {
                let patch = json!({"spec": {"intent": "Withdrawn"}});
                let (code, _) = self
                    .send(
                        http::Method::PATCH,
                        &at,
                        Some(patch),
                        "application/merge-patch+json",
                    )
                    .await;
                withdrawn += usize::from(code == 200);
            }
        }
        withdrawn
    }
}

/// A failed request: retried as the subresource's server errors are.
fn retry(code: u16, answer: &Value) -> Answer {
    let message = answer["message"]
        .as_str()
        .map_or_else(|| format!("HTTP {code}"), str::to_string);
    if code == 403 {
        return Answer::Forbidden(message);
    }
    Answer::Retry {
        retry_after: None,
        message,
        throttled: code == 429,
    }
}
