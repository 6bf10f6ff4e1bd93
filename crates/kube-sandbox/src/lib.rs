//! The sandbox: a simulated cluster behind a real HTTP server on loopback
//! that speaks the Kubernetes API well enough that the real kubectl cannot
//! tell it from a kube-apiserver for what a drain does. See docs/sandbox.md.
//!
//! Laid out like the control plane it simulates: `apiserver` (the HTTP
//! chain, one handler per verb, and what the registry and admission do to
//! objects), the `store` (objects, versions, watch history, one type per
//! index), the `controllers` (each with its triggers beside its reconcile)
//! and the `kubelet` (with KubeVirt), driven by one `simulation` loop. The public API is what
//! this file exports: start a sandbox with its settings and faults, load
//! scenarios or generate clusters, read the request log, and look at the
//! objects and their history through a read-only `View`.

#![warn(missing_docs)]

mod api_error;
mod apiserver;
mod auth;
mod clock;
pub mod config;
mod container_log;
mod controllers;
mod events;
pub mod generate;
mod kubelet;
mod lag;
mod models;
pub mod objects;
pub mod private_dir;
mod random;
pub mod request_log;
pub mod resources;
pub mod scenario;
mod shared;
mod simulation;
mod store;
mod stored;
mod tasks;
mod timers;
pub mod view;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch as tokio_watch;

pub use clock::follow_tokio_clock;
pub use config::{ClusterAutoscaler, Deny, Faults, Rule, SandboxConfig};
pub use lag::{Lateness, SandboxLag};
pub use private_dir::PrivateDir;
use resources::Resource;
use shared::Shared;
use store::Store;
pub use view::View;

/// Why a sandbox could not start or write its files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    #[error(transparent)]
    /// The scenario file could not be read or parsed.
    Scenario(#[from] scenario::ScenarioError),
    #[error("scenario: {0}")]
    /// The scenario's objects could not be stored (a duplicate, an invalid object).
    Objects(String),
    #[error("cannot listen on {addr}: {source}")]
    /// The server could not bind its address.
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    #[error("{0}")]
    /// The CA or the serving certificate could not be made.
    Tls(String),
    #[error("cannot write {path}: {source}")]
    /// A file (the kubeconfig) could not be written.
    Write {
        /// The file that could not be written.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// How to start a sandbox.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the API server listens (port 0: a free port).
    pub listen: SocketAddr,
    /// Timings, faults and permissions of the simulated cluster.
    pub config: SandboxConfig,
    /// Where every request is logged as a JSON line, if anywhere.
    pub request_log: Option<PathBuf>,
    /// Images whose containers run for real, as a local program
    /// (IMAGE, PATH).
    pub local_images: Vec<(String, PathBuf)>,
    /// Keep the workloads (Deployments, ReplicaSets, StatefulSets,
    /// ReplicationControllers, Jobs) and their PodDisruptionBudgets as
    /// JSON, parsed when read, as pods are: 1,130 MiB to 775 for a copy of
    /// a 150,000-pod cluster (`plan --simulate` sets it) for 1.11x its
    /// time, 1.25x slower when a drain changes thousands of their pods
    /// (docs/benchmarks-history.md).
    pub compact_workloads: bool,
    /// The objects were read from an API server, which stored them with
    /// its defaults: they are loaded as they are, not defaulted again
    /// (crate::apiserver::defaults). A copy of a live cluster
    /// (`plan --simulate`) sets it: defaulting its 150,000 pods again took a
    /// tenth of the thread that loads the copy (docs/benchmarks-history.md).
    pub defaulted: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            config: SandboxConfig::default(),
            request_log: None,
            local_images: Vec::new(),
            compact_workloads: false,
            defaulted: false,
        }
    }
}

/// A running sandbox. Dropping it stops the server and the simulation.
pub struct Sandbox {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: tokio_watch::Sender<bool>,
    idle: tokio_watch::Receiver<bool>,
    /// Stops the HTTP side only (outages); the simulation goes on.
    server_stop: Arc<std::sync::Mutex<tokio_watch::Sender<bool>>>,
    runtime: tokio::runtime::Handle,
}

