//! Sandbox settings: the served version, watch history, fault injection and
//! refused permissions. Set by flags or by a `kind: Sandbox` document in the
//! scenario (docs/sandbox.md).

use serde::Deserialize;

/// The prefix of every annotation that tunes the simulation.
pub const KNOB_PREFIX: &str = "sandbox.kubectl-maintain.io/";
/// On a pod: it takes this many seconds to stop once asked.
pub const SHUTDOWN_SECONDS: &str = "sandbox.kubectl-maintain.io/shutdown-seconds";
/// On a pod: it becomes Ready this many seconds after it starts.
pub const READY_SECONDS: &str = "sandbox.kubectl-maintain.io/ready-seconds";
/// On a node: reboot it, down for this many seconds (crate::kubelet::reboot).
pub const REBOOT_SECONDS: &str = "sandbox.kubectl-maintain.io/reboot-seconds";
/// On a node: its volumes detach this many seconds after their last pod
/// left (crate::controllers::attach_detach; 0.5 by default).
pub const DETACH_SECONDS: &str = "sandbox.kubectl-maintain.io/detach-seconds";
/// On a node: `stopped` stops its kubelet (a kernel panic, a lost NIC, a
/// power-off) until the annotation goes (crate::kubelet::outage).
pub const KUBELET: &str = "sandbox.kubectl-maintain.io/kubelet";
/// On a pod: it completes (Succeeded) this many seconds after it starts.
pub const COMPLETE_AFTER_SECONDS: &str = "sandbox.kubectl-maintain.io/complete-after-seconds";

/// The sandbox's settings: a scenario's `Sandbox` document, or `Options::config`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxConfig {
    /// `major.minor` served at /version; its minor picks the kubectl the
    /// dispatcher on our machines runs.
    pub kube_version: String,
    /// How many changes of each resource a watch can resume from before it
    /// gets 410 Expired.
    pub watch_history: usize,
    /// Seconds a new pod takes to become Ready, unless its annotation or its
    /// readiness probe says otherwise.
    pub ready_seconds: f64,
    /// Seconds a deleted pod's containers take to exit once told to, unless
    /// its annotation or its preStop hook says otherwise; never more than
    /// its grace period. Unset: the whole grace period.
    pub shutdown_seconds: Option<f64>,
    /// Errors, latency and watch cuts injected into the requests a drain makes.
    pub faults: Faults,
    /// Requests refused with 403, as RBAC would.
    pub deny: Vec<Deny>,
    /// When set, the only requests allowed, as a Role bound to the caller
    /// would allow them: everything else is refused with 403 (discovery and
    /// `/version` stay open, as `system:discovery` keeps them).
    pub role: Option<Vec<Rule>>,
    /// The bearer token of the sandbox's own user, the one its kubeconfig
    /// carries. Unset: a random one, minted at each start. Any other token
    /// that is not a ServiceAccount's is refused 401; a request without one
    /// is `system:anonymous`, which RBAC allows only the health and
    /// version endpoints.
    pub owner_token: Option<String>,
    /// The path it is served under, as Rancher's proxy serves a
    /// downstream cluster's API at `/k8s/clusters/ID`: every request's path
    /// must begin with it (404 otherwise, as the proxy answers one that
    /// does not), and is served without it; `url()` and the kubeconfig
    /// carry it. Unset: the root, as kube-apiserver serves.
    pub path_prefix: Option<String>,
    /// A TLS front door that verifies client certificates in the
    /// handshake, as an mTLS load balancer or proxy before the API server
    /// does: one the CA did not sign, or not valid now, ends the handshake
    /// with its alert (kubectl: `remote error: tls: expired certificate`).
    /// Unset: kube-apiserver's own serving, which takes any certificate in
    /// the handshake and refuses the request (401).
    pub verify_client_certificates_in_handshake: bool,
    /// A cluster-autoscaler scaling the nodes down
    /// (controllers/cluster_autoscaler.rs). Unset: none.
    pub cluster_autoscaler: Option<ClusterAutoscaler>,
    /// kube-controller-manager's `--node-monitor-grace-period` in seconds:
    /// how long a node's kubelet may be silent before its Ready condition
    /// goes Unknown. Unset: the served version's default (40 s, 50 s since
    /// 1.32).
    pub node_monitor_grace_period_seconds: Option<f64>,
    /// kube-controller-manager's `--feature-gates` where they differ from
    /// the API server's: `{EvictionRequestAPI: false}` serves the
    /// EvictionRequest API (1.37) with no controller acting on it.
    pub controller_manager_gates: std::collections::BTreeMap<String, bool>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            kube_version: "1.33".into(),
            watch_history: 100_000,
            ready_seconds: 1.0,
            shutdown_seconds: None,
            faults: Faults::default(),
            deny: Vec::new(),
            role: None,
            owner_token: None,
            node_monitor_grace_period_seconds: None,
            path_prefix: None,
            verify_client_certificates_in_handshake: false,
            cluster_autoscaler: None,
            controller_manager_gates: std::collections::BTreeMap::new(),
        }
    }
}

