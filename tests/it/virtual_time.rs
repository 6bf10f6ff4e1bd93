//! The sandbox and the drain in one process on a paused tokio clock, where
//! time jumps to the next timer whenever nothing is ready: the simulated
//! shutdowns, readiness and the drain's waits pass in virtual time, and the
//! objects' timestamps follow it. The ground a predicted drain (#14) stands on.

use std::time::Duration;

use clap::Parser;
use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use kube_sandbox::{Options, Sandbox, scenario};

use crate::scenario::{Scenario, shutdown, template};

#[test]
fn a_drain_of_slow_pods_passes_in_virtual_time() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    let yaml = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment_with("slow", 2, |d| {
            // Ready 20 s after it starts, 60 s to stop (of its 120 s grace).
            template(d)["metadata"]["annotations"]["sandbox.kubectl-maintain.io/ready-seconds"] =
                serde_json::json!("20");
            template(d)["spec"]["terminationGracePeriodSeconds"] = serde_json::json!(120);
            shutdown(template(d), 60.0);
        })
        .pdb("slow", "maxUnavailable: 1")
        .yaml();
    let dir = crate::harness::TempDir::new("virtual");
    let kubeconfig = dir.path().join("kubeconfig");
    rt.block_on(async {
        kube_sandbox::follow_tokio_clock();
        let parsed = scenario::parse(std::path::Path::new("s.yaml"), &yaml).unwrap();
        let sandbox = Sandbox::start(parsed.objects, Options::default())
            .await
            .unwrap();
        sandbox.write_kubeconfig(&kubeconfig).unwrap();
        // Both replicas Ready: 20 virtual seconds.
        while sandbox
            .view()
            .list(Resource::Pods)
            .iter()
            .filter(|p| pods::is_ready(p))
            .count()
            < 2
        {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let on_n1 = |s: &Sandbox| {
            s.view()
                .list(Resource::Pods)
                .iter()
                .filter(|p| pods::node_name(p) == Some("n1"))
                .count()
        };
        assert!(on_n1(&sandbox) > 0, "the scheduler spreads the replicas");

        let (wall, virtual_start) = (std::time::Instant::now(), tokio::time::Instant::now());
        let cli = kubectl_maintain::cli::Cli::parse_from([
            "kubectl-maintain",
            "drain",
            "n1",
            "--yes",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ]);
        let code = Box::pin(kubectl_maintain::run(cli))
            .await
            .expect("the drain runs");
        let (wall, simulated) = (wall.elapsed(), virtual_start.elapsed());
        assert_eq!(code, 0);
        assert_eq!(on_n1(&sandbox), 0, "n1 is empty");
        // The drain waited at least for one pod's 60 s shutdown.
        assert!(
            simulated >= Duration::from_secs(60),
            "{simulated:?} simulated"
        );
        assert!(
            wall < Duration::from_secs(20),
            "{wall:?} on the wall for {simulated:?}"
        );
        // Timestamps follow the simulated clock: the evicted pods' deletions
        // are stamped within the simulated span, not the wall one.
        let node = sandbox.view().get(Resource::Nodes, "", "n1").unwrap();
        assert_eq!(node["spec"]["unschedulable"], true);
        sandbox.stop();
    });
}
