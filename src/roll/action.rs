//! `--exec` as a bounded, owned process: `sh -c CMD` in a process group of
//! its own, so that ending it ends everything it started (an `ssh`, a
//! `sleep`, a pipeline), not only the `sh`. The group is ended (SIGTERM,
//! then SIGKILL after `GRACE`) when the action outlives `--action-timeout`,
//! when the roll is interrupted, and when the roll quits at once (a second
//! Ctrl-C: `end_all`). A roll killed with kill -9 cannot end it; its rerun
//! waits for it instead (crate::roll::phase::Action).

use std::collections::BTreeSet;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use rustix::process::{Pid, Signal};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;
use tokio::sync::watch;

/// How long an ended group has between SIGTERM and SIGKILL.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// The process groups of the actions running now, for `end_all`.
static RUNNING: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// How an action ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// It exited: its status and its stderr's lines.
    Exited {
        status: std::process::ExitStatus,
        stderr: Vec<String>,
    },
    /// It outlived its bound; its group was ended.
    TimedOut,
    /// The roll was interrupted; its group was ended.
    Interrupted,
    /// It could not be waited for.
    Lost(std::io::Error),
}

/// A started action.
pub(crate) struct Running {
    child: tokio::process::Child,
    /// Its process group (the id of the `sh`).
    pub(crate) group: u32,
}

/// Starts `command` with `env`, in a group of its own.
pub(crate) fn start(command: &str, env: &[(String, String)]) -> std::io::Result<Running> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    let child = cmd.spawn()?;
    let group = child.id().unwrap_or_default();
    lock().insert(group);
    Ok(Running { child, group })
}

impl Running {
    /// Waits for it to end, each stdout line to `line` as it comes, for at
    /// most `bound`; a timeout or an interrupt ends its whole group.
    pub(crate) async fn wait(
        mut self,
        bound: Duration,
        mut interrupt: watch::Receiver<bool>,
        line: impl Fn(String),
    ) -> Ended {
        let stdout = self.child.stdout.take();
        let stderr = self.child.stderr.take();
        let relay = async {
            if let Some(r) = stdout {
                let mut lines = BufReader::new(r).lines();
                while let Ok(Some(l)) = lines.next_line().await {
                    line(l);
                }
            }
        };
        let waited = async {
            let (status, (), stderr) = tokio::join!(self.child.wait(), relay, read_lines(stderr));
            match status {
                Ok(status) => Ended::Exited { status, stderr },
                Err(e) => Ended::Lost(e),
            }
        };
        let ended = tokio::select! {
            ended = waited => return self.forget(ended),
            () = tokio::time::sleep(bound) => Ended::TimedOut,
            _ = interrupt.wait_for(|i| *i) => Ended::Interrupted,
        };
        end_group(self.group, &mut self.child).await;
        self.forget(ended)
    }

    fn forget(&self, ended: Ended) -> Ended {
        lock().remove(&self.group);
        ended
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Dropped unawaited (the roll's task ended): nothing may outlive it.
        if lock().remove(&self.group) {
            signal(self.group, Signal::KILL);
        }
    }
}

async fn read_lines(r: Option<impl AsyncRead + Unpin>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(r) = r {
        let mut lines = BufReader::new(r).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            out.push(l);
        }
    }
    out
}

/// SIGTERM to the group; SIGKILL to what is left after `GRACE`.
async fn end_group(group: u32, sh: &mut tokio::process::Child) {
    signal(group, Signal::TERM);
    if tokio::time::timeout(GRACE, sh.wait()).await.is_err() || alive(group) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        signal(group, Signal::KILL);
        let _ = sh.wait().await;
    }
}

/// Ends at once every action running now (the roll quits without waiting).
pub(crate) fn end_all() {
    for group in std::mem::take(&mut *lock()) {
        signal(group, Signal::KILL);
    }
}

/// Does a process group of this machine still have a live process in it?
/// Where `/proc` is readable, zombies (exited, not yet reaped: in a
/// container whose PID 1 reaps nothing they stay) do not count.
pub(crate) fn alive(group: u32) -> bool {
    let Ok(group) = i32::try_from(group) else {
        return false;
    };
    if group <= 0 {
        return false;
    }
    match std::fs::read_dir("/proc") {
        Ok(entries) => entries
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .any(|stat| running_in(&stat, group)),
        Err(_) => Pid::from_raw(group)
            .is_some_and(|g| rustix::process::test_kill_process_group(g).is_ok()),
    }
}

/// From `/proc/PID/stat` (`pid (comm) state ppid pgrp ...`; comm may hold
/// spaces and parentheses, so fields are counted after the last `)`): is
/// the process in `group` and not a zombie?
fn running_in(stat: &str, group: i32) -> bool {
    let Some(mut fields) = super::holder::stat_fields(stat) else {
        return false;
    };
    let state = fields.next();
    let pgrp = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
    pgrp == Some(group) && !matches!(state, Some("Z" | "X"))
}

fn signal(group: u32, sig: Signal) {
    if let Some(group) = i32::try_from(group).ok().and_then(Pid::from_raw) {
        // Gone already is as good as ended.
        let _ = rustix::process::kill_process_group(group, sig);
    }
}

fn lock() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_interrupt() -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        std::mem::forget(tx);
        rx
    }

    #[tokio::test]
    async fn an_action_that_outlives_its_bound_ends_with_everything_it_started() {
        let dir = std::env::temp_dir().join(format!("action-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("sleep.pid");
        let command = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
        let running = start(&command, &[]).unwrap();
        let group = running.group;
        let ended = running
            .wait(Duration::from_millis(500), no_interrupt(), |_| {})
            .await;
        assert!(matches!(ended, Ended::TimedOut), "{ended:?}");
        let sleep: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{sleep}/stat")).unwrap_or_default();
        assert!(
            !running_in(&stat, group as i32),
            "the sleep the action started was ended too: {stat}"
        );
        assert!(!alive(group));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_stat_line_gives_its_group_and_state() {
        assert!(running_in("42 (sleep) S 1 40 40 0", 40));
        assert!(!running_in("42 (sleep) Z 1 40 40 0", 40));
        assert!(running_in("42 (a) b) R 1 7 7 0", 7));
        assert!(!running_in("42 (sleep) S 1 41 41 0", 40));
    }

    #[tokio::test]
    async fn an_action_relays_its_lines_and_its_status() {
        let seen = Mutex::new(Vec::new());
        let running = start(
            "echo one; echo \"$X\"; echo oops >&2; exit 3",
            &[("X".into(), "two".into())],
        )
        .unwrap();
        let ended = running
            .wait(Duration::from_secs(30), no_interrupt(), |l| {
                seen.lock().unwrap().push(l);
            })
            .await;
        let Ended::Exited { status, stderr } = ended else {
            panic!("{ended:?}")
        };
        assert_eq!(status.code(), Some(3));
        assert_eq!(stderr, ["oops"]);
        assert_eq!(*seen.lock().unwrap(), ["one", "two"]);
    }
}
