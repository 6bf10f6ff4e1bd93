//! ServiceAccount tokens, bound to the pod they were made for, as the
//! kubelet's projected token and the apiserver's token authenticator
//! (kubernetes pkg/serviceaccount/claims.go) treat them: a token names its
//! ServiceAccount and its pod, and stops authenticating when that pod (by
//! uid) or that ServiceAccount is gone. The sandbox's tokens are opaque
//! strings, not JWTs: nothing outside it reads them.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;

use super::user::UserInfo;
use crate::resources::Resource;
use crate::store::Store;

/// What a token was made for.
#[derive(Debug, Clone)]
struct Bound {
    namespace: String,
    service_account: String,
    pod: String,
    pod_uid: String,
}

#[derive(Default)]
pub(crate) struct Tokens {
    by_token: Mutex<HashMap<String, Bound>>,
    random: RandomState,
}

/// Tokens the sandbox makes start with this, so that another bearer token
/// (the owner's) is never mistaken for one.
const PREFIX: &str = "sandbox-sa.";

/// Could this be one of the sandbox's tokens (before the store is read)?
pub(crate) fn is_ours(token: &str) -> bool {
    token.starts_with(PREFIX)
}

impl Tokens {
    /// A new token for a pod's ServiceAccount.
    pub(crate) fn mint(
        &self,
        namespace: &str,
        service_account: &str,
        pod: &str,
        uid: &str,
    ) -> String {
        let mut map = self
            .by_token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = map.len() as u64;
        let token = format!(
            "{PREFIX}{:016x}{:016x}",
            self.random.hash_one((n, uid)),
            self.random.hash_one((uid, n, pod)),
        );
        map.insert(
            token.clone(),
            Bound {
                namespace: namespace.to_string(),
                service_account: service_account.to_string(),
                pod: pod.to_string(),
                pod_uid: uid.to_string(),
            },
        );
        token
    }

    /// The ServiceAccount a token of the sandbox's (`is_ours`) is; `None`
    /// when it no longer authenticates (its pod or account is gone).
    pub(crate) fn user(&self, store: &Store, token: &str) -> Option<UserInfo> {
        let bound = self
            .by_token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(token)
            .cloned();
        let b = bound?;
        let pod_alive = store
            .get(Resource::Pods, &(b.namespace.clone(), b.pod.clone()))
            .is_some_and(|p| p["metadata"]["uid"] == b.pod_uid.as_str());
        let account = store
            .get(
                Resource::ServiceAccounts,
                &(b.namespace.clone(), b.service_account.clone()),
            )
            .is_some();
        (pod_alive && account).then(|| UserInfo::service_account(&b.namespace, &b.service_account))
    }
}