impl Sandbox {
    /// Loads `objects` and starts serving them. Must run inside a tokio runtime.
    pub async fn start(
        objects: impl IntoIterator<Item = (Resource, Value)>,
        opts: Options,
    ) -> Result<Sandbox, SandboxError> {
        let mut store = Store::new(opts.config.watch_history);
        if opts.compact_workloads {
            store.compact_workloads();
        }
        scenario::populate(&mut store, objects, opts.config.minor(), opts.defaulted)
            .map_err(SandboxError::Objects)?;
        auth::bootstrap::ensure(&mut store);
        let log =
            match &opts.request_log {
                Some(p) => Some(request_log::RequestLog::create(p).map_err(|source| {
                    SandboxError::Write {
                        path: p.clone(),
                        source,
                    }
                })?),
                None => None,
            };
        let mut shared = Shared::new(store, opts.config, log);
        if !opts.local_images.is_empty() {
            shared.runtime =
                kubelet::containers::Runtime::new(opts.local_images.clone()).map_err(|source| {
                    SandboxError::Write {
                        path: std::env::temp_dir(),
                        source,
                    }
                })?;
        }
        // Always HTTPS: kubectl sends no credential over plain HTTP
        // (clientcmd's client_config.go reads the user's only for TLS), and
        // the sandbox requires its owner's token.
        let tls =
            apiserver::tls::Tls::generate(shared.config.verify_client_certificates_in_handshake)
                .map_err(|e| SandboxError::Tls(e.to_string()))?;
        shared.tls = Some(tls);
        let shared = Arc::new(shared);
        let listener =
            apiserver::bind(opts.listen)
                .await
                .map_err(|source| SandboxError::Listen {
                    addr: opts.listen,
                    source,
                })?;
        let addr = listener
            .local_addr()
            .map_err(|source| SandboxError::Listen {
                addr: opts.listen,
                source,
            })?;
        shared.runtime.set_apiserver(addr);
        let (shutdown, rx) = tokio_watch::channel(false);
        let (idle_tx, idle) = tokio_watch::channel(false);
        supervise(
            &shared,
            "simulation",
            simulation::spawn(&shared, rx.clone(), idle_tx),
        );
        let (server_stop, server_rx) = tokio_watch::channel(false);
        supervise(
            &shared,
            "API server",
            tokio::spawn(apiserver::serve(listener, shared.clone(), server_rx)),
        );
        Ok(Sandbox {
            addr,
            shared,
            shutdown,
            idle,
            server_stop: Arc::new(std::sync::Mutex::new(server_stop)),
            runtime: tokio::runtime::Handle::current(),
        })
    }

    /// The address it serves on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How late the simulated kubelets and controllers acted against their
    /// own schedule since the start or the last [`Sandbox::reset_lag`]
    /// (crate::lag): a bench whose sandbox is late measures the simulator.
    pub fn lag(&self) -> SandboxLag {
        self.shared.lag.read()
    }

    /// Starts counting lateness afresh (a bench, once its cluster settled).
    pub fn reset_lag(&self) {
        self.shared.lag.reset();
    }

    /// Has the request log (`Options::request_log`) lost an entry? Every
    /// check that reads it for what was not asked must fail then.
    pub fn request_log_failed(&self) -> bool {
        self.shared
            .log
            .as_ref()
            .is_some_and(request_log::RequestLog::failed)
    }

    /// Its URL, for a kubeconfig or a client, with the path it is served
    /// under (`pathPrefix`), if any.
    pub fn url(&self) -> String {
        format!("https://{}{}", self.addr, self.shared.path_prefix())
    }

