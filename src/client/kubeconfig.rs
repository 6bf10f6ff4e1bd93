//! The kubeconfig as kubectl reads it, following client-go's clientcmd:
//!
//! - which files (tools/clientcmd/loader.go, `ClientConfigLoadingRules.Load`):
//!   `--kubeconfig` alone, and it must exist; else every file of
//!   `KUBECONFIG`, missing ones skipped, merged so that the first file to
//!   name a context, cluster or user (or the current context) wins; else
//!   `~/.kube/config` when it exists;
//! - which context, cluster and user (tools/clientcmd/client_config.go,
//!   `DirectClientConfig.ClientConfig`: `getAuthInfo`, `getContext`,
//!   `getCluster`, then `ConfirmUsable`): a name given by a flag must exist,
//!   a current context named by the file must exist, and the flags
//!   override what the file says (overrides.go), a CA flag clearing the
//!   file's insecure setting and an insecure flag clearing the file's CA;
//! - whether the cluster is usable (tools/clientcmd/validation.go,
//!   `validateClusterInfo`): a CA file with the insecure flag is refused,
//!   an unreadable CA file is named.
//!
//! Every refusal is said in kubectl's words and before any request; none
//! echoes the file's contents, which hold tokens.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kube::config::{
    AuthInfo, Cluster, Context, KubeConfigOptions, Kubeconfig, KubeconfigError, NamedAuthInfo,
    NamedCluster, NamedContext,
};

use super::flags::ClusterArgs;

/// Where kubectl sends requests when nothing names a server
/// (clientcmd's `getDefaultServer`).
const DEFAULT_SERVER: &str = "http://localhost:8080";

/// A kubeconfig or flag kubectl would refuse before any request, in
/// kubectl's words (exit 2: fix the input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("stat {0}: no such file or directory")]
    Missing(String),
    #[error("error loading config file \"{path}\": {why}")]
    Unreadable { path: String, why: String },
    #[error("context \"{0}\" does not exist")]
    NoContext(String),
    #[error("Error in configuration: context was not found for specified context: {0}")]
    NoCurrentContext(String),
    #[error("auth info \"{0}\" does not exist")]
    NoUser(String),
    #[error("cluster \"{0}\" does not exist")]
    NoCluster(String),
    #[error("specifying a root certificates file with the insecure flag is not allowed")]
    CaWithInsecure,
    #[error("unable to read certificate-authority {path} for {cluster} due to open {path}: {why}")]
    CaUnreadable {
        path: String,
        cluster: String,
        why: String,
    },
    /// What kube-rs refused of the chosen entries (a certificate that does
    /// not parse, a token file that cannot be read).
    #[error("invalid configuration: {0}")]
    Unusable(String),
    /// validation.go `validateAuthInfo`: a token beside a login.
    #[error(
        "more than one authentication method found for {0}; found [token basicAuth], only one is allowed"
    )]
    TwoMethods(String),
    /// validation.go `validateAuthInfo`: a group, uid or extra to act as,
    /// with no user to impersonate (the request would run as yourself).
    #[error("requesting uid, groups or user-extra for {0} without impersonating a user")]
    ImpersonationWithoutUser(String),
}

/// The exec credential plugin the chosen user runs, for kubectl's words
/// when it fails (never its arguments or environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExecPlugin {
    pub(crate) command: String,
    pub(crate) install_hint: Option<String>,
}

/// The kubeconfig with the flags applied and the names kube is to use.
pub(crate) struct Chosen {
    pub(crate) kubeconfig: Kubeconfig,
    pub(crate) options: KubeConfigOptions,
    pub(crate) exec: Option<ExecPlugin>,
    /// The cluster's `proxy-url`, which wins over the environment.
    pub(crate) proxy_url: Option<String>,
}

