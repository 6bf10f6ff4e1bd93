//! One eviction (or, with --disable-eviction, one delete) and what its
//! answer means. The body is a typed policy/v1 Eviction with
//! `deleteOptions`, because kube's `Api::evict` sends `delete_options`,
//! which the apiserver ignores. The pod's uid is a precondition, so a pod
//! recreated under the same name (a StatefulSet's) is never evicted by
//! mistake: the answer is 409 and the old pod counts as gone.

use std::time::Duration;

use http::header::{CONTENT_TYPE, RETRY_AFTER};
use kube::core::Status;
use serde_json::json;

use super::refusal::pdb_name_from_cause;
use crate::drain::machine::Answer;
use crate::vocabulary::pod_key::PodKey;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
    pub(crate) uid: &'a str,
    pub(crate) grace_period: Option<i64>,
    pub(crate) dry_run: bool,
    /// DELETE the pod instead of evicting it (bypasses PDBs).
    pub(crate) delete: bool,
}

/// Sends a drain's evictions (or, with `--disable-eviction`, deletes) with
/// its `--grace-period`; with `requests`, asks through EvictionRequests
/// (super::request) and evicts the old way only the pods
/// those cannot take.
#[derive(Clone)]
pub(crate) struct Evictor {
    /// A client that does not retry on its own: the machine decides.
    pub(crate) client: kube::Client,
    pub(crate) grace_period: Option<i64>,
    pub(crate) delete: bool,
    pub(crate) requests: Option<std::sync::Arc<super::request::Requests>>,
}

impl Evictor {
    /// Evicts (or deletes) one pod, this uid only.
    pub(crate) async fn evict(&self, key: &PodKey, uid: &str, dry_run: bool) -> Answer {
        if let Some(requests) = self.requests.as_ref().filter(|_| !dry_run && !self.delete)
            && let super::request::Asking::Answer(answer) = requests.ask(key, uid).await
        {
            return answer;
        }
        self.send(key, uid, self.grace_period, dry_run, self.delete)
            .await
    }

    /// Evicts (or deletes) one pod through the subresource, never an
    /// EvictionRequest (a grouped pod, which requests do not take).
    pub(crate) async fn evict_directly(&self, key: &PodKey, uid: &str) -> Answer {
        self.send(key, uid, self.grace_period, false, self.delete)
            .await
    }

    /// Deletes one pod, budgets bypassed (`--deadline`), with this grace period.
    pub(crate) async fn force(&self, key: &PodKey, uid: &str, grace: i64) -> Answer {
        self.send(key, uid, Some(grace), false, true).await
    }

    async fn send(
        &self,
        key: &PodKey,
        uid: &str,
        grace_period: Option<i64>,
        dry_run: bool,
        delete: bool,
    ) -> Answer {
        let request = Request {
            namespace: &key.namespace,
            name: &key.name,
            uid,
            grace_period,
            dry_run,
            delete,
        };
        send(&self.client, &request).await
    }
}

fn delete_options(r: &Request<'_>) -> serde_json::Value {
    let mut o = json!({"preconditions": {"uid": r.uid}});
    if let Some(g) = r.grace_period {
        o["gracePeriodSeconds"] = json!(g);
    }
    if r.dry_run {
        o["dryRun"] = json!(["All"]);
    }
    o
}

pub(crate) fn http_request(r: &Request<'_>) -> http::Request<Vec<u8>> {
    let pod_path = format!("/api/v1/namespaces/{}/pods/{}", r.namespace, r.name);
    // In the query as well as the body, so request logs show a dry run.
    let query = if r.dry_run { "?dryRun=All" } else { "" };
    let (method, path, body) = if r.delete {
        let mut o = delete_options(r);
        o["kind"] = json!("DeleteOptions");
        o["apiVersion"] = json!("v1");
        ("DELETE", format!("{pod_path}{query}"), o)
    } else {
        let body = json!({
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": r.name, "namespace": r.namespace},
            "deleteOptions": delete_options(r),
        });
        ("POST", format!("{pod_path}/eviction{query}"), body)
    };
    http::Request::builder()
        .method(method)
        .uri(path.as_str())
        .header(CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&body).expect("serialisable"))
        .expect("valid request")
}

