//! `kubectl maintain sandbox` as a command, fault injection and refused
//! permissions as clients see them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::harness::{Cluster, TempDir, kubectl_path};

const ONE_NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";

#[test]
fn serves_until_terminated_and_writes_a_kubeconfig() {
    let dir = TempDir::new("cli");
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, ONE_NODE).unwrap();
    let kubeconfig = dir.path().join("kc");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
        .args([
            "sandbox",
            "--scenario",
            scenario.to_str().unwrap(),
            "--kubeconfig-out",
            kubeconfig.to_str().unwrap(),
            "--kube-version",
            "1.27",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("sandbox starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("sandbox listening on http://127.0.0.1:"),
        "{line}"
    );
    let home = dir.path().join("home");
    let out = Command::new(kubectl_path())
        .args([
            "--cache-dir",
            dir.path().join("cache").to_str().unwrap(),
            "version",
            "-o",
            "json",
        ])
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", &home)
        .output()
        .unwrap();
    let version: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("kubectl version json");
    assert_eq!(version["serverVersion"]["minor"], "27");
    // Its credential is its owner's alone.
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&kubeconfig).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(status.success(), "exits 0 on SIGTERM: {status:?}");
}

#[test]
fn an_address_beyond_loopback_is_refused_unless_exposed() {
    let dir = TempDir::new("cli");
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, ONE_NODE).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
        .args(["sandbox", "--scenario", scenario.to_str().unwrap()])
        .args(["--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--listen 0.0.0.0:0: not a loopback address")
            && stderr.contains("--expose"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing served");
}

#[test]
fn a_bad_scenario_names_file_line_and_column_and_serves_nothing() {
    let dir = TempDir::new("cli");
    let scenario = dir.path().join("bad.yaml");
    std::fs::write(&scenario, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Gadget\nmetadata: {name: g}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
        .args(["sandbox", "--scenario", scenario.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:5:1", scenario.display()))
            || stderr.contains(&format!("{}:6:1", scenario.display())),
        "{stderr}"
    );
    assert!(stderr.contains("v1/Gadget is not served"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing served");
}

#[test]
fn injected_faults_reach_clients() {
    let c = Cluster::start_with(ONE_NODE, 33, |cfg| cfg.faults.error500 = 1.0);
    let out = c.kubectl(&["get", "nodes"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("injected by the sandbox"), "{out:?}");
    // Discovery and /version are never faulted.
    assert!(
        c.requests()
            .iter()
            .any(|r| r.path == "/version" && r.status == 200)
    );

    let c = Cluster::start_with(ONE_NODE, 33, |cfg| {
        cfg.faults.error503 = 0.5;
        cfg.faults.seed = 7;
    });
    // client-go retries 503 with Retry-After; with half of them failing it gets through.
    let out = c.kubectl(&["get", "nodes", "-o", "name"]);
    out.success();
    let statuses: Vec<u16> = c
        .requests()
        .iter()
        .filter(|r| r.path == "/api/v1/nodes")
        .map(|r| r.status)
        .collect();
    assert!(
        statuses.contains(&503) && statuses.contains(&200),
        "{statuses:?}"
    );
}

#[test]
fn refused_verbs_are_403_naming_verb_and_resource() {
    let c = Cluster::start_with(ONE_NODE, 33, |cfg| {
        cfg.deny.push(kube_sandbox::config::Deny {
            verb: "patch".into(),
            resource: "nodes".into(),
            namespace: String::new(),
        });
    });
    // kubectl cordon prints the error but exits 0; the node is what counts.
    let out = c.kubectl(&["cordon", "n1"]);
    let node = c
        .get(kube_sandbox::resources::Resource::Nodes, "", "n1")
        .unwrap();
    assert!(node["spec"].get("unschedulable").is_none(), "not cordoned");
    assert!(
        out.stderr.contains(r#"nodes "n1" is forbidden: User "system:anonymous" cannot patch resource "nodes" in API group "" at the cluster scope"#),
        "{out:?}"
    );
    assert_eq!(
        c.kubectl(&["get", "nodes"]).code,
        0,
        "other verbs still work"
    );
}
