//! A node's phases in a roll, as recorded on its lock, and where a rerun
//! of the same roll takes up each node. Pure.

use serde::Serialize;

/// Where a node is in its roll. The lock's `kubectl-maintain.io/phase`
/// annotation holds it, so that a rerun knows where to take up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Phase {
    /// Cordon and drain, everything a drain does.
    Drain,
    /// `--exec`, then with `--wait-for-reboot` the reboot.
    Action,
    /// Waiting for the node to be Ready.
    WaitReady,
    /// Returning the node as it was before the roll.
    Uncordon,
    /// Waiting for the budgets of its pods to be healthy, or the soak time.
    Settle,
    /// Finished; a rerun of an unfinished roll skips it.
    Done,
    /// Could not be drained or acted on: left cordoned; a rerun tries again.
    Blocked,
    /// Its roll finished on every node: a later run starts over (a run
    /// that began before it finished counts the node as done).
    Finished,
}

impl Phase {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Drain => "drain",
            Phase::Action => "action",
            Phase::WaitReady => "wait-ready",
            Phase::Uncordon => "uncordon",
            Phase::Settle => "settle",
            Phase::Done => "done",
            Phase::Blocked => "blocked",
            Phase::Finished => "finished",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Phase> {
        [
            Phase::Drain,
            Phase::Action,
            Phase::WaitReady,
            Phase::Uncordon,
            Phase::Settle,
            Phase::Done,
            Phase::Blocked,
            Phase::Finished,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a node's lock says of an earlier run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    /// The roll's identity (`identity`).
    pub(crate) roll: String,
    pub(crate) phase: Phase,
    /// The node's boot ID when its action started.
    pub(crate) boot_id: Option<String>,
    /// When the roll finished (milliseconds since the epoch), for `Finished`.
    pub(crate) finished_at: Option<i64>,
    /// The budgets over the pods its drain evicted (`namespace/name`), for
    /// a rerun that resumes after the drain to wait on.
    pub(crate) budgets: Vec<String>,
    /// The action an earlier run started, in the action phase.
    pub(crate) action: Option<ActionRun>,
}

/// An action a run started on a node, as its lock records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActionRun {
    /// When it started (milliseconds since the epoch).
    pub(crate) started_ms: i64,
    /// The machine and process group that run it.
    pub(crate) host: String,
    pub(crate) group: u32,
    /// Whether it exited with success; `None` while no end is recorded.
    pub(crate) ended_ok: Option<bool>,
}

/// What a rerun does about the action an earlier run started on a node
/// that is still up, with the boot ID it had then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Earlier {
    /// None ran, or it failed or can no longer be running: run it.
    Run,
    /// It ended well: do not run it again (wait for its reboot).
    Ended,
    /// It may still be running: wait, at most until this time (ms).
    MayRun { until_ms: i64 },
}

/// Decides `Earlier`. `bound_ms` is `--action-timeout` (with the grace its
/// end has); `group_alive` says whether a process group of this machine
/// still runs. An action of another machine may run until its bound.
pub(crate) fn earlier(
    run: Option<&ActionRun>,
    here: &str,
    now_ms: i64,
    bound_ms: i64,
    group_alive: impl Fn(u32) -> bool,
) -> Earlier {
    let Some(run) = run else {
        return Earlier::Run;
    };
    let until_ms = run.started_ms + bound_ms;
    match run.ended_ok {
        Some(true) => Earlier::Ended,
        Some(false) => Earlier::Run,
        None if now_ms >= until_ms => Earlier::Run,
        None if run.host == here && !group_alive(run.group) => Earlier::Run,
        None => Earlier::MayRun { until_ms },
    }
}

/// A node as a rerun finds it: its boot ID, and since when (ms since the
/// epoch) it has not been Ready, if it is not.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeNow {
    pub(crate) boot_id: String,
    pub(crate) down_since_ms: Option<i64>,
}

/// Where a run of a roll that began at `since` (ms since the epoch)
/// takes a node up: from the start, unless its lock records this roll's
/// earlier run (and `fresh` was not asked). An action that was under way
/// is done once the node booted since it began, and under way (its reboot)
/// when the node went down after it started. A node whose roll another
/// run of the same command finished after this one began is done.
pub(crate) fn resume(
    record: Option<&Record>,
    roll: &str,
    node: &NodeNow,
    fresh: bool,
    since: i64,
) -> Phase {
    let Some(r) = ours(record, roll, fresh) else {
        return Phase::Drain;
    };
    match r.phase {
        Phase::Finished if r.finished_at.is_some_and(|t| t > since) => Phase::Done,
        Phase::Finished | Phase::Blocked => Phase::Drain,
        Phase::Action if r.boot_id.as_deref().is_some_and(|b| b != node.boot_id) => {
            Phase::WaitReady
        }
        // RFC 3339 times are to the second: a node down within that second
        // of the action's start counts as down after it.
        Phase::Action
            if r.action
                .as_ref()
                .zip(node.down_since_ms)
                .is_some_and(|(a, down)| down / 1000 >= a.started_ms / 1000) =>
        {
            Phase::WaitReady
        }
        phase => phase,
    }
}

/// The record of this roll's earlier run, unless `fresh` ignores it.
fn ours<'a>(record: Option<&'a Record>, roll: &str, fresh: bool) -> Option<&'a Record> {
    record.filter(|r| r.roll == roll && !fresh)
}

