//! Who a request is, once authenticated (k8s.io/apiserver's `user.Info`),
//! and a ServiceAccount's name as a user.

/// An authenticated user (k8s.io/apiserver's `user.Info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserInfo {
    pub(crate) name: String,
    pub(crate) groups: Vec<String>,
}

/// `system:serviceaccount:NS:NAME` (k8s.io/apiserver
/// pkg/authentication/serviceaccount/util.go).
pub(crate) fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

impl UserInfo {
    pub(crate) fn service_account(namespace: &str, name: &str) -> UserInfo {
        UserInfo {
            name: service_account_user(namespace, name),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
        }
    }
}
