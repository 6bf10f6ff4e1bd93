//! The container image (Containerfile), built here with Debian's podman,
//! offline (`FROM scratch` needs no registry), into a storage of its own
//! that goes with the test. The binary is taken back out of the image and
//! run, since running containers may not work on these machines.

use std::path::Path;
use std::process::Command;

use crate::harness::TempDir;

const TAG: &str = "localhost/kubectl-maintain:test";

fn podman(store: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new("podman")
        .arg("--root")
        .arg(store.join("root"))
        .arg("--runroot")
        .arg(store.join("run"))
        .args(["--storage-driver", "vfs"])
        .args(args)
        .output()
        .expect("podman is needed (Debian: podman; .ci/run installs it)");
    assert!(
        out.status.success(),
        "podman {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn the_image_builds_offline_and_its_binary_runs() {
    let dir = TempDir::new("image");
    let ctx = dir.path().join("ctx");
    std::fs::create_dir_all(&ctx).expect("context");
    std::fs::copy(
        env!("CARGO_BIN_EXE_kubectl-maintain"),
        ctx.join("kubectl-maintain"),
    )
    .expect("the binary");
    let containerfile = Path::new(env!("CARGO_MANIFEST_DIR")).join("Containerfile");
    let store = dir.path();
    podman(
        store,
        &[
            "build",
            "-q",
            "-t",
            TAG,
            "-f",
            containerfile.to_str().expect("utf-8"),
            ctx.to_str().expect("utf-8"),
        ],
    );
    let config = podman(
        store,
        &[
            "image",
            "inspect",
            TAG,
            "--format",
            "{{.Config.User}} {{json .Config.Entrypoint}} {{len .RootFS.Layers}}",
        ],
    );
    // Non-root, the binary as entrypoint, one layer: nothing but it.
    assert_eq!(
        String::from_utf8_lossy(&config.stdout).trim(),
        r#"65532:65532 ["/kubectl-maintain"] 1"#
    );
    podman(store, &["create", "--name", "extract", TAG]);
    let out = dir.path().join("kubectl-maintain");
    podman(
        store,
        &[
            "cp",
            "extract:/kubectl-maintain",
            out.to_str().expect("utf-8"),
        ],
    );
    let version = Command::new(&out).arg("--version").output().expect("runs");
    assert!(version.status.success(), "{version:?}");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("kubectl maintain {}", env!("CARGO_PKG_VERSION"))
    );
}