    /// A read-only view of the objects and their history (tests,
    /// benchmarks, demo). Each of its reads is a snapshot.
    pub fn view(&self) -> View<'_> {
        View::new(&self.shared)
    }

    /// Why the sandbox stopped working, if a task of it panicked. Once it
    /// has, every request is answered 500 with this message.
    pub fn failure(&self) -> Option<String> {
        self.shared.failure()
    }

    /// Stops a node's kubelet (`start: false`: a kernel panic, a lost NIC, a
    /// power-off) or starts it again, as the node annotation
    /// `sandbox.kubectl-maintain.io/kubelet: stopped` does
    /// (crate::kubelet::outage). False if there is no such node.
    pub fn set_kubelet(&self, node: &str, running: bool) -> bool {
        let mut store = self.shared.store();
        let key = (String::new(), node.to_string());
        store
            .modify(resources::Resource::Nodes, &key, |n| {
                if running {
                    if let Some(a) = n["metadata"]["annotations"].as_object_mut() {
                        a.remove(config::KUBELET);
                    }
                } else {
                    n["metadata"]["annotations"][config::KUBELET] = "stopped".into();
                }
            })
            .is_ok()
    }

    #[doc(hidden)] // a test hook: changes the cluster under a running test
    /// Changes the faults while serving (tests turn them on once a scenario settled).
    pub fn set_faults(&self, faults: Faults) {
        self.shared.set_faults(faults);
    }

    #[doc(hidden)] // a test hook: changes the cluster under a running test
    /// Refuses `deny.verb` on `deny.resource` from now on, as RBAC would.
    pub fn deny(&self, deny: Deny) {
        self.shared.deny(deny);
    }

    #[doc(hidden)] // a test hook: changes the cluster under a running test
    /// From now on allows only what `rules` allow, as a Role bound to the
    /// caller would (`None`: everything again). Discovery stays open.
    pub fn set_role(&self, rules: Option<Vec<Rule>>) {
        self.shared.set_role(rules);
    }

    /// Drops the watch history, as an etcd compaction does: every watch
    /// resuming from an earlier resourceVersion gets 410 Expired. Tests
    /// compact under a running client; a copy of a cluster compacts once
    /// settled, so the old versions its first pass replaced are not kept.
    pub fn compact_history(&self) {
        self.shared.store().compact();
    }

    /// A kubeconfig that points at this sandbox, as YAML: its CA and its
    /// owner's token.
    pub fn kubeconfig(&self) -> String {
        use base64::Engine as _;
        let ca = base64::engine::general_purpose::STANDARD.encode(self.ca_pem());
        let (server, token) = (self.url(), &self.shared.owner_token);
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sandbox\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\ncontexts:\n- name: sandbox\n  context:\n    cluster: sandbox\n    user: sandbox\ncurrent-context: sandbox\nusers:\n- name: sandbox\n  user:\n    token: {token}\npreferences: {{}}\n"
        )
    }

    /// The CA's private key, PKCS#8 PEM, as kubeadm keeps it in
    /// `/etc/kubernetes/pki/ca.key`: a client certificate it signs (`openssl
    /// x509 -req -CA ca.crt -CAkey ca.key`) authenticates as its subject's
    /// CommonName, in its Organizations. Empty when serving plain HTTP.
    pub fn ca_key_pem(&self) -> String {
        self.shared
            .tls
            .as_ref()
            .map(|t| t.ca_key_pem.clone())
            .unwrap_or_default()
    }

    /// The CA its HTTPS certificate is signed by, PEM.
    pub fn ca_pem(&self) -> String {
        self.shared
            .tls
            .as_ref()
            .map(|t| t.ca_pem.clone())
            .unwrap_or_default()
    }

    /// Writes `kubeconfig()` to a file readable by its owner alone (0600,
    /// as kubectl writes kubeconfigs): it holds the sandbox's credential.
    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), SandboxError> {
        use std::io::Write as _;
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        let error = |source| SandboxError::Write {
            path: path.to_path_buf(),
            source,
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .map_err(error)?;
        // A file that was there keeps its mode on open: narrow it too.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(error)?;
        file.write_all(self.kubeconfig().as_bytes()).map_err(error)
    }

    /// Waits until the simulation has nothing left to reconcile (timers
    /// may still be pending: pods starting or stopping later).
    ///
    /// Panics if the simulation failed, instead of waiting forever.
    pub async fn wait_idle(&self) {
        let mut idle = self.idle.clone();
        if idle.wait_for(|i| *i).await.is_err()
            && let Some(why) = self.failure()
        {
            panic!("the sandbox failed: {why}");
        }
    }

    #[doc(hidden)] // a test hook: changes the cluster under a running test
    /// An API server outage: after `after`, connections are closed and
    /// refused for `length`, then the same state is served again on the same
    /// address, as an apiserver restarted in front of its etcd.
    pub fn outage(&self, after: std::time::Duration, length: std::time::Duration) {
        let stop = self.server_stop.clone();
        let shared = self.shared.clone();
        let addr = self.addr;
        self.runtime.spawn(async move {
            tokio::time::sleep(after).await;
            let _ = stop
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .send(true);
            tokio::time::sleep(length).await;
            let listener = loop {
                match apiserver::bind(addr).await {
                    Ok(l) => break l,
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
                }
            };
            let (tx, rx) = tokio_watch::channel(false);
            *stop
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = tx;
            let task = tokio::spawn(apiserver::serve(listener, shared.clone(), rx));
            supervise(&shared, "API server", task);
        });
    }

    #[doc(hidden)] // a test hook: counts what shutdown waits for
    /// The tasks running now that [`Sandbox::shutdown`] waits for: the
    /// simulation, the API server, each open watch and followed log.
    pub fn live_tasks(&self) -> usize {
        self.shared.tasks.live()
    }

    #[doc(hidden)] // a test hook: kills a local-image container
    /// The process id of a local-image container while it runs.
    pub fn container_pid(&self, namespace: &str, pod: &str, container: &str) -> Option<u32> {
        let key = (namespace.to_string(), pod.to_string());
        self.shared.runtime.pid(&key, container)
    }

    /// Stops the server and the simulation (dropping it does too), and
    /// the processes of local-image containers. Their tasks end soon after;
    /// [`Sandbox::shutdown`] waits for them.
    pub fn stop(&self) {
        self.shared.runtime.kill_all();
        self.shared.stopping.send_replace(true);
        let _ = self.shutdown.send(true);
        let _ = self
            .server_stop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .send(true);
    }
}

