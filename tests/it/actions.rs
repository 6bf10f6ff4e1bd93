//! `roll --exec` as a bounded, owned process: `--action-timeout`, Ctrl-C
//! ending everything the action started, and a rerun that does not start
//! a second action while the first may still run or its reboot is under way.

use std::path::Path;
use std::time::Duration;

use crate::harness::{Cluster, Run};
use crate::pool::{boots, four_nodes, lease_phase, reboot, roll_report};

/// The pid an action wrote to `file`, once it has.
fn pid_in(c: &Cluster, file: &Path) -> u32 {
    c.wait_for("the action's pid", Duration::from_secs(20), |_| {
        std::fs::read_to_string(file).is_ok_and(|s| s.trim().parse::<u32>().is_ok())
    });
    std::fs::read_to_string(file)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Is that process still running (a zombie is not)?
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
    })
}

/// An action that starts a long `sleep` of its own and writes its pid.
fn sleeper(file: &Path) -> String {
    format!("sleep 300 & echo $! > {}; wait", file.display())
}

fn roll_r1(exec: &str, more: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "roll",
        "r1",
        "--ignore-daemonsets",
        "--exec",
        exec,
        "-o",
        "json",
    ]
    .map(str::to_string)
    .to_vec();
    args.extend(more.iter().map(|s| (*s).to_string()));
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn an_action_past_its_timeout_is_ended_with_everything_it_started() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let file = c.dir.path().join("sleep.pid");
    let args = roll_r1(&sleeper(&file), &["--action-timeout", "2s"]);
    let out = c.maintain(&strs(&args));
    assert_ne!(out.code, 0, "{out:?}");
    let report = roll_report(&out);
    let r1 = &report["nodes"][0];
    assert_eq!(r1["status"], "blocked", "{out:?}");
    let message = r1["message"].as_str().unwrap_or_default();
    assert!(message.contains("--action-timeout 2"), "{message}");
    let pid = std::fs::read_to_string(&file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!running(pid), "the action's sleep was ended");
    assert_eq!(lease_phase(&c, "r1").as_deref(), Some("blocked"));
}

#[test]
fn ctrl_c_ends_the_whole_action_not_only_its_shell() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let file = c.dir.path().join("sleep.pid");
    let args = roll_r1(&sleeper(&file), &[]);
    let child = c.maintain_spawn(&strs(&args));
    let pid = pid_in(&c, &file);
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = Cluster::finish(child, Duration::from_secs(20));
    out.code(130);
    assert!(!running(pid), "the action's sleep was ended: {out:?}");
    assert_eq!(roll_report(&out)["nodes"][0]["status"], "interrupted");
}

/// Kills a roll with kill -9 once `now` holds, then reruns it to its end.
fn killed_then_rerun(c: &Cluster, args: &[String], now: impl Fn(&Cluster) -> bool) -> Run {
    let mut child = c.maintain_spawn(&strs(args));
    c.wait_for(
        "the moment to kill the roll",
        Duration::from_secs(30),
        |c| lease_phase(c, "r1").as_deref() == Some("action") && now(c),
    );
    child.kill().expect("kill -9");
    let _ = child.wait();
    let out = c.maintain(&strs(args));
    out.success();
    assert_eq!(roll_report(&out)["nodes"][0]["status"], "done", "{out:?}");
    out
}

fn action_recorded(c: &Cluster) -> bool {
    c.get(
        kube_sandbox::resources::Resource::Leases,
        "kube-system",
        "kubectl-maintain-r1",
    )
    .is_some_and(|l| !l["metadata"]["annotations"]["kubectl-maintain.io/action-by"].is_null())
}

fn runs(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .count()
}