fn has_cause(status: Option<&Status>, reason: &str) -> bool {
    status
        .and_then(|s| s.details.as_ref())
        .is_some_and(|d| d.causes.iter().any(|c| c.reason == reason))
}

/// A budget's own 403, in words that name its cause: `Reason: message`
/// when the server types it (1.37), the message otherwise.
fn budget_forbidden(status: Option<&Status>, message: &str) -> Option<String> {
    let typed = status.and_then(|s| s.details.as_ref()).and_then(|d| {
        d.causes
            .iter()
            .find(|c| c.reason.starts_with("DisruptionBudget"))
    });
    if let Some(c) = typed {
        return Some(format!("{}: {}", c.reason, c.message));
    }
    (message == "pdb disruptions allowed is negative"
        || message.starts_with("DisruptedPods map too big"))
    .then(|| message.to_string())
}

/// What an answer means. Pure, for tests.
pub(crate) fn interpret(code: u16, retry_after: Option<Duration>, body: &[u8]) -> Answer {
    let status: Option<Status> = serde_json::from_slice(body).ok();
    let message = status
        .as_ref()
        .map(|s| s.message.clone())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| format!("HTTP {code}"));
    let retry_after = retry_after.or_else(|| {
        status
            .as_ref()
            .and_then(|s| s.details.as_ref())
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s)))
    });
    // A budget's 403s (eviction.go): its disruptions negative, or more
    // disrupted pods than its controller has confirmed. Kubernetes 1.37
    // types them (a `DisruptionBudget...` cause); older servers give the
    // message alone. The budget is named by the caller, which looks it up.
    if code == 403
        && let Some(cause) = budget_forbidden(status.as_ref(), &message)
    {
        return Answer::PdbBlocked {
            pdb: String::new(),
            message: cause,
            api_message: message,
            retry_after,
        };
    }
    match code {
        200..=299 => Answer::Accepted,
        404 => Answer::Gone,
        // A uid precondition that fails: the pod we meant is gone.
        409 if message.contains("Precondition failed: UID") => Answer::Gone,
        429 => {
            let cause = status
                .as_ref()
                .and_then(|s| s.details.as_ref())
                .and_then(|d| d.causes.iter().find(|c| c.reason == "DisruptionBudget"));
            match cause {
                Some(c) => Answer::PdbBlocked {
                    pdb: pdb_name_from_cause(&c.message).unwrap_or_default(),
                    message: c.message.clone(),
                    api_message: message,
                    retry_after,
                },
                None => Answer::Retry {
                    retry_after,
                    message,
                    throttled: true,
                },
            }
        }
        500 if kube_conventions::eviction::is_multiple_budgets(&message) => {
            Answer::MultiplePdbs(message)
        }
        403 if has_cause(status.as_ref(), "NamespaceTerminating") => Answer::NamespaceTerminating,
        403 => Answer::Forbidden(message),
        500..=599 | 408 => Answer::Retry {
            retry_after,
            message,
            throttled: false,
        },
        _ => Answer::Failed(message),
    }
}

/// Sends one eviction with a client that does not retry on its own.
pub(crate) async fn send(client: &kube::Client, r: &Request<'_>) -> Answer {
    let req = http_request(r).map(kube::client::Body::from);
    let res = match client.send(req).await {
        Ok(res) => res,
        Err(e) => {
            return Answer::Retry {
                retry_after: None,
                message: format!("{e}"),
                throttled: false,
            };
        }
    };
    let code = res.status().as_u16();
    let retry_after = res
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = res.into_body().collect_bytes().await.unwrap_or_default();
    interpret(code, retry_after, &body)
}

