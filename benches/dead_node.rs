//! A node whose kubelet died: how long until its StatefulSet pod, with a
//! ReadWriteOnce volume, is Ready on another node, for each way of draining
//! it. Every variant runs on a fresh copy of one small cluster (n1 runs
//! StatefulSet `db`, one pod with a CSI volume, and two pods of Deployment
//! `web`; n2 is free), served by the sandbox on a simulated clock (a paused
//! tokio runtime, as `plan --simulate` uses) with the controllers' default
//! timings: the node lifecycle controller's 50 s grace (1.33), the pod
//! garbage collector's 20 s period, the attach/detach controller's 6-minute
//! force detach. n1's kubelet stops, the node goes Unknown, then:
//!
//! - the real `kubectl drain` (1.33) runs as a process; while it runs the
//!   simulated clock moves with the wall clock (a blocking task keeps the
//!   paused clock from jumping; it is advanced by the time that passed);
//! - `kubectl maintain drain` runs in this process, on the simulated clock;
//!   for the hard path the proof of power-off is the cloud's
//!   `node.kubernetes.io/shutdown` taint.
//!
//! After the drain, the clock runs on until db-0 is Ready on n2, or 15
//! minutes. Times are simulated, measured from the drain's start.
//!
//!   cargo bench --bench dead_node

use std::path::Path;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube_sandbox::{Sandbox, SandboxConfig, scenario};
use serde_json::json;
use tokio::time::Instant;

/// How long the clock runs on after the drain.
const HORIZON: Duration = Duration::from_secs(15 * 60);

const CLUSTER: &str = r"
apiVersion: v1
kind: Namespace
metadata: {name: apps}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {topology.kubernetes.io/zone: a}}
spec: {unschedulable: true}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: disk.csi.example
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: apps}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: db}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: zonal
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 10Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: web}]}
";

struct Variant {
    name: &'static str,
    /// The real kubectl's arguments, or ours.
    kubectl: bool,
    args: &'static [&'static str],
}

const FLAGS: &[&str] = &["--ignore-daemonsets", "--delete-emptydir-data", "--force"];

const VARIANTS: &[Variant] = &[
    Variant {
        name: "kubectl drain --timeout=1m",
        kubectl: true,
        args: &["--timeout=1m"],
    },
    Variant {
        name: "kubectl drain --grace-period=0 --timeout=1m",
        kubectl: true,
        args: &["--grace-period=0", "--timeout=1m"],
    },
    Variant {
        name: "kubectl maintain drain (soft path)",
        kubectl: false,
        args: &["--timeout=1m"],
    },
    Variant {
        name: "kubectl maintain drain --node-shut-down (hard path)",
        kubectl: false,
        args: &["--timeout=1m", "--node-shut-down"],
    },
];

struct Figures {
    drain: Duration,
    exit: i32,
    db_ready: Option<Duration>,
    web_ready: Option<Duration>,
}

fn main() {
    let kubectl = kubectl_1_33();
    println!(
        "| drain | drain ends (exit) | web's 2 pods Ready on n2 | db-0 (RWO volume) Ready on n2 |"
    );
    println!("|---|---|---|---|");
    for v in VARIANTS {
        let f = run(v, &kubectl);
        let at = |d: Option<Duration>| {
            d.map_or_else(
                || format!("not within {} min", HORIZON.as_secs() / 60),
                |d| match d.as_secs() {
                    0 => "under 1 s".to_string(),
                    _ => format!("{} s", secs(d)),
                },
            )
        };
        println!(
            "| {} | {} s ({}) | {} | {} |",
            v.name,
            secs(f.drain),
            f.exit,
            at(f.web_ready),
            at(f.db_ready)
        );
    }
}

fn secs(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64())
}

#[path = "../tests/support/kubectl.rs"]
mod kubectl;

/// kubectl 1.33, found as `.ci/run` finds it (beside `kubectl` too).
fn kubectl_1_33() -> std::path::PathBuf {
    kubectl::find_kubectl(33).unwrap_or_else(|e| {
        eprintln!("dead_node: {e}");
        std::process::exit(1)
    })
}

