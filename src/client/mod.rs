//! Kubernetes clients from a kubeconfig, as kubectl would pick it
//! (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`; `--context`).

use std::time::Duration;

use anyhow::Context as _;
use kube::config::{
    AuthInfo, Cluster, Context, KubeConfigOptions, Kubeconfig, NamedAuthInfo, NamedCluster,
    NamedContext,
};

use tokio::sync::broadcast;
use tower::buffer::BufferLayer;
use tower::retry::RetryLayer;

use crate::cli::ClusterArgs;
use retry::{Retried, RetryPolicy};

pub(crate) mod metadata_answers;
pub(crate) mod pages;
pub(crate) mod retry;

/// A global flag whose value kubectl would refuse: input that cannot run
/// (exit 2), found before any request.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadFlag(String);

/// Where this process's clients talk, and how long they retry a request:
/// for error lines, which name the server and tell the truth about retries.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) url: String,
    pub(crate) window: Duration,
}

static TARGET: std::sync::OnceLock<Target> = std::sync::OnceLock::new();

/// The cluster the clients were built for (the first, in a process that
/// builds several).
pub(crate) fn target() -> Option<&'static Target> {
    TARGET.get()
}

/// How long a request is retried before its error is final.
pub(crate) fn retry_window() -> Duration {
    target().map_or(retry::WINDOW, |t| t.window)
}

/// Two clients to one cluster: `main` retries every request that failed
/// for a reason another try may not meet (crate::client::retry); `evict`
/// retries nothing, because the drain's own loop owns evictions, their
/// budgets' refusals and their tickets.
#[derive(Clone)]
pub(crate) struct Clients {
    pub(crate) main: kube::Client,
    pub(crate) evict: kube::Client,
    /// Where `main` tells of its retries.
    retries: broadcast::Sender<Retried>,
}

impl Clients {
    /// Hears of every retry `main` makes from now on.
    pub(crate) fn retries(&self) -> broadcast::Receiver<Retried> {
        self.retries.subscribe()
    }
}

/// The kubeconfig as kubectl reads it: `--kubeconfig`, else every file of
/// `KUBECONFIG` merged, else `~/.kube/config`; none at all is fine when
/// `--server` says where the cluster is, and in a pod, whose
/// ServiceAccount is then used (`None`).
fn kubeconfig(args: &ClusterArgs) -> anyhow::Result<Option<Kubeconfig>> {
    match &args.kubeconfig {
        Some(path) => Kubeconfig::read_from(path)
            .map(Some)
            .with_context(|| format!("reading kubeconfig {}", path.display())),
        None => match Kubeconfig::read() {
            Ok(kc) => Ok(Some(kc)),
            Err(_) if args.server.is_some() => Ok(Some(Kubeconfig::default())),
            Err(_) if in_pod() => Ok(None),
            Err(e) => Err(e).context("reading the kubeconfig (KUBECONFIG or ~/.kube/config)"),
        },
    }
}

/// kubectl's global flags over the kubeconfig, as clientcmd's overrides
/// apply them: to the cluster and user the chosen context names.
fn apply_overrides(kc: &mut Kubeconfig, args: &ClusterArgs) -> KubeConfigOptions {
    const OVERRIDE: &str = "kubectl-maintain-flags";
    let context_name = args
        .context
        .clone()
        .or_else(|| kc.current_context.clone())
        .unwrap_or_else(|| OVERRIDE.to_string());
    if !kc.contexts.iter().any(|c| c.name == context_name) {
        kc.contexts.push(NamedContext {
            name: context_name.clone(),
            context: Some(Context {
                cluster: OVERRIDE.into(),
                user: Some(OVERRIDE.into()),
                ..Context::default()
            }),
            other: std::collections::BTreeMap::default(),
        });
    }
    let context = kc
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context.clone())
        .unwrap_or_default();
    let cluster_name = args.cluster.clone().unwrap_or(context.cluster);
    let user_name = args
        .user
        .clone()
        .or(context.user)
        .unwrap_or_else(|| OVERRIDE.to_string());
    if !kc.clusters.iter().any(|c| c.name == cluster_name) {
        kc.clusters.push(NamedCluster {
            name: cluster_name.clone(),
            cluster: Some(Cluster::default()),
            other: std::collections::BTreeMap::default(),
        });
    }
    if !kc.auth_infos.iter().any(|a| a.name == user_name) {
        kc.auth_infos.push(NamedAuthInfo {
            name: user_name.clone(),
            auth_info: Some(AuthInfo::default()),
            other: std::collections::BTreeMap::default(),
        });
    }
    if let Some(cluster) = kc
        .clusters
        .iter_mut()
        .find(|c| c.name == cluster_name)
        .map(|c| c.cluster.get_or_insert_with(Cluster::default))
    {
        if let Some(server) = &args.server {
            cluster.server = Some(server.clone());
        }
        if let Some(ca) = &args.certificate_authority {
            cluster.certificate_authority = Some(ca.clone());
            cluster.certificate_authority_data = None;
        }
        if args.insecure_skip_tls_verify {
            cluster.insecure_skip_tls_verify = Some(true);
        }
        if let Some(name) = &args.tls_server_name {
            cluster.tls_server_name = Some(name.clone());
        }
    }
    if let Some(user) = kc
        .auth_infos
        .iter_mut()
        .find(|a| a.name == user_name)
        .map(|a| a.auth_info.get_or_insert_with(AuthInfo::default))
    {
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
    }
    KubeConfigOptions {
        context: Some(context_name),
        cluster: Some(cluster_name),
        user: Some(user_name),
    }
}

