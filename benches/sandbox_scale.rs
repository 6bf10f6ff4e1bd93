//! How the sandbox copes with a large cluster: load time, memory, and how
//! fast the field-selected pod list a drain makes is answered. Figures go
//! to docs/sandbox.md. Run: cargo bench --bench sandbox_scale -- [NODES] [PODS_PER_NODE]

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube_sandbox::generate::{self, ClusterSpec};
use kube_sandbox::resources::Resource;
use kube_sandbox::{Options, Sandbox};

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let nodes = args.first().copied().unwrap_or(5000);
    let pods_per_node = args.get(1).copied().unwrap_or(30);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let before = rss_kib("VmRSS:");
        let t = Instant::now();
        let spec = ClusterSpec {
            nodes,
            pods_per_node,
            replicas_per_deployment: 10,
            namespaces: (nodes / 10).max(1),
            ..ClusterSpec::default()
        };
        // Generation alone, each object dropped as made, to tell it apart
        // from loading: the sandbox loads the objects as they are made.
        let made = generate::stream(&spec).count();
        let generated = t.elapsed();
        let t = Instant::now();
        let sandbox = Sandbox::start(generate::stream(&spec), Options::default())
            .await
            .expect("sandbox");
        let loaded = t.elapsed();
        let (pods, pdbs) = {
            let view = sandbox.view();
            (
                view.count(Resource::Pods),
                view.count(Resource::PodDisruptionBudgets),
            )
        };
        // The controllers' first pass writes statuses; let it settle.
        let t = Instant::now();
        tokio::time::sleep(Duration::from_millis(100)).await;
        sandbox.wait_idle().await;
        let settled = t.elapsed();
        let rss = rss_kib("VmRSS:");

        let kubeconfig =
            kube::config::Kubeconfig::from_yaml(&sandbox.kubeconfig()).expect("kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(
            kubeconfig,
            &kube::config::KubeConfigOptions::default(),
        )
        .await
        .expect("config");
        let client = kube::Client::try_from(config).expect("client");
        let api: Api<Pod> = Api::all(client);
        let mut by_node = Vec::new();
        for i in 0..50 {
            let node = generate::node_name((i * 97) % nodes);
            let t = Instant::now();
            let list = api
                .list(
                    &ListParams::default()
                        .fields(&format!("spec.nodeName={node}"))
                        .limit(500),
                )
                .await
                .expect("list");
            by_node.push(t.elapsed());
            assert_eq!(list.items.len(), pods_per_node, "pods on {node}");
        }
        let t = Instant::now();
        let all = api
            .list(&ListParams::default().limit(500))
            .await
            .expect("list page");
        let first_page = t.elapsed();
        assert_eq!(all.items.len(), 500);

        println!("nodes                         {nodes}");
        println!("pods                          {pods}");
        println!("pdbs                          {pdbs}");
        println!("generate objects (alone)      {generated:.2?} ({made} objects)");
        println!("generate, load, 1st reconcile {loaded:.2?}");
        println!("controllers settle            {settled:.2?}");
        println!(
            "resident memory after load    {} MiB (process grew by {} MiB)",
            rss / 1024,
            (rss - before) / 1024
        );
        println!(
            "pods of one node (field sel.) median {:.2?}, max {:.2?} over 50 lists",
            median(by_node.clone()),
            by_node.iter().max().expect("some")
        );
        println!("first page of all pods (500)  {first_page:.2?}");
    });
}