/// The kubeconfig files kubectl reads, merged; `None` when there are none
/// (a pod's ServiceAccount, or flags alone, then say where to go).
pub(crate) fn load(explicit: Option<&Path>) -> Result<Option<Kubeconfig>, ConfigError> {
    if let Some(path) = explicit {
        if !path.exists() {
            return Err(ConfigError::Missing(path.display().to_string()));
        }
        return read(path).map(Some);
    }
    let paths: Vec<PathBuf> = match std::env::var_os("KUBECONFIG") {
        Some(list) => std::env::split_paths(&list)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
        None => Vec::new(),
    };
    let paths = if paths.is_empty() {
        std::env::var_os("HOME")
            .map(|home| vec![PathBuf::from(home).join(".kube").join("config")])
            .unwrap_or_default()
    } else {
        paths
    };
    let mut merged: Option<Kubeconfig> = None;
    // loader.go: a file that does not exist is skipped, not an error.
    for path in paths.iter().filter(|p| p.exists()) {
        let next = read(path)?;
        merged = Some(match merged {
            None => next,
            Some(m) => m.merge(next).map_err(|e| unreadable(path, &e))?,
        });
    }
    Ok(merged)
}

fn read(path: &Path) -> Result<Kubeconfig, ConfigError> {
    Kubeconfig::read_from(path).map_err(|e| unreadable(path, &e))
}

/// The parser's reason in one line: its position and complaint, never the
/// lines around it (a kubeconfig's neighbouring line may be a token).
fn unreadable(path: &Path, e: &KubeconfigError) -> ConfigError {
    let why = match e {
        KubeconfigError::ReadConfig(io, _) => io.to_string(),
        other => {
            let words = other.to_string();
            let first = words.lines().next().unwrap_or_default();
            first
                .trim_start_matches("failed to parse kubeconfig YAML: ")
                .trim_start_matches("error: ")
                .to_string()
        }
    };
    ConfigError::Unreadable {
        path: path.display().to_string(),
        why,
    }
}

/// The names a context of flags alone goes by (no kubeconfig names it).
const FLAGS: &str = "kubectl-maintain-flags";

/// Chooses the context, cluster and user as clientcmd does and applies
/// kubectl's global flags over them.
pub(crate) fn choose(mut kc: Kubeconfig, args: &ClusterArgs) -> Result<Chosen, ConfigError> {
    // getContext: a context a flag names must exist.
    let (context_name, required) = match &args.context {
        Some(c) => (c.clone(), true),
        None => (kc.current_context.clone().unwrap_or_default(), false),
    };
    let found = kc
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .map(|c| c.context.clone().unwrap_or_default());
    let context_exists = found.is_some();
    let context = match found {
        Some(c) => c,
        None if required => return Err(ConfigError::NoContext(context_name)),
        None => Context::default(),
    };
    // getAuthInfo and getCluster: likewise for --user and --cluster.
    let user_name = match &args.user {
        Some(u) if !kc.auth_infos.iter().any(|a| &a.name == u) => {
            return Err(ConfigError::NoUser(u.clone()));
        }
        Some(u) => u.clone(),
        None => context.user.clone().unwrap_or_default(),
    };
    let cluster_name = match &args.cluster {
        Some(c) if !kc.clusters.iter().any(|n| &n.name == c) => {
            return Err(ConfigError::NoCluster(c.clone()));
        }
        Some(c) => c.clone(),
        None => context.cluster.clone(),
    };
    // ConfirmUsable: a current context the file names must exist too.
    if !context_name.is_empty() && !context_exists {
        return Err(ConfigError::NoCurrentContext(context_name));
    }
    let name = |n: String| if n.is_empty() { FLAGS.to_string() } else { n };
    let (context_name, cluster_name, user_name) =
        (name(context_name), name(cluster_name), name(user_name));

    let mut cluster = kc
        .clusters
        .iter()
        .find(|c| c.name == cluster_name)
        .and_then(|c| c.cluster.clone())
        .unwrap_or_default();
    override_cluster(&mut cluster, args);
    validate_cluster(&cluster_name, &cluster)?;
    let mut user = kc
        .auth_infos
        .iter()
        .find(|a| a.name == user_name)
        .and_then(|a| a.auth_info.clone())
        .unwrap_or_default();
    override_user(&mut user, args);
    validate_user(&user_name, &user)?;
    let exec = user.exec.as_ref().map(|e| ExecPlugin {
        command: e.command.clone().unwrap_or_default(),
        install_hint: e.install_hint.clone(),
    });
    let proxy_url = cluster.proxy_url.clone().filter(|p| !p.is_empty());

    put(
        &mut kc.contexts,
        NamedContext {
            name: context_name.clone(),
            context: Some(Context {
                cluster: cluster_name.clone(),
                user: Some(user_name.clone()),
                ..context
            }),
            other: BTreeMap::default(),
        },
        |c| &c.name,
    );
    put(
        &mut kc.clusters,
        NamedCluster {
            name: cluster_name.clone(),
            cluster: Some(cluster),
            other: BTreeMap::default(),
        },
        |c| &c.name,
    );
    put(
        &mut kc.auth_infos,
        NamedAuthInfo {
            name: user_name.clone(),
            auth_info: Some(user),
            other: BTreeMap::default(),
        },
        |a| &a.name,
    );
    Ok(Chosen {
        kubeconfig: kc,
        options: KubeConfigOptions {
            context: Some(context_name),
            cluster: Some(cluster_name),
            user: Some(user_name),
        },
        exec,
        proxy_url,
    })
}

