//! Who a request comes from and what they may do, as kube-apiserver's
//! filter chain decides it (k8s.io/apiserver pkg/endpoints/filters:
//! authentication.go, impersonation.go, authorization.go).
//!
//! - The sandbox's own user, whose kubeconfig carries the owner's token
//!   (random, minted at each start, unless `ownerToken` names one), may do
//!   everything but what a test refuses it (`deny`, `role`): the sandbox is
//!   its cluster and it its administrator, `kubernetes-admin` in
//!   `system:masters` as kubeadm's admin.conf is.
//!   The owner's token followed by `.until.UNIX` is the owner's until
//!   that second and refused 401 after it: a short-lived token, as an
//!   identity provider mints them for an exec plugin.
//! - A client certificate the sandbox's CA signed is the user its
//!   CommonName names, in its Organizations (x509.rs), before any token is
//!   looked at, as the union authenticator tries x509 first
//!   (pkg/kubeapiserver/authenticator/config.go); RBAC decides, and
//!   `system:masters` is everything, as kubeadm's admin.conf certificate is.
//! - A request without credentials is `system:anonymous` in
//!   `system:unauthenticated` (authentication/request/anonymous), which
//!   the bootstrap roles allow only the health and version endpoints; a
//!   bearer token or a login the sandbox did not make is refused 401, as
//!   the union authenticator refuses a credential no authenticator
//!   accepts (authentication/request/union/union.go).
//! - A ServiceAccount token the sandbox's kubelet gave a pod (tokens.rs)
//!   is that ServiceAccount, in its groups, and RBAC (rbac.rs) decides.
//! - A request that impersonates (`--as`, `--as-group`) is the user it
//!   names, in `system:authenticated` (and, for a ServiceAccount named
//!   without groups, its ServiceAccount groups), and RBAC decides; so
//!   `kubectl auth can-i --as=system:serviceaccount:NS:NAME` tells the
//!   truth. A ServiceAccount needs `impersonate` to impersonate. Groups, a
//!   uid or extras to act as without a user are refused (500), as
//!   impersonation.go's `buildImpersonationRequests` refuses them: such a
//!   request is never served as the caller.
//! - `system:masters` is allowed everything before RBAC is asked, as the
//!   apiserver's privileged-group authorizer does.

pub(crate) mod bootstrap;
pub(crate) mod rbac;
pub(crate) mod tokens;
mod user;
pub(crate) mod x509;

pub(crate) use user::{UserInfo, service_account_user};

use http::request::Parts;

use crate::api_error::ApiError;
use crate::shared::Shared;

/// The namespace and name of a ServiceAccount's user name.
fn service_account_of(user: &str) -> Option<(&str, &str)> {
    user.strip_prefix("system:serviceaccount:")?.split_once(':')
}

/// Who asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Identity {
    /// The sandbox's own user.
    Owner,
    /// Someone RBAC decides for.
    User(UserInfo),
}

/// Who the sandbox's own user is to the API.
const OWNER: &str = "kubernetes-admin";

impl Identity {
    /// The name a refusal gives.
    pub(crate) fn name(&self) -> &str {
        match self {
            Identity::Owner => OWNER,
            Identity::User(u) => &u.name,
        }
    }

    /// The user and groups `kubectl auth whoami` is told.
    pub(crate) fn user_info(&self) -> UserInfo {
        match self {
            Identity::Owner => UserInfo {
                name: OWNER.into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
            },
            Identity::User(u) => u.clone(),
        }
    }
}

/// What a request asks to do (k8s.io/apiserver's `authorizer.Attributes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attributes {
    Resource {
        verb: String,
        group: String,
        resource: String,
        subresource: String,
        name: String,
        namespace: String,
    },
    NonResource {
        verb: String,
        path: String,
    },
}

/// `resource/subresource`, or the resource alone.
pub(crate) fn combined(resource: &str, subresource: &str) -> String {
    if subresource.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}/{subresource}")
    }
}