#[cfg(test)]
mod tests {
    use super::super::PDB_REFUSAL;
    use super::*;

    #[test]
    fn pdb_refusals_are_told_from_throttling() {
        let pdb = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget db needs 1 healthy pods and has 1 currently"}]},"code":429}"#;
        assert_eq!(
            interpret(429, None, pdb),
            Answer::PdbBlocked {
                pdb: "db".into(),
                message: "The disruption budget db needs 1 healthy pods and has 1 currently".into(),
                api_message: PDB_REFUSAL.into(),
                retry_after: None
            }
        );
        let apf = br#"{"kind":"Status","status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}"#;
        assert!(
            matches!(interpret(429, None, apf), Answer::Retry { retry_after: Some(d), .. } if d == Duration::from_secs(1))
        );
        assert_eq!(interpret(404, None, b"{}"), Answer::Gone);
        assert!(
            matches!(interpret(403, None, b"{\"message\":\"nope\"}"), Answer::Forbidden(m) if m == "nope")
        );
        let multi = br#"{"message":"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.","code":500}"#;
        assert!(matches!(
            interpret(500, None, multi),
            Answer::MultiplePdbs(_)
        ));
        assert!(matches!(
            interpret(503, Some(Duration::from_secs(2)), b""),
            Answer::Retry { .. }
        ));
        let uid = br#"{"message":"Operation cannot be fulfilled on pods \"db-0\": Precondition failed: UID in precondition: a, UID in object meta: b","code":409}"#;
        assert_eq!(interpret(409, None, uid), Answer::Gone);
        let negative = br#"{"kind":"Status","status":"Failure","message":"pdb disruptions allowed is negative","reason":"Forbidden","details":{"causes":[{"reason":"DisruptionBudgetNegativeAllowedDisruptions","message":"pdb disruptions allowed is negative"}]},"code":403}"#;
        assert!(matches!(
            interpret(403, None, negative),
            Answer::PdbBlocked { pdb, message, .. }
                if pdb.is_empty() && message == "DisruptionBudgetNegativeAllowedDisruptions: pdb disruptions allowed is negative"
        ));
        let older = br#"{"kind":"Status","status":"Failure","message":"pdb disruptions allowed is negative","reason":"Forbidden","code":403}"#;
        assert!(matches!(
            interpret(403, None, older),
            Answer::PdbBlocked { message, .. } if message == "pdb disruptions allowed is negative"
        ));
        let leaving = br#"{"kind":"Status","status":"Failure","message":"pods \"p\" is forbidden: unable to create new content in namespace gone because it is being terminated","reason":"Forbidden","details":{"causes":[{"reason":"NamespaceTerminating","message":"namespace gone is being terminated","field":"metadata.namespace"}]},"code":403}"#;
        assert_eq!(interpret(403, None, leaving), Answer::NamespaceTerminating);
        assert!(matches!(
            interpret(429, None, apf),
            Answer::Retry {
                throttled: true,
                ..
            }
        ));
    }

    #[test]
    fn eviction_body_carries_delete_options() {
        let r = Request {
            namespace: "ns",
            name: "p",
            uid: "u1",
            grace_period: Some(7),
            dry_run: true,
            delete: false,
        };
        let req = http_request(&r);
        assert_eq!(req.uri().path(), "/api/v1/namespaces/ns/pods/p/eviction");
        let body: serde_json::Value = serde_json::from_slice(req.body()).unwrap();
        assert_eq!(body["deleteOptions"]["gracePeriodSeconds"], 7);
        assert_eq!(body["deleteOptions"]["dryRun"], json!(["All"]));
        assert_eq!(body["deleteOptions"]["preconditions"]["uid"], "u1");
        assert!(body.get("delete_options").is_none());
        let d = http_request(&Request { delete: true, ..r });
        assert_eq!(d.method(), "DELETE");
    }
}