impl Sandbox {
    /// Stops, and waits (at most 5 s) until every task of the sandbox has
    /// ended (watches and followed logs included, whoever still reads
    /// them), so that the runtime it runs on can shut down without one of
    /// them still running. Call it before the runtime ends. False, and
    /// said on stderr, if some task had not ended.
    pub async fn shutdown(&self) -> bool {
        self.stop();
        let ended = self
            .shared
            .tasks
            .ended(std::time::Duration::from_secs(5))
            .await;
        if !ended {
            eprintln!("kube-sandbox: some tasks had not ended 5 s after the stop");
        }
        ended
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Watches a task of the sandbox: if it panics, the sandbox says so on
/// stderr and fails every later request, so a broken simulation fails
/// tests and drains loudly instead of leaving them waiting.
fn supervise(shared: &Arc<Shared>, what: &'static str, task: tokio::task::JoinHandle<()>) {
    let shared = shared.clone();
    let tasks = shared.tasks.clone();
    tasks.spawn(async move {
        if let Err(e) = task.await
            && e.is_panic()
        {
            let payload = e.into_panic();
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "no message".into());
            let why = format!("the sandbox's {what} panicked: {message}");
            eprintln!("kube-sandbox: {why}");
            shared.fail(why);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_task_fails_the_sandbox_loudly() {
        let shared = Arc::new(Shared::new(Store::new(10), SandboxConfig::default(), None));
        supervise(
            &shared,
            "simulation",
            tokio::spawn(async { panic!("boom") }),
        );
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while shared.failure().is_none() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no failure recorded"
            );
            tokio::task::yield_now().await;
        }
        assert_eq!(
            shared.failure().as_deref(),
            Some("the sandbox's simulation panicked: boom")
        );
    }
}