/// cluster-autoscaler's scale-down settings, its flags' defaults unless set.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterAutoscaler {
    /// `--scan-interval`: how often it looks at the nodes.
    pub scan_interval_seconds: f64,
    /// `--scale-down-unneeded-time`: how long a Ready node stays unneeded
    /// before it is deleted.
    pub scale_down_unneeded_seconds: f64,
    /// `--scale-down-unready-time`: the same for a node that is not Ready.
    pub scale_down_unready_seconds: f64,
}

impl ClusterAutoscaler {
    /// `--scan-interval` as a wait (at least 10 ms).
    pub(crate) fn scan_interval(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.scan_interval_seconds.max(0.01))
    }
}

impl Default for ClusterAutoscaler {
    fn default() -> Self {
        ClusterAutoscaler {
            scan_interval_seconds: 10.0,
            scale_down_unneeded_seconds: 600.0,
            scale_down_unready_seconds: 1200.0,
        }
    }
}

/// Faults the API server injects: errors, delays, refusals.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Faults {
    /// Share (0..1) of resource requests answered 500 InternalError.
    pub error500: f64,
    /// Share answered 503 with `Retry-After: 1`.
    pub error503: f64,
    /// Share answered 429 TooManyRequests (API priority and fairness, not a PDB).
    pub throttle429: f64,
    /// Added latency before every resource request is answered.
    pub latency_ms: u64,
    /// Watch streams are closed after this many events (0: never).
    pub watch_cut_after: u64,
    /// Seed of the fault dice, so a failing run can be repeated.
    pub seed: u64,
    /// Only requests of these `VERB RESOURCE` pairs get the faults above
    /// (`create pods/eviction`, `list nodes`); every request when empty.
    pub only: Vec<String>,
    /// At most this many faults are injected, counted from the time the
    /// faults were set (0: no limit), for a fault that must happen once.
    pub times: u64,
}

impl Faults {
    pub(crate) fn any(&self) -> bool {
        self.error500 > 0.0 || self.error503 > 0.0 || self.throttle429 > 0.0 || self.latency_ms > 0
    }

    /// Do the faults apply to a request of this verb on this resource?
    pub(crate) fn applies_to(&self, verb: &str, resource: &str) -> bool {
        self.only.is_empty()
            || self
                .only
                .iter()
                .any(|o| o.split_once(' ') == Some((verb, resource)))
    }
}

/// A refusal, as RBAC would give it: one verb on one resource.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Deny {
    /// get, list, watch, create, update, patch, delete, deletecollection.
    pub verb: String,
    /// A plural with an optional subresource: `nodes`, `pods/eviction`.
    pub resource: String,
    /// Only in this namespace; every namespace when empty.
    #[serde(default)]
    pub namespace: String,
}

/// One rule of a Role: these verbs on these resources (`*` for any).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    /// RBAC verbs: `get`, `list`, `watch`, `create`, `patch`, `delete`...
    pub verbs: Vec<String>,
    /// Plurals with an optional subresource: `nodes`, `pods/eviction`.
    pub resources: Vec<String>,
}

impl Rule {
    /// A rule allowing these verbs on these resources.
    pub fn new(verbs: &[&str], resources: &[&str]) -> Self {
        let own = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect();
        Rule {
            verbs: own(verbs),
            resources: own(resources),
        }
    }

    pub(crate) fn allows(&self, verb: &str, resource: &str) -> bool {
        let has = |list: &[String], x: &str| list.iter().any(|v| v == "*" || v == x);
        has(&self.verbs, verb) && has(&self.resources, resource)
    }
}

impl SandboxConfig {
    /// Whether kube-controller-manager runs with this feature gate on (the
    /// sandbox turns every gate of the version served on, unless
    /// `controllerManagerGates` says otherwise).
    pub fn controller_gate(&self, gate: &str) -> bool {
        self.controller_manager_gates
            .get(gate)
            .copied()
            .unwrap_or(true)
    }

    /// The minor served, as a number (33 when unreadable).
    pub fn minor_number(&self) -> u32 {
        self.minor().parse().unwrap_or(33)
    }

    /// The minor version served (`33` of `1.33`).
    pub fn minor(&self) -> &str {
        self.kube_version.split('.').nth(1).unwrap_or("33")
    }

    /// How long a silent kubelet's node stays Ready (`--node-monitor-grace-period`).
    pub fn node_monitor_grace_period(&self) -> std::time::Duration {
        let default = if self.minor().parse().unwrap_or(33) >= 32 {
            50.0
        } else {
            40.0
        };
        let secs = self
            .node_monitor_grace_period_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(default);
        std::time::Duration::from_secs_f64(secs)
    }
}
