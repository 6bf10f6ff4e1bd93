//! A sandbox per test, the real kubectl and our binary pointed at it, and
//! waits on observable state with deadlines (never sleep-and-hope).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube_sandbox::objects::pods;
use kube_sandbox::request_log::{self, Entry};
use kube_sandbox::resources::Resource;
use kube_sandbox::view::{EventType, WatchEvent};
use kube_sandbox::{Options, Sandbox, SandboxConfig, scenario};
use serde_json::Value;

/// A directory removed when the test ends.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("km-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Asserts the command exited 0.
    #[track_caller]
    pub(crate) fn success(&self) -> &Self {
        self.code(0)
    }

    /// Asserts the command's exit code.
    #[track_caller]
    pub(crate) fn code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "{self:?}");
        self
    }

    /// The drain report on stdout (`-o json`), read with the schema of
    /// docs/report.md: an unknown or missing field fails the test.
    #[track_caller]
    pub(crate) fn report(&self) -> Report {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not a drain report: {e}\n{self:?}"))
    }
}

// Every documented field is declared, read or not, so that
// `deny_unknown_fields` checks the whole schema.

/// `kind: DrainReport`, as docs/report.md documents it.
#[allow(dead_code)]
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Report {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) dry_run: String,
    pub(crate) elapsed_ms: u64,
    pub(crate) waves: Vec<String>,
    pub(crate) nodes: Vec<NodeReport>,
    /// `plan --simulate` only.
    pub(crate) prediction: Option<Prediction>,
    /// A paced drain's holds, and what `--notify` came to.
    #[serde(default)]
    pub(crate) holds: Vec<serde_json::Value>,
    pub(crate) notifications: Option<serde_json::Value>,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Prediction {
    pub(crate) source: String,
    pub(crate) computed_ms: u64,
    pub(crate) horizon_ms: Option<u64>,
    pub(crate) replacements: Vec<Replacement>,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Replacement {
    pub(crate) pod: String,
    pub(crate) owner: String,
    pub(crate) node: Option<String>,
    pub(crate) pending: Option<String>,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NodeReport {
    pub(crate) node: String,
    pub(crate) status: String,
    pub(crate) message: Option<String>,
    pub(crate) was_cordoned: bool,
    #[serde(default)]
    pub(crate) not_cordoned: bool,
    pub(crate) elapsed_ms: u64,
    pub(crate) waves: Vec<WaveReport>,
    pub(crate) pods: Vec<PodReport>,
    #[serde(default)]
    pub(crate) budget_holds: Vec<BudgetHoldReport>,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BudgetHoldReport {
    pub(crate) budget: String,
    pub(crate) pods: Vec<String>,
    pub(crate) held_ms: u64,
    pub(crate) holding: bool,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct WaveReport {
    pub(crate) name: String,
    pub(crate) pods: usize,
    pub(crate) started_ms: Option<u64>,
    pub(crate) finished_ms: Option<u64>,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PodReport {
    pub(crate) pod: String,
    pub(crate) priority: i32,
    pub(crate) owner: Option<String>,
    pub(crate) wave: Option<String>,
    /// `state` and, for pods still there, the `cause` (docs/report.md).
    pub(crate) result: Value,
    pub(crate) warning: Option<String>,
}

impl Report {
    /// The report of one node.
    #[track_caller]
    pub(crate) fn node(&self, name: &str) -> &NodeReport {
        self.nodes
            .iter()
            .find(|n| n.node == name)
            .unwrap_or_else(|| panic!("node {name} in the report: {self:?}"))
    }
}

impl NodeReport {
    /// One pod's entry, by `namespace/name`.
    #[track_caller]
    pub(crate) fn pod(&self, key: &str) -> &PodReport {
        self.pods
            .iter()
            .find(|p| p.pod == key)
            .unwrap_or_else(|| panic!("pod {key} in the report of {}: {self:?}", self.node))
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

pub(crate) struct Cluster {
    // Field order matters: the sandbox stops before its runtime goes.
    pub(crate) sandbox: Sandbox,
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) dir: TempDir,
    pub(crate) kubeconfig: PathBuf,
    pub(crate) log: PathBuf,
}

/// The kubectl the tests run: on PATH, or named by `KUBECTL`.
pub(crate) fn kubectl_path() -> PathBuf {
    std::env::var_os("KUBECTL").map_or_else(|| PathBuf::from("kubectl"), PathBuf::from)
}

#[path = "../support/kubectl.rs"]
mod kubectl;

/// The real kubectl of minor `1.<minor>` (tests/support/kubectl.rs); the
/// test fails without it.
pub(crate) fn kubectl_of_minor(minor: u32) -> PathBuf {
    kubectl::find_kubectl(minor).unwrap_or_else(|e| panic!("{e}"))
}

/// The image the rendered Job names (any tag or digest).
pub(crate) const OUR_IMAGE: &str = "ghcr.io/kubectl-maintain/kubectl-maintain";

impl Drop for Cluster {
    /// Every task of the sandbox ends before its runtime does.
    fn drop(&mut self) {
        let _ = self.rt.block_on(self.sandbox.shutdown());
    }
}

impl Cluster {
    /// Starts a sandbox serving `scenario_yaml` as Kubernetes `1.<minor>`.
    pub(crate) fn start(scenario_yaml: &str, minor: u32) -> Self {
        Self::start_with(scenario_yaml, minor, |_| {})
    }

    pub(crate) fn start_with(
        scenario_yaml: &str,
        minor: u32,
        tweak: impl FnOnce(&mut SandboxConfig),
    ) -> Self {
        Self::launch(scenario_yaml, minor, tweak, Options::default())
    }

    /// A sandbox whose kubelets run our image as this very binary.
    pub(crate) fn start_running_our_image(scenario_yaml: &str, minor: u32) -> Self {
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_kubectl-maintain"));
        let options = Options {
            local_images: vec![(OUR_IMAGE.to_string(), bin)],
            ..Options::default()
        };
        Self::launch(scenario_yaml, minor, |_| {}, options)
    }

    /// A sandbox whose kubelets run `images` (IMAGE, local program) for real.
    pub(crate) fn start_with_local_images(
        scenario_yaml: &str,
        minor: u32,
        images: Vec<(String, PathBuf)>,
    ) -> Self {
        let options = Options {
            local_images: images,
            ..Options::default()
        };
        Self::launch(scenario_yaml, minor, |_| {}, options)
    }

    /// The sandbox as a kubeconfig's `cluster:` entry (flow style): its
    /// server and its CA.
    pub(crate) fn cluster_entry(&self) -> String {
        let (server, ca) = self.server_and_ca();
        format!("{{server: \"{server}\", certificate-authority-data: {ca}}}")
    }

    /// A kubeconfig `name` in the test's directory for this sandbox whose
    /// one user, `u`, is `user` (a flow-style YAML map, `{}` for none).
    pub(crate) fn kubeconfig_with_user(&self, name: &str, user: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: sb\n  cluster: {}\ncontexts:\n- name: x\n  context: {{cluster: sb, user: u}}\nusers:\n- name: u\n  user: {user}\n",
                self.cluster_entry()
            ),
        )
        .expect("kubeconfig");
        path
    }

    /// Its `server` and `certificate-authority-data`, as its kubeconfig
    /// carries them.
    pub(crate) fn server_and_ca(&self) -> (String, String) {
        use base64::Engine as _;
        let ca = base64::engine::general_purpose::STANDARD.encode(self.sandbox.ca_pem());
        (self.sandbox.url(), ca)
    }

    fn launch(
        scenario_yaml: &str,
        minor: u32,
        tweak: impl FnOnce(&mut SandboxConfig),
        options: Options,
    ) -> Self {
        let dir = TempDir::new("it");
        let parsed = scenario::parse(Path::new("scenario.yaml"), scenario_yaml)
            .expect("test scenario parses");
        let mut config = parsed.config.unwrap_or_default();
        config.kube_version = format!("1.{minor}");
        tweak(&mut config);
        let log = dir.path().join("requests.jsonl");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let sandbox = rt
            .block_on(Sandbox::start(
                parsed.objects,
                Options {
                    config,
                    request_log: Some(log.clone()),
                    ..options
                },
            ))
            .expect("sandbox starts");
        let kubeconfig = dir.path().join("kubeconfig");
        sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        Cluster {
            sandbox,
            rt,
            dir,
            kubeconfig,
            log,
        }
    }

    pub(crate) fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.rt
    }

    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        // Hermetic: no inherited kubeconfig, cache or terminal.
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .stdin(Stdio::null());
        cmd
    }

    fn run(mut cmd: Command, limit: Duration) -> Run {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        Self::finish(cmd.spawn().expect("command starts"), limit)
    }

    /// A kubectl (`program`) against this sandbox, with its own cache.
    fn kubectl_command(&self, program: &Path, args: &[&str]) -> Command {
        let cache = self.dir.path().join("cache");
        let mut all = vec!["--cache-dir", cache.to_str().expect("utf-8 path")];
        all.extend_from_slice(args);
        self.command(program, &all)
    }

    /// The real kubectl against this sandbox (killed after 60 s).
    /// The real kubectl, left running (a watch).
    pub(crate) fn kubectl_spawn(&self, args: &[&str]) -> std::process::Child {
        let mut cmd = self.kubectl_command(&kubectl_path(), args);
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        cmd.spawn().expect("kubectl starts")
    }

    pub(crate) fn kubectl(&self, args: &[&str]) -> Run {
        Self::run(
            self.kubectl_command(&kubectl_path(), args),
            Duration::from_secs(60),
        )
    }

    /// The real kubectl of minor `1.<minor>` against this sandbox.
    pub(crate) fn kubectl_minor(&self, minor: u32, args: &[&str]) -> Run {
        Self::run(
            self.kubectl_command(&kubectl_of_minor(minor), args),
            Duration::from_secs(60),
        )
    }

    /// Our binary against this sandbox (killed after 60 s).
    #[allow(dead_code)]
    pub(crate) fn maintain(&self, args: &[&str]) -> Run {
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_kubectl-maintain"));
        Self::run(self.command(&bin, args), Duration::from_secs(60))
    }

    /// Our binary with its stdout sent to `stdout` (a full disk, a closed
    /// pipe); the Run's stdout is then empty.
    pub(crate) fn maintain_with_stdout(&self, args: &[&str], stdout: Stdio) -> Run {
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_kubectl-maintain"));
        let mut cmd = self.command(&bin, args);
        cmd.stdout(stdout).stderr(Stdio::piped());
        Self::finish(cmd.spawn().expect("starts"), Duration::from_secs(60))
    }

    /// Our binary with extra environment (over the hermetic one).
    pub(crate) fn maintain_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_kubectl-maintain"));
        let mut cmd = self.command(&bin, args);
        cmd.envs(env.iter().copied());
        Self::run(cmd, Duration::from_secs(60))
    }

    /// The real kubectl with extra environment (over the hermetic one).
    pub(crate) fn kubectl_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.kubectl_command(&kubectl_path(), args);
        cmd.envs(env.iter().copied());
        Self::run(cmd, Duration::from_secs(60))
    }

    /// Our binary started in the background (for signals), output piped.
    #[allow(dead_code)]
    pub(crate) fn maintain_spawn(&self, args: &[&str]) -> std::process::Child {
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_kubectl-maintain"));
        let mut cmd = self.command(&bin, args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().expect("starts")
    }

    /// Starts a run whose stderr can be waited on while it runs
    /// ([`Watched::wait_for_stderr`]).
    pub(crate) fn maintain_watched(&self, args: &[&str]) -> Watched {
        Watched::new(self.maintain_spawn(args))
    }

    /// Waits for a run to end, killing it after `limit`.
    pub(crate) fn finish(child: std::process::Child, limit: Duration) -> Run {
        let mut child = child;
        end_within(&mut child, limit);
        let out = child.wait_with_output().expect("output");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Every change to a resource, oldest first, from the sandbox's history.
    pub(crate) fn history(&self, res: Resource) -> Vec<Arc<WatchEvent>> {
        self.sandbox.view().history(res)
    }

    pub(crate) fn get(&self, res: Resource, ns: &str, name: &str) -> Option<Arc<Value>> {
        self.sandbox.view().get(res, ns, name)
    }

    pub(crate) fn pods(&self) -> Vec<Arc<Value>> {
        self.sandbox.view().list(Resource::Pods)
    }

    /// Pods on a node, by `namespace/name`.
    pub(crate) fn pods_on(&self, node: &str) -> Vec<String> {
        self.pods()
            .iter()
            .filter(|p| pods::node_name(p) == Some(node))
            .map(|p| pods::key(p))
            .collect()
    }

    /// Waits until `cond` holds on the sandbox's state, or panics with `what`.
    pub(crate) fn wait_for(&self, what: &str, limit: Duration, cond: impl Fn(&Cluster) -> bool) {
        let deadline = Instant::now() + limit;
        while !cond(self) {
            assert!(
                Instant::now() < deadline,
                "timed out after {limit:?} waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits until every pod is Running and Ready and nothing is terminating.
    /// Until the simulation has nothing left to do for now (controllers
    /// caught up with every write).
    pub(crate) fn wait_idle(&self) {
        self.runtime().block_on(self.sandbox.wait_idle());
    }

    pub(crate) fn wait_settled(&self) {
        self.wait_for("all pods Ready", Duration::from_secs(20), |c| {
            let pods = c.pods();
            !pods.is_empty()
                && pods
                    .iter()
                    .all(|p| pods::is_ready(p) && !pods::is_terminating(p))
        });
    }

    pub(crate) fn requests(&self) -> Vec<Entry> {
        request_log::read(&self.log).expect("request log")
    }

    /// Where the request log stands: what comes after it, a run asked.
    pub(crate) fn mark(&self) -> usize {
        self.requests().len()
    }

    /// Asserts what our binary asked of the cluster since `mark`: nothing
    /// at all ([`Asked::Nothing`]) or nothing that changes it
    /// ([`Asked::NoWrite`]). The log is proven live first: a request made
    /// here must reach it, and the sandbox must have lost no entry; so a
    /// log that stopped writing (a full disk) fails the check rather than
    /// passing it. Returns the run's requests.
    #[track_caller]
    pub(crate) fn assert_asked(&self, mark: usize, asked: Asked, what: &str) -> Vec<Entry> {
        let probe = self.kubectl(&["get", "--raw", "/version"]);
        probe.success();
        assert!(
            !self.sandbox.request_log_failed(),
            "{what}: the request log lost entries, so it cannot tell"
        );
        let since: Vec<Entry> = self.requests().into_iter().skip(mark).collect();
        assert!(
            since
                .iter()
                .any(|r| r.path == "/version" && !r.user_agent.starts_with("kubectl-maintain/")),
            "{what}: the probe never reached the request log: {since:?}"
        );
        let ours: Vec<Entry> = since
            .into_iter()
            .filter(|r| r.user_agent.starts_with("kubectl-maintain/"))
            .collect();
        let bad: Vec<&Entry> = ours
            .iter()
            .filter(|r| match asked {
                Asked::Nothing => true,
                Asked::NoWrite => r.method != "GET" && !r.query.contains("dryRun=All"),
            })
            .collect();
        assert!(bad.is_empty(), "{what}: asked {asked:?}, but: {bad:#?}");
        ours
    }
}

/// What a run may have asked of the cluster ([`Cluster::assert_asked`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// No request at all: refused before any.
    Nothing,
    /// Reads and dry runs only.
    NoWrite,
}

/// Milliseconds since the epoch of an RFC 3339 timestamp from the request log.
pub(crate) fn log_ms(ts: &str) -> u128 {
    let t: k8s_openapi::jiff::Timestamp = ts.parse().expect("RFC 3339");
    t.as_millisecond() as u128
}

pub(crate) fn epoch_ms(t: std::time::SystemTime) -> u128 {
    t.duration_since(std::time::UNIX_EPOCH)
        .expect("after epoch")
        .as_millis()
}

impl Cluster {
    /// When each pod (`namespace/name`) was removed for good, from the
    /// sandbox's change history.
    pub(crate) fn deletion_times(&self) -> std::collections::HashMap<String, u128> {
        self.history(Resource::Pods)
            .iter()
            .filter(|e| e.kind == EventType::Deleted)
            .map(|e| {
                let object = e.object();
                let m = &object["metadata"];
                (
                    format!(
                        "{}/{}",
                        m["namespace"].as_str().unwrap_or_default(),
                        m["name"].as_str().unwrap_or_default()
                    ),
                    epoch_ms(e.at),
                )
            })
            .collect()
    }

    /// Times at which a pod first became Ready, by `namespace/name`, with its node.
    pub(crate) fn ready_times(&self) -> Vec<(String, String, u128)> {
        let mut seen = std::collections::HashSet::new();
        self.history(Resource::Pods)
            .iter()
            .filter(|e| pods::is_ready(&e.object()) && e.old().is_some_and(|o| !pods::is_ready(&o)))
            .filter_map(|e| {
                let object = e.object();
                let m = &object["metadata"];
                let key = format!(
                    "{}/{}",
                    m["namespace"].as_str().unwrap_or_default(),
                    m["name"].as_str().unwrap_or_default()
                );
                seen.insert(key.clone()).then(|| {
                    (
                        key,
                        pods::node_name(&object).unwrap_or_default().to_string(),
                        epoch_ms(e.at),
                    )
                })
            })
            .collect()
    }

    /// Successful evictions from the request log: (`namespace/name`, ms).
    pub(crate) fn evictions(&self) -> Vec<(String, u128)> {
        self.requests()
            .into_iter()
            .filter(|r| {
                r.method == "POST"
                    && r.path.ends_with("/eviction")
                    && r.status == 201
                    && !r.query.contains("dryRun")
            })
            .map(|r| {
                let parts: Vec<&str> = r.path.split('/').collect();
                // /api/v1/namespaces/NS/pods/NAME/eviction
                (format!("{}/{}", parts[4], parts[6]), log_ms(&r.ts))
            })
            .collect()
    }

    /// Requests that would change the cluster (dry runs excluded).
    pub(crate) fn writes(&self) -> Vec<Entry> {
        self.requests()
            .into_iter()
            .filter(|r| r.method != "GET" && !r.query.contains("dryRun=All"))
            .collect()
    }
}

/// A run whose output is read as it comes, so a test waits for the line
/// that says what it then checks (a hold), not for a guessed time.
pub(crate) struct Watched {
    child: std::process::Child,
    stdout: std::thread::JoinHandle<String>,
    stderr: Arc<std::sync::Mutex<String>>,
    stderr_done: std::thread::JoinHandle<()>,
}

impl Watched {
    fn new(mut child: std::process::Child) -> Watched {
        use std::io::Read as _;
        let mut out = child.stdout.take().expect("piped stdout");
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let mut err = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(std::sync::Mutex::new(String::new()));
        let into = stderr.clone();
        let stderr_done = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock()
                    .expect("stderr")
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Watched {
            child,
            stdout,
            stderr,
            stderr_done,
        }
    }

    /// Waits until stderr says `needle`; panics with what it said after `limit`.
    pub(crate) fn wait_for_stderr(&mut self, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            if self.stderr.lock().expect("stderr").contains(needle) {
                return;
            }
            let ended = self.child.try_wait().expect("wait").is_some();
            assert!(
                !ended && Instant::now() < deadline,
                "no {needle:?} on stderr ({}): {}",
                if ended { "the run ended" } else { "timed out" },
                self.stderr.lock().expect("stderr")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Is the run still going?
    pub(crate) fn running(&mut self) -> bool {
        self.child.try_wait().expect("wait").is_none()
    }

    /// Waits for the run to end, killing it after `limit`.
    pub(crate) fn finish(mut self, limit: Duration) -> Run {
        end_within(&mut self.child, limit);
        let status = self.child.wait().expect("wait");
        let stdout = self.stdout.join().expect("stdout");
        let _ = self.stderr_done.join();
        let stderr = self.stderr.lock().expect("stderr").clone();
        Run {
            code: status.code().unwrap_or(-1),
            stdout,
            stderr,
        }
    }
}

/// Waits for a process to end, killing it after `limit`.
fn end_within(child: &mut std::process::Child, limit: Duration) {
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