/// One variant on a fresh copy, on a simulated clock of its own.
fn run(v: &Variant, kubectl: &Path) -> Figures {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    rt.block_on(async {
        kube_sandbox::follow_tokio_clock();
        let objects = scenario::parse(Path::new("dead-node.yaml"), CLUSTER)
            .expect("the scenario")
            .objects;
        let config = SandboxConfig {
            kube_version: "1.33".into(),
            ..SandboxConfig::default()
        };
        let sandbox = Sandbox::start(
            objects,
            kube_sandbox::Options {
                config,
                ..kube_sandbox::Options::default()
            },
        )
        .await
        .expect("sandbox");
        let kubeconfig =
            std::env::temp_dir().join(format!("dead-node-bench-{}.kubeconfig", std::process::id()));
        sandbox.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        let client = client(&sandbox).await;
        until(&client, "db-0 and web on n1", |pods| {
            pods.iter().filter(|p| on(p, "n1") && ready(p)).count() == 3
        })
        .await;
        uncordon(&client, "n2").await;
        sandbox.set_kubelet("n1", false);
        let nodes: Api<Node> = Api::all(client.clone());
        let deadline = Instant::now() + Duration::from_secs(300);
        while nodes
            .get("n1")
            .await
            .ok()
            .and_then(|n| {
                n.status?
                    .conditions?
                    .into_iter()
                    .find(|c| c.type_ == "Ready")
            })
            .is_none_or(|c| c.status != "Unknown")
        {
            assert!(Instant::now() < deadline, "n1 never went Unknown");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }

        if v.args.contains(&"--node-shut-down") {
            // The proof: the cloud's node controller found the instance
            // shut down (a --fence-command would be a process, and the
            // paused clock would run on while it ran).
            shut_down(&client, "n1").await;
        }
        let start = Instant::now();
        let started = kube_conventions::time::now();
        let exit = Box::pin(drain(v, kubectl, &kubeconfig)).await;
        let drain = start.elapsed();
        let mut db_ready = None;
        let mut web_ready = None;
        let end = start + drain + HORIZON;
        let pods: Api<Pod> = Api::namespaced(client.clone(), "apps");
        // From the drain's start to the last of them becoming Ready (its
        // condition's time, on the simulated clock).
        let ready_after = |list: &[Pod], prefix: &str, count: usize| {
            let times: Vec<_> = list
                .iter()
                .filter(|p| {
                    p.metadata
                        .name
                        .as_deref()
                        .unwrap_or_default()
                        .starts_with(prefix)
                        && on(p, "n2")
                })
                .filter_map(ready_since)
                .collect();
            (times.len() == count).then(|| {
                let last = times.into_iter().max().unwrap_or(started);
                Duration::from_secs(u64::try_from((last - started).get_seconds()).unwrap_or(0))
            })
        };
        while Instant::now() < end && (db_ready.is_none() || web_ready.is_none()) {
            let list = pods.list(&ListParams::default()).await.expect("pods").items;
            db_ready = db_ready.or_else(|| ready_after(&list, "db-", 1));
            web_ready = web_ready.or_else(|| ready_after(&list, "web-", 2));
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        sandbox.stop();
        let _ = std::fs::remove_file(&kubeconfig);
        Figures {
            drain,
            exit,
            db_ready,
            web_ready,
        }
    })
}

/// The drain of n1; its exit code.
async fn drain(v: &Variant, kubectl: &Path, kubeconfig: &Path) -> i32 {
    let mut args: Vec<String> = ["drain", "n1"].map(str::to_string).to_vec();
    args.extend(FLAGS.iter().chain(v.args).map(|s| (*s).to_string()));
    args.push(format!("--kubeconfig={}", kubeconfig.display()));
    if v.kubectl {
        let kubectl = kubectl.to_path_buf();
        let mut running = tokio::task::spawn_blocking(move || {
            let out = std::process::Command::new(kubectl)
                .args(&args)
                .output()
                .expect("kubectl");
            out.status.code().unwrap_or(-1)
        });
        // While it runs the paused clock does not move by itself (a
        // blocking task holds it); it is moved on with the wall clock, so
        // that the controllers work while kubectl does.
        let mut last = std::time::Instant::now();
        loop {
            let tick =
                tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(20)));
            tokio::select! {
                code = &mut running => {
                    tokio::time::advance(last.elapsed()).await;
                    return code.expect("kubectl");
                }
                _ = tick => {
                    let now = std::time::Instant::now();
                    tokio::time::advance(now - last).await;
                    last = now;
                }
            }
        }
    } else {
        args.extend(["--yes".into(), "--lines=kubectl".into()]);
        let cli = kubectl_maintain::cli::Cli::parse_from(
            std::iter::once("kubectl-maintain".to_string()).chain(args),
        );
        match Box::pin(kubectl_maintain::run(cli)).await {
            Ok(code) => i32::from(code),
            Err(e) => {
                eprintln!("{e:#}");
                1
            }
        }
    }
}

async fn client(sandbox: &Sandbox) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::from_yaml(&sandbox.kubeconfig()).expect("kubeconfig"),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("config");
    kube::Client::try_from(config).expect("client")
}

async fn uncordon(client: &kube::Client, node: &str) {
    let nodes: Api<Node> = Api::all(client.clone());
    nodes
        .patch(
            node,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"unschedulable": false}})),
        )
        .await
        .expect("uncordon");
}

/// The taint the cloud provider's node controller puts on a node whose
/// instance is shut down.
async fn shut_down(client: &kube::Client, node: &str) {
    let nodes: Api<Node> = Api::all(client.clone());
    let mut n = nodes.get(node).await.expect("node");
    let spec = n.spec.get_or_insert_with(Default::default);
    spec.taints
        .get_or_insert_with(Vec::new)
        .push(k8s_openapi::api::core::v1::Taint {
            key: "node.kubernetes.io/shutdown".into(),
            effect: "NoSchedule".into(),
            value: None,
            time_added: None,
        });
    nodes
        .replace(node, &kube::api::PostParams::default(), &n)
        .await
        .expect("taint");
}

async fn until(client: &kube::Client, what: &str, done: impl Fn(&[Pod]) -> bool) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "apps");
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let list = pods.list(&ListParams::default()).await.expect("pods").items;
        if done(&list) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: not within 5 minutes");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

fn on(p: &Pod, node: &str) -> bool {
    p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node)
        && p.metadata.deletion_timestamp.is_none()
}

/// When its Ready condition turned True.
fn ready_since(p: &Pod) -> Option<k8s_openapi::jiff::Timestamp> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")?
        .last_transition_time
        .as_ref()
        .map(|t| t.0)
}

fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}
