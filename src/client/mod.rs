//! Kubernetes clients from a kubeconfig, as kubectl would pick it
//! (kubeconfig.rs), through the proxy kubectl would use
//! (crate::outbound::proxy), with one credential for every client of the
//! process (credential.rs), connections made again for a plugin's new
//! client certificate (connections.rs), one retry policy (retry.rs) that knows which
//! failures are final (failure.rs), and a wait on a silent server said
//! (silence.rs).

use std::time::Duration;

use anyhow::Context as _;

use tokio::sync::broadcast;
use tower::buffer::BufferLayer;
use tower::retry::RetryLayer;

use flags::ClusterArgs;
use retry::{Retried, RetryPolicy};

mod connections;
pub(crate) mod credential;
pub(crate) mod failure;
pub(crate) mod flags;
pub(crate) mod kubeconfig;
pub(crate) mod metadata_answers;
pub(crate) mod pages;
pub(crate) mod retry;
pub(crate) mod served;
pub(crate) mod silence;
mod socks_login;

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
    /// The chosen user's credential plugin.
    pub(crate) exec: Option<kubeconfig::ExecPlugin>,
    /// The proxy requests go through: scheme, host and port.
    pub(crate) proxy: Option<String>,
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
    /// Which of Kubernetes 1.37's alpha APIs the cluster serves, asked once
    /// per run (a roll prepares each node's drain on its own).
    served: std::sync::Arc<tokio::sync::OnceCell<served::Served>>,
}

impl Clients {
    /// Which of Kubernetes 1.37's alpha APIs the cluster serves
    /// (EvictionRequests, PodGroups): one discovery request, the first time
    /// asked.
    pub(crate) async fn served(&self) -> Result<served::Served, kube::Error> {
        self.served
            .get_or_try_init(|| served::served(&self.main))
            .await
            .copied()
    }

