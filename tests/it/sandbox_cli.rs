//! `kubectl maintain sandbox` as a command, fault injection and refused
//! permissions as clients see them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::harness::{Cluster, TempDir, kubectl_path};

const ONE_NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";

/// A served sandbox, killed if the test fails before it ends it.
struct Served(Option<std::process::Child>);

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts `kubectl maintain sandbox` with `args`; its first line.
fn serve(scenario: &std::path::Path, args: &[&str]) -> (Served, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
        .args(["sandbox", "--scenario", scenario.to_str().unwrap()])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("sandbox starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Served(Some(child)), line)
}

fn terminate(mut served: Served) {
    let mut child = served.0.take().expect("running");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(status.success(), "exits 0 on SIGTERM: {status:?}");
}

fn kubectl_with(
    dir: &std::path::Path,
    kubeconfig: &std::path::Path,
    args: &[&str],
) -> (i32, String, String) {
    let out = Command::new(kubectl_path())
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", dir.join("home"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn serves_https_to_its_kubeconfigs_token_alone() {
    let dir = TempDir::new("cli");
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, ONE_NODE).unwrap();
    let kubeconfig = dir.path().join("kc");
    let (child, line) = serve(
        &scenario,
        &[
            "--kubeconfig-out",
            kubeconfig.to_str().unwrap(),
            "--kube-version",
            "1.27",
        ],
    );
    assert!(
        line.starts_with("sandbox listening on https://127.0.0.1:"),
        "{line}"
    );
    let (code, out, err) = kubectl_with(dir.path(), &kubeconfig, &["version", "-o", "json"]);
    let version: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {code} {out} {err}"));
    assert_eq!(version["serverVersion"]["minor"], "27");
    assert_eq!(
        kubectl_with(dir.path(), &kubeconfig, &["get", "nodes"]).0,
        0
    );
    // Its credential is its owner's alone.
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&kubeconfig).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    // Without its token: anonymous, refused as kube-apiserver refuses it;
    // with another token: unauthorized.
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    let token = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .expect("a token")
        .to_string();
    assert!(token.len() > 40, "{token}");
    // (kubectl itself asks for a password when a user has no credential.)
    let server = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .expect("a server");
    let anonymous = Command::new("curl")
        .args(["-sk", &format!("{server}/api/v1/nodes")])
        .output()
        .expect("curl");
    let body = String::from_utf8_lossy(&anonymous.stdout);
    assert!(
        body.contains(r#"User \"system:anonymous\" cannot list resource \"nodes\""#),
        "{body}"
    );
    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, text.replace(&token, "sandbox-owner.guess")).unwrap();
    let (code, _, err) = kubectl_with(dir.path(), &wrong, &["get", "nodes"]);
    assert_ne!(code, 0);
    assert!(err.contains("Unauthorized"), "{err}");
    terminate(child);
    // The next start mints another token.
    let (child, _) = serve(
        &scenario,
        &["--kubeconfig-out", kubeconfig.to_str().unwrap()],
    );
    let again = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(!again.contains(&token), "a new token at each start");
    terminate(child);
}

/// A caller that stops the sandbox the moment it says it listens (a
/// script's `kill` after reading the line) sees a clean exit every time,
/// not the signal's default action: the handlers are in before the line.
#[test]
fn a_sigterm_the_moment_it_says_listening_ends_it_cleanly() {
    let dir = TempDir::new("cli");
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, ONE_NODE).unwrap();
    for _ in 0..40 {
        let (child, line) = serve(&scenario, &[]);
        assert!(line.starts_with("sandbox listening on "), "{line}");
        terminate(child);
    }
}

#[test]
fn without_kubeconfig_out_its_kubeconfig_is_private_and_removed_at_exit() {
    let dir = TempDir::new("cli");
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, ONE_NODE).unwrap();
    let (child, line) = serve(&scenario, &[]);
    let path = line
        .trim_end()
        .rsplit_once("(kubeconfig: ")
        .and_then(|(_, p)| p.strip_suffix(')'))
        .map_or_else(|| panic!("{line}"), std::path::PathBuf::from);
    let folder = path.parent().unwrap().to_path_buf();
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&folder).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    assert_eq!(kubectl_with(dir.path(), &path, &["get", "nodes"]).0, 0);
    terminate(child);
    assert!(!folder.exists(), "{} removed", folder.display());
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
        out.stderr.contains(r#"nodes "n1" is forbidden: User "kubernetes-admin" cannot patch resource "nodes" in API group "" at the cluster scope"#),
        "{out:?}"
    );
    assert_eq!(
        c.kubectl(&["get", "nodes"]).code,
        0,
        "other verbs still work"
    );
}

/// Stopping ends every task of the sandbox, a watch a client still reads
/// included, before its runtime does (a task left running panics at its
/// next timer while the runtime shuts down).
#[test]
fn shutting_down_ends_every_watch_still_read() {
    let c = Cluster::start(ONE_NODE, 33);
    let before = c.sandbox.live_tasks();
    let watch = c.kubectl_spawn(&["get", "nodes", "--watch"]);
    c.wait_for("the watch open", std::time::Duration::from_secs(10), |c| {
        c.sandbox.live_tasks() > before
    });
    assert!(c.rt.block_on(c.sandbox.shutdown()), "every task ended");
    assert_eq!(c.sandbox.live_tasks(), 0);
    let mut watch = watch;
    let _ = watch.kill();
    let _ = watch.wait();
}

/// A local image is the host's program, with no image to name its user: it
/// runs as nobody unless the pod names a user, root included.
#[test]
fn a_local_program_runs_as_nobody_unless_the_pod_names_a_user() {
    let pod = |name: &str, user: Option<i64>| {
        let mut p = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "n1", "restartPolicy": "Never", "automountServiceAccountToken": false,
                     "containers": [{"name": "c", "image": "example.com/id:1"}]},
        });
        if let Some(u) = user {
            p["spec"]["securityContext"] = serde_json::json!({"runAsUser": u});
        }
        p.to_string()
    };
    let scenario = format!(
        "{ONE_NODE}---\n{}\n---\n{}\n",
        pod("anyone", None),
        pod("root", Some(0))
    );
    let c = Cluster::start_with_local_images(
        &scenario,
        33,
        vec![("example.com/id".into(), "/usr/bin/id".into())],
    );
    for (pod, uid) in [("anyone", "uid=65534"), ("root", "uid=0(")] {
        c.wait_for("the program ran", std::time::Duration::from_secs(20), |c| {
            c.get(kube_sandbox::resources::Resource::Pods, "default", pod)
                .is_some_and(|p| p["status"]["phase"] == "Succeeded")
        });
        let log = c.kubectl(&["logs", pod]);
        log.success();
        assert!(log.stdout.starts_with(uid), "{pod}: {log:?}");
    }
}