/// Impersonation as kubectl sends it: `--as`, `--as-group`, `--as-uid`.
fn impersonation(args: &ClusterArgs) -> anyhow::Result<Vec<(http::HeaderName, http::HeaderValue)>> {
    let header = |name: &'static str, value: &str| -> anyhow::Result<_> {
        Ok((
            http::HeaderName::from_static(name),
            http::HeaderValue::from_str(value).with_context(|| format!("{name}: {value:?}"))?,
        ))
    };
    let mut headers = Vec::new();
    if let Some(user) = &args.as_user {
        headers.push(header("impersonate-user", user)?);
    }
    for group in &args.as_group {
        headers.push(header("impersonate-group", group)?);
    }
    if let Some(uid) = &args.as_uid {
        headers.push(header("impersonate-uid", uid)?);
    }
    Ok(headers)
}

/// Is this a pod whose ServiceAccount can be used, as client-go's deferred
/// loading decides when there is no kubeconfig (clientcmd
/// `inClusterClientConfig.Possible`: the service's address in the
/// environment and the token file present)?
fn in_pod() -> bool {
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
        && std::env::var_os("KUBERNETES_SERVICE_PORT").is_some()
        && std::path::Path::new("/var/run/secrets/kubernetes.io/serviceaccount/token").exists()
}

/// The kubeconfig with the flags applied (or the pod's ServiceAccount);
/// `timeout` is `--request-timeout`.
async fn config(args: &ClusterArgs, timeout: Option<Duration>) -> anyhow::Result<kube::Config> {
    let mut config = match kubeconfig(args)? {
        None => kube::Config::incluster().context("loading the pod's ServiceAccount")?,
        Some(mut kc) => {
            let options = apply_overrides(&mut kc, args);
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .context("loading the kubeconfig")?
        }
    };
    config.headers.extend(impersonation(args)?);
    if args.disable_compression {
        config.disable_compression = true;
    }
    if let Some(timeout) = timeout {
        config.read_timeout = Some(timeout);
        config.write_timeout = Some(timeout);
    }
    Ok(config)
}

/// `--request-timeout`, when given and not zero.
fn request_timeout(args: &ClusterArgs) -> anyhow::Result<Option<Duration>> {
    let timeout = match args.request_timeout.as_str() {
        "" => Duration::ZERO,
        t => crate::duration::parse(t).map_err(|e| BadFlag(format!("--request-timeout: {e}")))?,
    };
    Ok((timeout > Duration::ZERO).then_some(timeout))
}

/// kubectl's global flags that only shape kubectl's own logs and profiles:
/// accepted, checked as kubectl checks them, and otherwise of no effect.
fn check_ignored(args: &ClusterArgs) -> Result<(), BadFlag> {
    if let Some(d) = &args.log_flush_frequency {
        crate::duration::parse(d).map_err(|e| BadFlag(format!("--log-flush-frequency: {e}")))?;
    }
    if let Some(spec) = &args.vmodule {
        let bad = spec.split(',').filter(|s| !s.is_empty()).find(|s| {
            s.split_once('=')
                .is_none_or(|(pattern, n)| pattern.is_empty() || n.parse::<i32>().is_err())
        });
        if let Some(bad) = bad {
            return Err(BadFlag(format!(
                "--vmodule: {bad:?} is not pattern=N (a file pattern and a log level)"
            )));
        }
    }
    Ok(())
}

pub(crate) async fn connect(args: &ClusterArgs) -> anyhow::Result<Clients> {
    check_ignored(args)?;
    // kubectl's bound on a single request bounds its retries too.
    let timeout = request_timeout(args)?;
    from_config(config(args, timeout).await?, timeout)
}

/// Clients for a kubeconfig held in memory (the demo's sandbox).
#[cfg(feature = "sandbox")]
pub(crate) async fn from_kubeconfig_yaml(yaml: &str) -> anyhow::Result<Clients> {
    let kc = Kubeconfig::from_yaml(yaml).context("parsing the kubeconfig")?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .context("loading the kubeconfig")?;
    from_config(config, None)
}

/// `kubectl-maintain/v0.1.0 (linux/amd64)`, the shape of kubectl's own
/// User-Agent, so audit logs and API priority-and-fairness rules can tell
/// the drain apart.
pub(crate) fn user_agent() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!(
        "kubectl-maintain/v{} ({}/{arch})",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    )
}

/// Clients with the retry policy; a request is retried for `retry_window`
/// at most (`retry::WINDOW` when `None`).
fn from_config(
    mut config: kube::Config,
    retry_window: Option<Duration>,
) -> anyhow::Result<Clients> {
    let _ = TARGET.set(Target {
        url: config.cluster_url.to_string(),
        window: retry_window.unwrap_or(retry::WINDOW),
    });
    let agent = http::HeaderValue::from_str(&user_agent()).expect("an ASCII User-Agent");
    config.headers.push((http::header::USER_AGENT, agent));
    // kube's own retry (429, 503 and 504, for up to 15 tries) gives way to ours.
    config.default_retry = false;
    let (retries, _) = broadcast::channel(256);
    let main = kube::client::ClientBuilder::try_from(config.clone())
        .context("building the Kubernetes client")?
        // The retry layer sends a request again through a clone of the
        // service below it; a buffer makes the boxed stack cloneable.
        .with_layer(&BufferLayer::new(1024))
        .with_layer(&RetryLayer::new(RetryPolicy::new(
            retries.clone(),
            retry_window,
        )))
        .build();
    Ok(Clients {
        main,
        evict: kube::Client::try_from(config).context("building the Kubernetes client")?,
        retries,
    })
}