/// What a node's roll carries over from its lock's record (its budgets,
/// its action): this roll's run that did not end, unless `fresh`; a node
/// finished, done or blocked starts over with nothing of it.
pub(crate) fn carried_over(record: Option<Record>, roll: &str, fresh: bool) -> Option<Record> {
    record.filter(|r| {
        ours(Some(r), roll, fresh).is_some()
            && !matches!(r.phase, Phase::Finished | Phase::Blocked | Phase::Done)
    })
}

/// Has a roll already finished every one of these nodes? Then a rerun has
/// nothing to resume.
pub(crate) fn all_done(records: &[Option<Record>], roll: &str) -> bool {
    !records.is_empty()
        && records.iter().all(|r| {
            r.as_ref()
                .is_some_and(|r| r.roll == roll && r.phase == Phase::Done)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(phase: Phase, boot: Option<&str>) -> Record {
        Record {
            budgets: Vec::new(),
            action: None,
            roll: "r1".into(),
            phase,
            boot_id: boot.map(str::to_string),
            finished_at: Some(100),
        }
    }

    fn up(boot_id: &str) -> NodeNow {
        NodeNow {
            boot_id: boot_id.into(),
            down_since_ms: None,
        }
    }

    fn started(at: i64, host: &str, ended_ok: Option<bool>) -> ActionRun {
        ActionRun {
            started_ms: at,
            host: host.into(),
            group: 7,
            ended_ok,
        }
    }

    #[test]
    fn an_action_under_way_is_not_run_again() {
        let mut r = rec(Phase::Action, Some("b"));
        r.action = Some(started(10_000, "here", None));
        // Down since after it started: its reboot is under way.
        let down = |ms| NodeNow {
            boot_id: "b".into(),
            down_since_ms: Some(ms),
        };
        assert_eq!(
            resume(Some(&r), "r1", &down(12_000), false, 50),
            Phase::WaitReady
        );
        assert_eq!(
            resume(Some(&r), "r1", &down(10_400), false, 50),
            Phase::WaitReady
        );
        // Down before it started: not its doing.
        assert_eq!(
            resume(Some(&r), "r1", &down(8_000), false, 50),
            Phase::Action
        );
        assert_eq!(resume(Some(&r), "r1", &up("b"), false, 50), Phase::Action);
        // Up, same boot: the action itself decides.
        let bound = 60_000;
        let alive = |_| true;
        let gone = |_| false;
        let e = |run: &ActionRun, host, now, g: &dyn Fn(u32) -> bool| {
            earlier(Some(run), host, now, bound, g)
        };
        assert_eq!(earlier(None, "here", 0, bound, alive), Earlier::Run);
        let running = started(10_000, "here", None);
        assert_eq!(
            e(&running, "here", 20_000, &alive),
            Earlier::MayRun { until_ms: 70_000 }
        );
        assert_eq!(e(&running, "here", 20_000, &gone), Earlier::Run);
        assert_eq!(e(&running, "here", 70_000, &alive), Earlier::Run);
        // Another machine's: it may run until its bound.
        assert_eq!(
            e(&running, "there", 20_000, &gone),
            Earlier::MayRun { until_ms: 70_000 }
        );
        assert_eq!(
            e(&started(10_000, "here", Some(true)), "here", 20_000, &alive),
            Earlier::Ended
        );
        assert_eq!(
            e(
                &started(10_000, "here", Some(false)),
                "here",
                20_000,
                &alive
            ),
            Earlier::Run
        );
    }

    #[test]
    fn a_rerun_takes_each_node_up_where_it_was() {
        assert_eq!(resume(None, "r1", &up("b"), false, 50), Phase::Drain);
        // Another roll's record, or a finished one: from the start.
        assert_eq!(
            resume(Some(&rec(Phase::Done, None)), "r2", &up("b"), false, 50),
            Phase::Drain
        );
        assert_eq!(
            resume(
                Some(&rec(Phase::Finished, None)),
                "r1",
                &up("b"),
                false,
                150
            ),
            Phase::Drain
        );
        assert_eq!(
            resume(Some(&rec(Phase::Done, None)), "r1", &up("b"), false, 50),
            Phase::Done
        );
        assert_eq!(
            resume(Some(&rec(Phase::Done, None)), "r1", &up("b"), true, 50),
            Phase::Drain
        );
        // Finished by another run of the same roll after this one began.
        assert_eq!(
            resume(Some(&rec(Phase::Finished, None)), "r1", &up("b"), false, 50),
            Phase::Done
        );
        // The action ran and the node rebooted: wait for Ready, not again.
        assert_eq!(
            resume(
                Some(&rec(Phase::Action, Some("a"))),
                "r1",
                &up("b"),
                false,
                50
            ),
            Phase::WaitReady
        );
        assert_eq!(
            resume(
                Some(&rec(Phase::Action, Some("b"))),
                "r1",
                &up("b"),
                false,
                50
            ),
            Phase::Action
        );
        assert_eq!(
            resume(Some(&rec(Phase::Settle, None)), "r1", &up("b"), false, 50),
            Phase::Settle
        );
    }

    #[test]
    fn completion() {
        let done = Some(rec(Phase::Done, None));
        assert!(all_done(&[done.clone(), done.clone()], "r1"));
        assert!(!all_done(&[done, None], "r1"));
        assert!(!all_done(&[], "r1"));
        assert_eq!(Phase::parse("wait-ready"), Some(Phase::WaitReady));
    }
}