fn not_ready(c: &Cluster, node: &str) -> bool {
    let n = c
        .get(kube_sandbox::resources::Resource::Nodes, "", node)
        .unwrap();
    n["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|cond| cond["type"] == "Ready" && cond["status"] != "True")
}

#[test]
fn a_rerun_takes_a_reboot_under_way_as_the_action_done() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let ran = c.dir.path().join("ran");
    // Like `ssh node 'reboot'`, which waits until the connection drops.
    let exec = format!(
        "echo run >> {}; {} >/dev/null 2>&1; sleep 8",
        ran.display(),
        reboot("4")
    );
    let args = roll_r1(&exec, &["--wait-for-reboot", "--ready-timeout", "30s"]);
    // Killed while the node is down from the action's reboot.
    let out = killed_then_rerun(&c, &args, |c| not_ready(c, "r1"));
    assert_eq!(runs(&ran), 1, "the action ran once: {out:?}");
    assert_eq!(boots(&c, "r1").len(), 2, "one reboot");
    assert_eq!(roll_report(&out)["nodes"][0]["resumedFrom"], "waitReady");
}

#[test]
fn a_rerun_waits_for_an_action_that_still_runs() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let ran = c.dir.path().join("ran");
    let exec = format!(
        "echo run >> {}; sleep 3; {} >/dev/null 2>&1",
        ran.display(),
        reboot("1")
    );
    let args = roll_r1(&exec, &["--wait-for-reboot", "--ready-timeout", "30s"]);
    // Killed while the action sleeps, before it asks for the reboot, once
    // the Lease records it (a kill between its start and that record is
    // the one window a rerun cannot see).
    let out = killed_then_rerun(&c, &args, |c| runs(&ran) == 1 && action_recorded(c));
    assert_eq!(runs(&ran), 1, "not started again: {out:?}");
    assert_eq!(boots(&c, "r1").len(), 2, "one reboot");
    assert!(
        out.stderr.contains("an earlier run's action"),
        "the wait is on screen: {}",
        out.stderr
    );
}

/// A command that carries a credential, given as `env:NAME` or
/// `file:PATH`, runs as given and is never shown: not in the lines, the
/// report, the Lease's record or an Event; `--render` keeps it in the
/// run's Secret, out of the Job's arguments and ConfigMap.
#[test]
fn an_exec_command_from_env_or_file_runs_and_is_never_shown() {
    const SECRET: &str = "tok-exec-8d1f";
    let c = four_nodes().start(33);
    c.wait_settled();
    let ran = c.dir.path().join("ran");
    let command = format!("echo {SECRET} >> {}", ran.display());
    let script = c.dir.path().join("reboot.sh");
    std::fs::write(&script, &command).unwrap();
    let from_file = format!("file:{}", script.display());
    for (exec, env) in [
        ("env:REBOOT_CMD", vec![("REBOOT_CMD", command.as_str())]),
        (from_file.as_str(), vec![]),
    ] {
        let args = roll_r1(exec, &["--yes", "--fresh"]);
        let out = c.maintain_env(&strs(&args), &env);
        out.success();
        for text in [&out.stdout, &out.stderr] {
            assert!(!text.contains(SECRET), "{exec}: {out:?}");
        }
    }
    assert_eq!(runs(&ran), 2, "each ran once");
    let stored: String = c
        .requests()
        .iter()
        .map(|r| format!("{r:?}"))
        .chain(
            [
                kube_sandbox::resources::Resource::Leases,
                kube_sandbox::resources::Resource::Events,
            ]
            .into_iter()
            .flat_map(|res| c.history(res))
            .map(|e| format!("{e:?}")),
        )
        .collect();
    assert!(!stored.contains(SECRET));
    // In the cluster: the command in the Secret, the arguments name it.
    let render = c.maintain_env(
        &[
            "roll",
            "r1",
            "--ignore-daemonsets",
            "--exec",
            "env:REBOOT_CMD",
            "--in-cluster",
            "--image",
            "registry.example/tools-with-a-shell:1",
            "--render",
        ],
        &[("REBOOT_CMD", command.as_str())],
    );
    render.success();
    assert!(!render.stdout.contains(SECRET), "{render:?}");
    assert!(
        render
            .stdout
            .contains("--exec=env:KUBECTL_MAINTAIN_SECRET_0"),
        "{render:?}"
    );
    assert!(
        render
            .stdout
            .contains("(not shown: the value given to --exec)"),
        "{render:?}"
    );
}
