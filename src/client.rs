//! Kubernetes clients from a kubeconfig, as kubectl would pick it
//! (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`; `--context`).

use std::path::PathBuf;

use anyhow::Context as _;
use kube::config::{KubeConfigOptions, Kubeconfig};

#[derive(Debug, Clone, Default)]
pub(crate) struct Target {
    pub(crate) kubeconfig: Option<PathBuf>,
    pub(crate) context: Option<String>,
}

/// Two clients to one cluster: `main` retries throttled requests itself;
/// `evict` does not, because kube's built-in retry hides a PDB's 429 for
/// minutes and the drain owns that loop.
#[derive(Clone)]
pub(crate) struct Clients {
    pub(crate) main: kube::Client,
    pub(crate) evict: kube::Client,
}

async fn config(target: &Target) -> anyhow::Result<kube::Config> {
    let options = KubeConfigOptions {
        context: target.context.clone(),
        ..KubeConfigOptions::default()
    };
    match &target.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .with_context(|| format!("loading kubeconfig {}", path.display()))
        }
        None => kube::Config::from_kubeconfig(&options)
            .await
            .context("loading the kubeconfig (KUBECONFIG or ~/.kube/config)"),
    }
}

pub(crate) async fn connect(target: &Target) -> anyhow::Result<Clients> {
    from_config(config(target).await?)
}

/// Clients for a kubeconfig held in memory (the demo's sandbox).
#[cfg(feature = "sandbox")]
pub(crate) async fn from_kubeconfig_yaml(yaml: &str) -> anyhow::Result<Clients> {
    let kc = Kubeconfig::from_yaml(yaml).context("parsing the kubeconfig")?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .context("loading the kubeconfig")?;
    from_config(config)
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

fn from_config(mut config: kube::Config) -> anyhow::Result<Clients> {
    let agent = http::HeaderValue::from_str(&user_agent()).expect("an ASCII User-Agent");
    config.headers.push((http::header::USER_AGENT, agent));
    let mut evict_config = config.clone();
    evict_config.default_retry = false;
    Ok(Clients {
        main: kube::Client::try_from(config).context("building the Kubernetes client")?,
        evict: kube::Client::try_from(evict_config).context("building the Kubernetes client")?,
    })
}