/// The names chosen, never the credentials.
impl std::fmt::Debug for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chosen")
            .field("context", &self.options.context)
            .field("cluster", &self.options.cluster)
            .field("user", &self.options.user)
            .finish_non_exhaustive()
    }
}

/// Replaces the entry of that name, or adds it.
fn put<T>(list: &mut Vec<T>, item: T, name: impl Fn(&T) -> &String) {
    match list.iter_mut().find(|x| name(x) == name(&item)) {
        Some(slot) => *slot = item,
        None => list.push(item),
    }
}

/// `--server`, `--certificate-authority`, `--insecure-skip-tls-verify` and
/// `--tls-server-name` over the file's cluster (clientcmd's `getCluster`):
/// a CA given on the command line clears the file's insecure setting, and
/// the insecure flag without a CA clears the file's CA.
fn override_cluster(cluster: &mut Cluster, args: &ClusterArgs) {
    if let Some(server) = &args.server {
        cluster.server = Some(server.clone());
    }
    if cluster.server.as_deref().is_none_or(str::is_empty) {
        cluster.server = Some(DEFAULT_SERVER.into());
    }
    if let Some(ca) = &args.certificate_authority {
        cluster.certificate_authority = Some(ca.clone());
        cluster.certificate_authority_data = None;
        if !args.insecure_skip_tls_verify {
            cluster.insecure_skip_tls_verify = None;
        }
    }
    if args.insecure_skip_tls_verify {
        cluster.insecure_skip_tls_verify = Some(true);
        if args.certificate_authority.is_none() {
            cluster.certificate_authority = None;
            cluster.certificate_authority_data = None;
        }
    }
    if let Some(name) = &args.tls_server_name {
        cluster.tls_server_name = Some(name.clone());
    }
}

/// clientcmd's `validateClusterInfo`, for what kube would otherwise take
/// silently: the insecure flag beside a CA, a CA file that cannot be read.
fn validate_cluster(name: &str, cluster: &Cluster) -> Result<(), ConfigError> {
    let has_ca = cluster
        .certificate_authority
        .as_deref()
        .is_some_and(|c| !c.is_empty())
        || cluster
            .certificate_authority_data
            .as_deref()
            .is_some_and(|c| !c.is_empty());
    if cluster.insecure_skip_tls_verify == Some(true) && has_ca {
        return Err(ConfigError::CaWithInsecure);
    }
    if let Some(path) = cluster
        .certificate_authority
        .as_deref()
        .filter(|p| !p.is_empty())
        && let Err(e) = std::fs::File::open(path)
    {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => e.to_string(),
        };
        return Err(ConfigError::CaUnreadable {
            path: path.to_string(),
            cluster: name.to_string(),
            why,
        });
    }
    Ok(())
}

/// `--token`, `--client-certificate`, `--client-key`, `--username` and
/// `--password` over the file's user.
fn override_user(user: &mut AuthInfo, args: &ClusterArgs) {
    if let Some(token) = &args.token {
        user.token = Some(token.clone().into());
        user.token_file = None;
    }
    if let Some(cert) = &args.client_certificate {
        user.client_certificate = Some(cert.clone());
        user.client_certificate_data = None;
    }
    if let Some(key) = &args.client_key {
        user.client_key = Some(key.clone());
        user.client_key_data = None;
    }
    if let Some(name) = &args.username {
        user.username = Some(name.clone());
    }
    if let Some(password) = &args.password {
        user.password = Some(password.clone().into());
    }
    impersonate(user, args);
}

