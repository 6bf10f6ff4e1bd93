//! The state of the local-image runtime (crate::kubelet::runtime): which
//! images run for real, where their files go, the processes running and
//! each container's log. What acts on it, with the cluster's state, is
//! runtime.rs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::container_log::ContainerLog;
use crate::store::Key;

/// One container of one pod.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ContainerId {
    pub(crate) key: Key,
    pub(crate) uid: String,
    pub(crate) container: String,
}

/// A lock, kept through a panic elsewhere (the data is the last write).
fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Sends a signal to each process.
fn kill(pids: impl IntoIterator<Item = u32>, signal: rustix::process::Signal) {
    for pid in pids {
        if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}

/// The current and the previous run's logs of one container.
#[derive(Default)]
struct Logs {
    current: Option<Arc<ContainerLog>>,
    previous: Option<Arc<ContainerLog>>,
}

pub(crate) struct Runtime {
    /// IMAGE → PATH.
    images: Vec<(String, PathBuf)>,
    /// Where the files a container mounts are written: private to root,
    /// so that no one else on the machine reads a pod's token or Secrets
    /// (each container reaches its own through its bind mounts). `None`
    /// without local images.
    pub(crate) dir: Option<crate::PrivateDir>,
    /// The apiserver's address, for `KUBERNETES_SERVICE_HOST/PORT`.
    pub(crate) apiserver: OnceLock<std::net::SocketAddr>,
    running: Mutex<HashMap<ContainerId, u32>>,
    logs: Mutex<HashMap<(String, String, String), Logs>>,
}

/// The repository of an image reference: without its digest and tag.
fn repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => image,
    }
}

impl Runtime {
    /// A runtime for `images`: its private directory is made now.
    pub(crate) fn new(images: Vec<(String, PathBuf)>) -> std::io::Result<Runtime> {
        let dir = if images.is_empty() {
            None
        } else {
            Some(crate::PrivateDir::create("kube-sandbox")?)
        };
        Ok(Runtime {
            images,
            dir,
            apiserver: OnceLock::new(),
            running: Mutex::default(),
            logs: Mutex::default(),
        })
    }

    /// No local images: every container is simulated.
    pub(crate) fn none() -> Runtime {
        Runtime {
            images: Vec::new(),
            dir: None,
            apiserver: OnceLock::new(),
            running: Mutex::default(),
            logs: Mutex::default(),
        }
    }

    pub(crate) fn set_apiserver(&self, addr: std::net::SocketAddr) {
        let _ = self.apiserver.set(addr);
    }

    /// The local program for an image: any tag or digest of a given
    /// repository, or exactly a given reference.
    pub(crate) fn program(&self, image: &str) -> Option<&Path> {
        self.images
            .iter()
            .find(|(given, _)| given == image || given == repository(image))
            .map(|(_, path)| path.as_path())
    }

    pub(crate) fn lock_running(&self) -> std::sync::MutexGuard<'_, HashMap<ContainerId, u32>> {
        locked(&self.running)
    }

    /// Does a process of this pod still run?
    pub(crate) fn has_process(&self, key: &Key, uid: &str) -> bool {
        self.lock_running()
            .keys()
            .any(|id| &id.key == key && id.uid == uid)
    }

    /// Signals every process of the pod; false when none runs.
    pub(crate) fn signal(&self, key: &Key, uid: &str, signal: rustix::process::Signal) -> bool {
        let pids: Vec<u32> = self
            .lock_running()
            .iter()
            .filter(|(id, _)| &id.key == key && id.uid == uid)
            .map(|(_, pid)| *pid)
            .collect();
        let any = !pids.is_empty();
        kill(pids, signal);
        any
    }

    /// Kills every process it runs: the sandbox is stopping.
    pub(crate) fn kill_all(&self) {
        let pids: Vec<u32> = self.lock_running().values().copied().collect();
        kill(pids, rustix::process::Signal::KILL);
    }

    /// The pid of a pod's container, while it runs (tests kill it).
    pub(crate) fn pid(&self, key: &Key, container: &str) -> Option<u32> {
        self.lock_running()
            .iter()
            .find(|(id, _)| &id.key == key && id.container == container)
            .map(|(_, pid)| *pid)
    }

    /// A container's log: the current run's, or the previous one's.
    pub(crate) fn log(
        &self,
        key: &Key,
        container: &str,
        previous: bool,
    ) -> Option<Arc<ContainerLog>> {
        let logs = locked(&self.logs);
        let l = logs.get(&(key.0.clone(), key.1.clone(), container.to_string()))?;
        if previous {
            l.previous.clone()
        } else {
            l.current.clone()
        }
    }

    pub(crate) fn new_log(&self, key: &Key, container: &str) -> Arc<ContainerLog> {
        let log = ContainerLog::new();
        let mut logs = locked(&self.logs);
        let l = logs
            .entry((key.0.clone(), key.1.clone(), container.to_string()))
            .or_default();
        l.previous = l.current.take();
        l.current = Some(log.clone());
        log
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.kill_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_matches_by_repository_with_any_tag_or_digest() {
        assert_eq!(repository("ghcr.io/a/b:v1"), "ghcr.io/a/b");
        assert_eq!(repository("ghcr.io/a/b@sha256:00"), "ghcr.io/a/b");
        assert_eq!(repository("ghcr.io/a/b:v1@sha256:00"), "ghcr.io/a/b");
        assert_eq!(repository("localhost:5000/b"), "localhost:5000/b");
        let rt = Runtime::new(vec![("ghcr.io/a/b".into(), "/bin/true".into())]).unwrap();
        assert!(rt.program("ghcr.io/a/b:v2").is_some());
        assert!(rt.program("ghcr.io/a/c:v2").is_none());
    }
}
