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