    /// Hears of every retry `main` makes from now on.
    pub(crate) fn retries(&self) -> broadcast::Receiver<Retried> {
        self.retries.subscribe()
    }
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

/// The kubeconfig with the flags applied (or the pod's ServiceAccount),
/// through the proxy kubectl would use; `timeout` is `--request-timeout`.
/// Also the chosen user's credential plugin, for kubectl's words when it
/// fails.
async fn config(
    args: &ClusterArgs,
    timeout: Option<Duration>,
) -> anyhow::Result<(kube::Config, Option<kubeconfig::ExecPlugin>)> {
    let loaded = kubeconfig::load(args.kubeconfig.as_deref())?;
    let (mut config, exec, cluster_proxy) = match loaded {
        None if args.server.is_none() && in_pod() => {
            let mut config =
                kube::Config::incluster().context("loading the pod's ServiceAccount")?;
            kubeconfig::impersonate(&mut config.auth_info, args);
            kubeconfig::validate_user("the pod's ServiceAccount", &config.auth_info)?;
            (config, None, None)
        }
        loaded => {
            let chosen = kubeconfig::choose(loaded.unwrap_or_default(), args)?;
            let config = kube::Config::from_custom_kubeconfig(chosen.kubeconfig, &chosen.options)
                .await
                .map_err(|e| {
                    anyhow::Error::new(kubeconfig::ConfigError::Unusable(e.to_string()))
                })?;
            (config, chosen.exec, chosen.proxy_url)
        }
    };
    // kube reads HTTPS_PROXY for every server and matches NO_PROXY against
    // the proxy; kubectl's rules instead.
    config.proxy_url = crate::outbound::proxy::for_target(
        &config.cluster_url,
        cluster_proxy.as_deref(),
        &crate::outbound::proxy::environment,
    )?;
    if args.disable_compression {
        config.disable_compression = true;
    }
    if let Some(timeout) = timeout {
        config.read_timeout = Some(timeout);
        config.write_timeout = Some(timeout);
        // It bounds the dial and the handshake too, as client-go's
        // http.Client.Timeout bounds the whole request.
        config.connect_timeout = Some(config.connect_timeout.map_or(timeout, |c| c.min(timeout)));
    }
    Ok((config, exec))
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
    let (config, exec) = config(args, timeout).await?;
    from_config(config, timeout, exec).await
}

/// Clients for a kubeconfig held in memory (the demo's sandbox).
#[cfg(feature = "sandbox")]
pub(crate) async fn from_kubeconfig_yaml(yaml: &str) -> anyhow::Result<Clients> {
    let kc = kube::config::Kubeconfig::from_yaml(yaml).context("parsing the kubeconfig")?;
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .context("loading the kubeconfig")?;
    from_config(config, None, None).await
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

/// The process's credentials (crate::client::credential), one per source
/// (a plugin's configuration, a token file's path): every client a
/// process builds shares it, whatever command or run builds them.
fn shared_credential(
    key: String,
    make: impl FnOnce() -> credential::Credential,
) -> (std::sync::Arc<credential::Credential>, bool) {
    type Registry = std::sync::Mutex<Vec<(String, std::sync::Arc<credential::Credential>)>>;
    static CREDENTIALS: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    let mut all = CREDENTIALS
        .get_or_init(Registry::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, c)) = all.iter().find(|(k, _)| *k == key) {
        return (c.clone(), false);
    }
    let c = std::sync::Arc::new(make());
    all.push((key, c.clone()));
    (c, true)
}

/// Takes the user's exec plugin or token file from what kube would run or
/// read itself, for the one shared credential; its first fetch is made
/// here (a plugin may answer with a client certificate, which the
/// connections present: connections.rs). An inline token wins over a
/// file, as in client-go.
async fn take_credential(
    config: &mut kube::Config,
) -> Result<Option<std::sync::Arc<credential::Credential>>, kube::Error> {
    let info = &mut config.auth_info;
    if info.token.is_some() {
        return Ok(None);
    }
    let (credential, fresh) = if let Some(exec) = info.exec.take() {
        let key = format!("exec {}", serde_json::to_string(&exec).unwrap_or_default());
        shared_credential(key, || credential::Credential::exec(exec))
    } else if let Some(path) = info.token_file.take() {
        shared_credential(format!("file {path}"), || {
            credential::Credential::file(path)
        })
    } else {
        return Ok(None);
    };
    if fresh {
        credential
            .first()
            .await
            .map_err(|e| kube::Error::Service(Box::new(e)))?;
    }
    Ok(Some(credential))
}

/// Clients with the retry policy; a request is retried for `retry_window`
/// at most (`retry::WINDOW` when `None`).
async fn from_config(
    mut config: kube::Config,
    retry_window: Option<Duration>,
    exec: Option<kubeconfig::ExecPlugin>,
) -> anyhow::Result<Clients> {
    let _ = TARGET.set(Target {
        url: config.cluster_url.to_string(),
        window: retry_window.unwrap_or(retry::WINDOW),
        exec,
        proxy: config
            .proxy_url
            .as_ref()
            .map(|p| crate::outbound::Url::shown_of(&p.to_string())),
    });
    let agent = http::HeaderValue::from_str(&user_agent()).expect("an ASCII User-Agent");
    config.headers.push((http::header::USER_AGENT, agent));
    // kube's own retry (429, 503 and 504, for up to 15 tries) gives way to ours.
    config.default_retry = false;
    let (retries, _) = broadcast::channel(256);
    // A credential plugin runs here first: its failure is said in
    // kubectl's words (crate::vocabulary::api_error), with no context of ours.
    let credential = take_credential(&mut config).await?;
    let refreshes = credential.is_some();
    let auth = credential.clone().map(credential::AuthLayer);
    // The retry layer sends a request again through a clone of the service
    // below it, and the credential's layer answers a request from a clone:
    // a buffer makes the boxed stack cloneable. A retried request takes
    // the credential again, fresh after a 401.
    let base = || {
        connections::Connections::new(config.clone(), credential.clone())
            .map(|c| kube::client::ClientBuilder::new(c, config.default_namespace.clone()))
    };
    // Without --request-timeout an answer is waited for as client-go waits
    // for kubectl's first requests (crate::client::silence).
    let silence = silence::SilenceLayer {
        told: retries.clone(),
        within: retry_window.is_none().then_some(silence::ANSWER_WITHIN),
        flag: retry_window,
    };
    let main = base()?
        .with_layer(&BufferLayer::new(1024))
        .with_layer(&tower::util::option_layer(auth.clone()))
        .with_layer(&silence)
        .with_layer(&RetryLayer::new({
            let policy = RetryPolicy::new(retries.clone(), retry_window);
            if refreshes {
                policy.refreshing_credentials()
            } else {
                policy
            }
        }))
        .build();
    let evict = base()?
        .with_layer(&BufferLayer::new(1024))
        .with_layer(&tower::util::option_layer(auth))
        .with_layer(&silence)
        .with_layer(&tower::util::option_layer(
            refreshes.then(|| RetryLayer::new(RetryPolicy::refresh_only())),
        ))
        .build();
    Ok(Clients {
        main,
        evict,
        retries,
        served: std::sync::Arc::default(),
    })
}
