//! The README's first command.

use std::process::Command;

#[test]
fn demo_drains_and_explains_what_blocks() {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
        .args(["demo", "--timeout", "4s"])
        .env_remove("KUBECONFIG")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("demo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Its end ends every task of the sandbox first: none panics.
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stdout.contains("worker-1   timed out"), "{stdout}");
    assert!(
        stdout.contains("blocked by PodDisruptionBudget shop/db (1 pod): shop/db-0 on worker-1"),
        "{stdout}"
    );
    assert!(stderr.contains("node/worker-1 cordoned"), "{stderr}");
    assert!(
        stderr.contains("pod/default/debug-shell evicted"),
        "{stderr}"
    );
}

/// `--keep-running` serves its sandbox to the real kubectl through a
/// kubeconfig only its owner can read, and a SIGTERM the moment it says so
/// ends it cleanly: exit 0, the kubeconfig (the sandbox's token) gone, and
/// no "stopping new evictions" from a drain long over.
#[test]
fn keep_running_serves_kubectl_and_ends_clean_on_sigterm() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-maintain"))
        .args(["demo", "--timeout", "2s", "--keep-running"])
        .env_remove("KUBECONFIG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("demo runs");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let mut said = String::new();
    let kubeconfig = loop {
        let mut line = String::new();
        let read = stderr.read_line(&mut line).expect("reads");
        assert_ne!(read, 0, "ended before serving: {said}");
        said.push_str(&line);
        if let Some(rest) = line.split("KUBECONFIG=").nth(1) {
            break std::path::PathBuf::from(rest.split_whitespace().next().expect("a path"));
        }
    };
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&kubeconfig)
            .expect("written")
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let nodes = Command::new(crate::harness::kubectl_path())
        .args(["get", "nodes", "-o", "name"])
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .expect("kubectl runs");
    assert!(
        String::from_utf8_lossy(&nodes.stdout).contains("node/worker-1"),
        "{nodes:?}"
    );
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    let status = child.wait().expect("waits");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).expect("reads");
    assert!(status.success(), "{status:?}: {said}{rest}");
    assert!(!kubeconfig.exists(), "its kubeconfig goes with it");
    assert!(!rest.contains("stopping new evictions"), "{rest}");
}
