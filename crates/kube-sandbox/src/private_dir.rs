//! A directory only its owner may enter (0700), made by exclusive create
//! (a name someone made first, a symlink included, is never reused), and
//! removed with everything in it when dropped. The sandbox keeps its
//! containers' ServiceAccount tokens and Secrets, and its kubeconfig when
//! none was asked for, in one.

use std::path::{Path, PathBuf};

/// A private directory, removed when dropped.
#[derive(Debug)]
pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// A new directory `PREFIX-PID-RANDOM` in the temporary directory.
    pub fn create(prefix: &str) -> std::io::Result<PrivateDir> {
        use std::os::unix::fs::DirBuilderExt as _;
        let mut last = None;
        for _ in 0..16 {
            let tag = crate::random::hex(8);
            let path = std::env::temp_dir().join(format!("{prefix}-{}-{tag}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(PrivateDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no free name")))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn it_is_private_new_and_gone_when_dropped() {
        let a = PrivateDir::create("private-dir-test").unwrap();
        let b = PrivateDir::create("private-dir-test").unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::write(a.path().join("token"), "x").unwrap();
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }
}