/// The request's identity (`client`: what the connection's client
/// certificate says, verified now); an error for a token that no longer
/// authenticates or a certificate refused with no token to go on to (401),
/// or an impersonation not allowed (403).
pub(crate) fn authenticate(
    shared: &Shared,
    parts: &Parts,
    client: x509::Presented,
) -> Result<Identity, ApiError> {
    let header = |name: &str| {
        parts
            .headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let unauthorized = || ApiError::new(401, "Unauthorized", "Unauthorized");
    let bearer = header("authorization");
    let identity = match (client, bearer.first().map(String::as_str)) {
        (x509::Presented::User(user), _) => Identity::User(user),
        // The union's error stands when nothing else authenticates.
        (x509::Presented::Refused, None) => return Err(unauthorized()),
        (x509::Presented::Nothing, None) => Identity::User(anonymous()),
        (_, Some(a)) => match a.strip_prefix("Bearer ") {
            Some(token) if token == shared.owner_token => Identity::Owner,
            // An expired one is no token the sandbox made: 401 below.
            Some(token)
                if owner_until(token, &shared.owner_token)
                    .is_some_and(|until| kube_conventions::time::now().as_second() < until) =>
            {
                Identity::Owner
            }
            Some(token) if tokens::is_ours(token) => {
                let user = shared.tokens.user(&shared.store(), token);
                Identity::User(user.ok_or_else(unauthorized)?)
            }
            _ => return Err(unauthorized()),
        },
    };
    let as_groups = header("impersonate-group");
    let as_extra = parts
        .headers
        .keys()
        .any(|k| k.as_str().starts_with("impersonate-extra-"));
    let Some(as_user) = header("impersonate-user")
        .into_iter()
        .next()
        .filter(|u| !u.is_empty())
    else {
        // impersonation.go `buildImpersonationRequests`: groups or extras
        // without a user are refused (500), never served as the caller.
        if !as_groups.is_empty() || as_extra || parts.headers.contains_key("impersonate-uid") {
            let asked: Vec<String> = as_groups.iter().map(|g| format!("{{Group {g}}}")).collect();
            return Err(ApiError::new(
                500,
                "InternalError",
                format!(
                    "Internal error occurred: requested [{}] without impersonating a user",
                    asked.join(" ")
                ),
            ));
        }
        return Ok(identity);
    };
    if let Identity::User(user) = &identity {
        let mut asks = vec![match service_account_of(&as_user) {
            Some((ns, name)) => ("serviceaccounts", name.to_string(), ns.to_string()),
            None => ("users", as_user.clone(), String::new()),
        }];
        asks.extend(
            as_groups
                .iter()
                .map(|g| ("groups", g.clone(), String::new())),
        );
        for (resource, name, namespace) in asks {
            let attrs = Attributes::Resource {
                verb: "impersonate".into(),
                group: String::new(),
                resource: resource.into(),
                subresource: String::new(),
                name,
                namespace,
            };
            if !authorize_user(shared, user, &attrs).allowed {
                return Err(forbidden(&identity, &attrs, ""));
            }
        }
    }
    Ok(Identity::User(impersonated(&as_user, as_groups)))
}

/// `OWNER.until.UNIX`: the owner's token, good until that second, as an
/// identity provider's short-lived token is (an exec plugin's in tests of
/// a credential's refresh); a 401 after it.
fn owner_until(token: &str, owner: &str) -> Option<i64> {
    token
        .strip_prefix(owner)?
        .strip_prefix(".until.")?
        .parse()
        .ok()
}

/// Who a request without credentials is (k8s.io/apiserver
/// pkg/authentication/request/anonymous/anonymous.go).
fn anonymous() -> UserInfo {
    UserInfo {
        name: "system:anonymous".into(),
        groups: vec!["system:unauthenticated".into()],
    }
}

/// The user an impersonation names (impersonation.go).
fn impersonated(name: &str, mut groups: Vec<String>) -> UserInfo {
    if let Some((ns, _)) = service_account_of(name)
        && groups.is_empty()
    {
        groups = vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{ns}"),
        ];
    }
    if name != "system:anonymous" && !groups.iter().any(|g| g == "system:authenticated") {
        groups.push("system:authenticated".into());
    }
    UserInfo {
        name: name.to_string(),
        groups,
    }
}

fn authorize_user(shared: &Shared, user: &UserInfo, attrs: &Attributes) -> rbac::Decision {
    if user.groups.iter().any(|g| g == "system:masters") {
        return rbac::Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    rbac::authorize(&shared.store(), user, attrs)
}

/// May the identity do this? The reason is RBAC's.
pub(crate) fn authorize(
    shared: &Shared,
    identity: &Identity,
    attrs: &Attributes,
) -> rbac::Decision {
    match identity {
        Identity::Owner => {
            let allowed = match attrs {
                Attributes::Resource {
                    verb,
                    resource,
                    subresource,
                    namespace,
                    ..
                } => {
                    resource.is_empty()
                        || !shared.denies(verb, &combined(resource, subresource), namespace)
                }
                Attributes::NonResource { .. } => true,
            };
            rbac::Decision {
                allowed,
                reason: String::new(),
            }
        }
        Identity::User(user) => authorize_user(shared, user, attrs),
    }
}

/// The refusal the apiserver writes (k8s.io/apiserver
/// pkg/endpoints/handlers/responsewriters/errors.go `ForbiddenStatus`).
pub(crate) fn forbidden(identity: &Identity, attrs: &Attributes, reason: &str) -> ApiError {
    let user = identity.name();
    let mut e = match attrs {
        Attributes::Resource {
            verb,
            group,
            resource,
            subresource,
            name,
            namespace,
        } => {
            let combined = combined(resource, subresource);
            let object = if name.is_empty() {
                resource.clone()
            } else {
                format!("{resource} {name:?}")
            };
            let scope = if namespace.is_empty() {
                "at the cluster scope".to_string()
            } else {
                format!("in the namespace {namespace:?}")
            };
            ApiError::new(
                403,
                "Forbidden",
                format!(
                    "{object} is forbidden: User {user:?} cannot {verb} resource {combined:?} in API group {group:?} {scope}"
                ),
            )
            .with_details(serde_json::json!({"name": name, "group": group, "kind": resource}))
        }
        Attributes::NonResource { verb, path } => ApiError::new(
            403,
            "Forbidden",
            format!("forbidden: User {user:?} cannot {verb} path {path:?}"),
        ),
    };
    if !reason.is_empty() {
        e.message = format!("{}: {reason}", e.message);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impersonated_service_account_gets_its_groups_unless_given_some() {
        let sa = impersonated("system:serviceaccount:ns:a", vec![]);
        assert_eq!(
            sa.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                "system:authenticated"
            ]
        );
        let jane = impersonated("jane", vec!["ops".into()]);
        assert_eq!(jane.groups, ["ops", "system:authenticated"]);
    }
}
