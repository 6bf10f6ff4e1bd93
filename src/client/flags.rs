//! kubectl's global flags: where the cluster is and who asks. The client
//! reads them (kubeconfig.rs); the command line flattens them into every
//! command (crate::cli).

use std::path::PathBuf;

use clap::Args;

/// kubectl's boolean flags take `--flag`, `--flag=true` and `--flag=false`.
macro_rules! kubectl_bool {
    () => {
        clap::ArgAction::Set
    };
}
pub(crate) use kubectl_bool;

/// Where the cluster is and who asks, as kubectl finds them: kubectl hands
/// every argument after the plugin's name to the plugin, so runbooks carry
/// kubectl's global flags, with kubectl's meanings.
#[derive(Debug, Args, Clone, Default)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "FILE", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use
    #[arg(long, value_name = "NAME", global = true)]
    pub context: Option<String>,
    /// The kubeconfig cluster to use
    #[arg(long, value_name = "NAME", global = true)]
    pub cluster: Option<String>,
    /// The kubeconfig user to use
    #[arg(long, value_name = "NAME", global = true)]
    pub user: Option<String>,
    /// The address and port of the Kubernetes API server
    #[arg(short = 's', long, value_name = "URL", global = true)]
    pub server: Option<String>,
    /// Bearer token for authentication to the API server
    #[arg(long, value_name = "TOKEN", global = true)]
    pub token: Option<String>,
    /// Path to a cert file for the certificate authority
    #[arg(long, value_name = "FILE", global = true)]
    pub certificate_authority: Option<String>,
    /// Path to a client certificate file for TLS
    #[arg(long, value_name = "FILE", global = true)]
    pub client_certificate: Option<String>,
    /// Path to a client key file for TLS
    #[arg(long, value_name = "FILE", global = true)]
    pub client_key: Option<String>,
    /// Do not check the server's certificate (insecure)
    #[arg(long, global = true, action = kubectl_bool!(), num_args = 0..=1, default_value_t = false, default_missing_value = "true", require_equals = true)]
    pub insecure_skip_tls_verify: bool,
    /// Server name to use for server certificate validation
    #[arg(long, value_name = "NAME", global = true)]
    pub tls_server_name: Option<String>,
    /// Username to impersonate for the operation
    #[arg(long = "as", value_name = "USER", global = true)]
    pub as_user: Option<String>,
    /// Group to impersonate for the operation (repeatable)
    #[arg(long = "as-group", value_name = "GROUP", global = true)]
    pub as_group: Vec<String>,
    /// UID to impersonate for the operation
    #[arg(long = "as-uid", value_name = "UID", global = true)]
    pub as_uid: Option<String>,
    /// How long to wait for a single request before giving up (e.g. 30s; 0: no limit)
    #[arg(long, value_name = "DURATION", global = true, default_value = "0")]
    pub request_timeout: String,
    /// Do not ask the server for compressed responses
    #[arg(long, global = true, action = kubectl_bool!(), num_args = 0..=1, default_value_t = false, default_missing_value = "true", require_equals = true)]
    pub disable_compression: bool,
    /// Accepted as kubectl accepts it; a drain works across namespaces
    #[arg(short = 'n', long, value_name = "NAMESPACE", global = true)]
    pub namespace: Option<String>,
    /// kubectl's log level; accepted, the drain's own lines do not change
    #[arg(short = 'v', long = "v", value_name = "LEVEL", global = true)]
    pub verbosity: Option<u8>,
    /// kubectl's discovery cache; accepted (the drain caches nothing)
    #[arg(long, value_name = "DIR", global = true)]
    pub cache_dir: Option<PathBuf>,
    /// Accepted as kubectl accepts it
    #[arg(long, global = true, action = kubectl_bool!(), num_args = 0..=1, default_value_t = false, default_missing_value = "true", require_equals = true)]
    pub match_server_version: bool,
    /// Accepted as kubectl accepts it
    #[arg(long, global = true, action = kubectl_bool!(), num_args = 0..=1, default_value_t = false, default_missing_value = "true", require_equals = true)]
    pub warnings_as_errors: bool,
    /// Username for basic authentication to the API server
    #[arg(long, value_name = "NAME", global = true)]
    pub username: Option<String>,
    /// Password for basic authentication to the API server
    #[arg(long, value_name = "PASSWORD", global = true)]
    pub password: Option<String>,
    /// kubectl's log flush interval (e.g. 5s); accepted, the plugin writes each line at once
    #[arg(long, value_name = "DURATION", global = true)]
    pub log_flush_frequency: Option<String>,
    /// kubectl's per-file log levels (pattern=N,...); accepted, the plugin has no such logs
    #[arg(long, value_name = "PATTERN=N,...", global = true)]
    pub vmodule: Option<String>,
    /// kubectl's Go profiler (none|cpu|heap|goroutine|threadcreate|block|mutex); accepted, no profile is written
    #[arg(long, value_name = "NAME", global = true, value_parser = ["none", "cpu", "heap", "goroutine", "threadcreate", "block", "mutex"])]
    pub profile: Option<String>,
    /// Where kubectl writes --profile; accepted, no profile is written
    #[arg(long, value_name = "FILE", global = true)]
    pub profile_output: Option<PathBuf>,
}
