//! Where the real kubectl of a minor version is, found as `.ci/run` finds
//! it; shared by the integration tests and the benchmarks.

use std::path::PathBuf;

/// The real kubectl of minor `1.<minor>`: `KUBECTL_1_<minor>`, else
/// `kubectl.1.<minor>` on PATH or beside the kubectl on PATH (as the Google
/// Cloud SDK installs 1.27 to 1.33). Missing is an error saying where to
/// put it: callers fail, never skip.
pub(crate) fn find_kubectl(minor: u32) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(format!("KUBECTL_1_{minor}")) {
        return Ok(PathBuf::from(path));
    }
    let name = format!("kubectl.1.{minor}");
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        if dir.join(&name).is_file() {
            return Ok(dir.join(&name));
        }
        if let Ok(real) = std::fs::canonicalize(dir.join("kubectl"))
            && let Some(beside) = real.parent().map(|d| d.join(&name))
            && beside.is_file()
        {
            return Ok(beside);
        }
    }
    Err(format!(
        "kubectl 1.{minor} is needed: put {name} on PATH or beside kubectl, or set KUBECTL_1_{minor}"
    ))
}