/// `--as`, `--as-group` and `--as-uid` over the user's own impersonation
/// (clientcmd's overrides.go: each flag given replaces the field), which
/// kube sends as `Impersonate-*` headers.
pub(crate) fn impersonate(user: &mut AuthInfo, args: &ClusterArgs) {
    if let Some(name) = &args.as_user {
        user.impersonate = Some(name.clone());
    }
    if !args.as_group.is_empty() {
        user.impersonate_groups = Some(args.as_group.clone());
    }
    if let Some(uid) = &args.as_uid {
        user.impersonate_uid = Some(uid.clone());
    }
}

/// clientcmd's `validateAuthInfo`, for what kube would otherwise take
/// silently: a token and a login both (kube would send the token), and a
/// group, uid or extra to act as without a user (the server would answer
/// as yourself, with your rights rather than the group's).
pub(crate) fn validate_user(name: &str, user: &AuthInfo) -> Result<(), ConfigError> {
    use secrecy::ExposeSecret;
    let set = |s: Option<&str>| s.is_some_and(|s| !s.is_empty());
    let token = set(user.token.as_ref().map(ExposeSecret::expose_secret));
    let basic = set(user.username.as_deref())
        || set(user.password.as_ref().map(ExposeSecret::expose_secret));
    if token && basic {
        return Err(ConfigError::TwoMethods(name.to_string()));
    }
    let acts_as = set(user.impersonate_uid.as_deref())
        || user
            .impersonate_groups
            .as_ref()
            .is_some_and(|g| !g.is_empty())
        || user
            .impersonate_user_extra
            .as_ref()
            .is_some_and(|e| !e.is_empty());
    if acts_as && !set(user.impersonate.as_deref()) {
        return Err(ConfigError::ImpersonationWithoutUser(name.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Kubeconfig {
        Kubeconfig::from_yaml(
            "apiVersion: v1\nkind: Config\ncurrent-context: a\n\
             clusters:\n- name: ca\n  cluster: {server: 'https://a:6443', insecure-skip-tls-verify: true}\n\
             - name: cb\n  cluster: {server: 'https://b:6443', proxy-url: 'socks5://p:1080'}\n\
             contexts:\n- name: a\n  context: {cluster: ca, user: ua}\n- name: b\n  context: {cluster: cb, user: ub}\n\
             users:\n- name: ua\n  user: {token: ta}\n- name: ub\n  user: {exec: {command: plug, installHint: get plug}}\n",
        )
        .unwrap()
    }

    fn chosen_cluster(c: &Chosen) -> Cluster {
        let name = c.options.cluster.clone().unwrap();
        let found = c.kubeconfig.clusters.iter().find(|n| n.name == name);
        found.unwrap().cluster.clone().unwrap()
    }

    #[test]
    fn names_a_flag_gives_must_exist_and_a_missing_current_context_is_refused() {
        let with = |f: &dyn Fn(&mut ClusterArgs)| {
            let mut args = ClusterArgs::default();
            f(&mut args);
            choose(config(), &args).map(|c| (c.options.cluster, c.options.user))
        };
        assert_eq!(
            with(&|a| a.context = Some("typo".into())).unwrap_err(),
            ConfigError::NoContext("typo".into())
        );
        assert_eq!(
            with(&|a| a.user = Some("nobody".into())).unwrap_err(),
            ConfigError::NoUser("nobody".into())
        );
        assert_eq!(
            with(&|a| a.cluster = Some("nocl".into())).unwrap_err(),
            ConfigError::NoCluster("nocl".into())
        );
        let mut kc = config();
        kc.current_context = Some("gone".into());
        assert_eq!(
            choose(kc, &ClusterArgs::default()).unwrap_err(),
            ConfigError::NoCurrentContext("gone".into())
        );
        let b = with(&|a| a.context = Some("b".into())).unwrap();
        assert_eq!(b, (Some("cb".into()), Some("ub".into())));
        let mixed = with(&|a| a.user = Some("ub".into())).unwrap();
        assert_eq!(mixed, (Some("ca".into()), Some("ub".into())));
    }

    #[test]
    fn ca_and_insecure_resolve_as_clientcmd_does() {
        let dir = std::env::temp_dir().join(format!("kc-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = dir.join("ca.crt");
        std::fs::write(&ca, "x").unwrap();
        let ca = ca.display().to_string();
        // The file says insecure; a CA flag makes it verify.
        let args = ClusterArgs {
            certificate_authority: Some(ca.clone()),
            ..ClusterArgs::default()
        };
        let c = chosen_cluster(&choose(config(), &args).unwrap());
        assert_eq!(c.insecure_skip_tls_verify, None);
        assert_eq!(c.certificate_authority.as_deref(), Some(ca.as_str()));
        // Both flags: refused, as kubectl refuses them.
        let both = ClusterArgs {
            insecure_skip_tls_verify: true,
            ..args.clone()
        };
        assert_eq!(
            choose(config(), &both).unwrap_err(),
            ConfigError::CaWithInsecure
        );
        // A file with both: refused.
        let mut kc = config();
        kc.clusters[0]
            .cluster
            .as_mut()
            .unwrap()
            .certificate_authority = Some(ca.clone());
        assert_eq!(
            choose(kc.clone(), &ClusterArgs::default()).unwrap_err(),
            ConfigError::CaWithInsecure
        );
        // The insecure flag over a file's CA clears the CA.
        kc.clusters[0]
            .cluster
            .as_mut()
            .unwrap()
            .insecure_skip_tls_verify = None;
        let insecure = ClusterArgs {
            insecure_skip_tls_verify: true,
            ..ClusterArgs::default()
        };
        let c = chosen_cluster(&choose(kc.clone(), &insecure).unwrap());
        assert_eq!(
            (c.certificate_authority, c.insecure_skip_tls_verify),
            (None, Some(true))
        );
        // A CA file that is not there is named.
        kc.clusters[0]
            .cluster
            .as_mut()
            .unwrap()
            .certificate_authority = Some("/nonexistent/ca.crt".into());
        let e = choose(kc, &ClusterArgs::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unable to read certificate-authority /nonexistent/ca.crt for ca due to open /nonexistent/ca.crt: no such file or directory"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn flags_alone_and_a_serverless_cluster_go_where_kubectl_goes() {
        let args = ClusterArgs {
            server: Some("https://flags:6443".into()),
            token: Some("t".into()),
            ..ClusterArgs::default()
        };
        let c = choose(Kubeconfig::default(), &args).unwrap();
        assert_eq!(
            chosen_cluster(&c).server.as_deref(),
            Some("https://flags:6443")
        );
        let c = choose(Kubeconfig::default(), &ClusterArgs::default()).unwrap();
        assert_eq!(chosen_cluster(&c).server.as_deref(), Some(DEFAULT_SERVER));
    }

    #[test]
    fn the_exec_plugin_and_the_proxy_of_the_chosen_entries_are_kept() {
        let args = ClusterArgs {
            context: Some("b".into()),
            ..ClusterArgs::default()
        };
        let c = choose(config(), &args).unwrap();
        assert_eq!(
            c.exec,
            Some(ExecPlugin {
                command: "plug".into(),
                install_hint: Some("get plug".into())
            })
        );
        assert_eq!(c.proxy_url.as_deref(), Some("socks5://p:1080"));
    }

    #[test]
    fn a_malformed_file_is_named_without_its_lines() {
        let dir = std::env::temp_dir().join(format!("kc-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.yaml");
        std::fs::write(
            &bad,
            "apiVersion: v1\nusers:\n- name: u\n  user:\n    token: sekret-77\n   bad: [\n",
        )
        .unwrap();
        let e = load(Some(&bad)).unwrap_err().to_string();
        assert!(e.starts_with("error loading config file \""), "{e}");
        assert!(!e.contains("sekret-77") && !e.contains('\n'), "{e}");
        assert_eq!(
            load(Some(&dir.join("none.yaml"))).unwrap_err(),
            ConfigError::Missing(dir.join("none.yaml").display().to_string())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
