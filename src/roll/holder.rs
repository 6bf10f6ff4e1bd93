//! Who holds a node's lock, and whether that holder still runs.
//!
//! A holder is `kubectl-maintain/HOST/PID/PROCESS`, where PROCESS tells
//! this process apart from any other that ever had its PID: the machine's
//! boot, the PID namespace and the process's start time
//! (`/proc/PID/stat` field 22, in clock ticks since boot). A holder is gone
//! only when the OS says so: same host, boot and PID namespace, and either
//! no such process (`ESRCH`; `EPERM` is another user's live process) or a
//! process of that PID that started at another time (the PID was reused).
//! Anything this machine cannot see into (another host, another PID
//! namespace, a holder written without PROCESS by an older release) is
//! alive until its lease expires.

use rustix::io::Errno;
use rustix::process::Pid;

/// This process, as a lock's holder identity.
pub(crate) fn ours() -> String {
    let pid = std::process::id();
    match Process::of(pid) {
        Some(p) => format!("kubectl-maintain/{}/{pid}/{p}", hostname()),
        None => format!("kubectl-maintain/{}/{pid}", hostname()),
    }
}

/// This machine's name, as lease holders and actions record it.
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

/// A process of this machine, told apart from any other that had its PID:
/// its boot, its PID namespace and its start time. Written `BOOT.PIDNS.START`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Process {
    boot: String,
    ns: u64,
    start: u64,
}

impl Process {
    /// A process as this process sees it; `None` where `/proc` does not say.
    fn of(pid: u32) -> Option<Process> {
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let boot = boot
            .trim()
            .chars()
            .filter(char::is_ascii_hexdigit)
            .take(12)
            .collect();
        Some(Process {
            boot,
            ns: pid_namespace()?,
            start: start_time(pid)?,
        })
    }

    fn parse(text: &str) -> Option<Process> {
        let mut parts = text.split('.');
        let (Some(boot), Some(ns), Some(start), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        Some(Process {
            boot: boot.to_string(),
            ns: ns.parse().ok()?,
            start: start.parse().ok()?,
        })
    }
}

impl std::fmt::Display for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.boot, self.ns, self.start)
    }
}

/// The inode of this process's PID namespace (`pid:[4026531836]`).
fn pid_namespace() -> Option<u64> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let link = link.to_str()?;
    link.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

/// A process's start time, in clock ticks since boot.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_fields(&stat)?.nth(19)?.parse().ok()
}

/// The fields of `/proc/PID/stat` after `comm` (which may hold spaces and
/// parentheses, so counting starts after the last `)`), from `state`
/// (field 3) on.
pub(crate) fn stat_fields(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    stat.rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace())
}

/// Is a holder a process of this machine that has gone?
pub(crate) fn gone_from_here(holder: &str) -> bool {
    let mut parts = holder.split('/');
    let (Some("kubectl-maintain"), Some(host), Some(pid), Some(process)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    if host != hostname() {
        return false;
    }
    let (Some(theirs), Some(ours)) = (Process::parse(process), Process::of(std::process::id()))
    else {
        return false;
    };
    // Same boot and PID namespace, or nothing can be told of it.
    if theirs.boot != ours.boot || theirs.ns != ours.ns {
        return false;
    }
    let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    match rustix::process::test_kill_process(raw) {
        Err(Errno::SRCH) => true,
        // Alive (ours, or another user's: EPERM): the same process only if
        // it started when the holder did.
        Ok(()) | Err(_) => start_time(pid).is_some_and(|now| now != theirs.start),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_finished_one_is_gone() {
        let me = ours();
        assert_eq!(me.split('/').count(), 4, "{me}");
        assert!(!gone_from_here(&me), "{me}");
        // A child that has exited and been reaped: ESRCH.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let theirs = format!(
            "kubectl-maintain/{}/{pid}/{}",
            hostname(),
            Process::of(pid).unwrap()
        );
        child.wait().unwrap();
        assert!(gone_from_here(&theirs), "{theirs}");
    }

    #[test]
    fn a_reused_pid_is_gone_and_what_cannot_be_seen_is_alive() {
        let me = ours();
        let (head, process) = me.rsplit_once('/').unwrap();
        let (boot_ns, start) = process.rsplit_once('.').unwrap();
        // Our PID, another start time: a PID reused.
        let earlier = format!("{head}/{boot_ns}.{}", start.parse::<u64>().unwrap() + 1);
        assert!(gone_from_here(&earlier), "{earlier}");
        // PID 1 lives (whoever's it is): never gone while it started then.
        let init = format!(
            "kubectl-maintain/{}/1/{}",
            hostname(),
            Process::of(1).unwrap()
        );
        assert!(!gone_from_here(&init), "{init}");
        // Another PID namespace, boot or host, or an older release's
        // holder without PROCESS: nothing this machine can tell.
        let (boot, rest) = boot_ns.split_once('.').unwrap();
        let other_ns = format!("{head}/{boot}.1.{start}");
        let other_boot = format!("{head}/000000000000.{rest}.{start}");
        let pid = std::process::id();
        for h in [
            other_ns,
            other_boot,
            format!("kubectl-maintain/{}/{pid}", hostname()),
            format!("kubectl-maintain/elsewhere/{pid}/{process}"),
            "kured/n1".to_string(),
        ] {
            assert!(!gone_from_here(&h), "{h}");
        }
    }
}
