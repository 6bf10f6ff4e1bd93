//! What an operator sees and scripts against: log lines and the report of a
//! blocked drain, the JSON schema, the prompt and bars on a terminal,
//! completions.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{Asked, Cluster, kubectl_path};

const SMALL: &str = include_str!("../../examples/scenarios/small.yaml");

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubectl-maintain"))
}

fn db_node(c: &Cluster) -> String {
    let pod = c
        .get(kube_sandbox::resources::Resource::Pods, "shop", "db-0")
        .unwrap();
    kube_sandbox::objects::pods::node_name(&pod)
        .unwrap()
        .to_string()
}

#[test]
fn a_blocked_drain_logs_lines_and_reports_causes() {
    let c = Cluster::start(SMALL, 33);
    c.wait_settled();
    let node = db_node(&c);
    let out = c.maintain(&[
        "drain",
        &node,
        "--ignore-daemonsets",
        "--force",
        "--timeout",
        "3s",
        "--lines=report",
    ]);
    out.code(3);
    // Not a terminal: one timestamped line per event, no bars.
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines
            .iter()
            .all(|l| l.len() > 24 && l.as_bytes()[4] == b'-' && l.contains('T')),
        "{out:?}"
    );
    for want in [
        format!("node/{node} cordoned"),
        format!("node/{node} wave user started"),
        format!("node/{node} pod/shop/db-0 blocked: PDB db"),
        format!("node/{node} timed out after"),
    ] {
        assert!(out.stderr.contains(&want), "missing {want:?}: {out:?}");
    }
    assert!(
        !out.stderr.contains('\u{1b}'),
        "no escape sequences off a terminal"
    );
    // The report names each blocked pod with its cause and budget, then the budget once.
    assert!(
        out.stdout.contains(&format!(
            "* blocked by PodDisruptionBudget shop/db (1 pod): shop/db-0 on {node}"
        )),
        "{out:?}"
    );
    assert!(out.stdout.contains("what to do:"), "{out:?}");
    let pdb_row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("shop/db "))
        .expect("PDB table row");
    let cells: Vec<&str> = pdb_row.split_whitespace().collect();
    assert_eq!(
        cells,
        ["shop/db", "0", "1", "1", "1", "1"],
        "ALLOWED HEALTHY DESIRED EXPECTED PODS BLOCKED"
    );
}

/// The documented schema (docs/report.md), checked field by field.
fn check_schema(r: &serde_json::Value) {
    use serde_json::Value;
    let is = |v: &Value, t: &str| match t {
        "string" => v.is_string(),
        "number" => v.is_u64() || v.is_i64(),
        "bool" => v.is_boolean(),
        "array" => v.is_array(),
        _ => unreachable!(),
    };
    assert_eq!(r["apiVersion"], "kubectl-maintain.io/v1alpha1");
    assert_eq!(r["kind"], "DrainReport");
    for (f, t) in [
        ("dryRun", "string"),
        ("elapsedMs", "number"),
        ("nodes", "array"),
    ] {
        assert!(is(&r[f], t), "{f}: {t}");
    }
    for n in r["nodes"].as_array().unwrap() {
        for (f, t) in [
            ("node", "string"),
            ("status", "string"),
            ("wasCordoned", "bool"),
            ("elapsedMs", "number"),
            ("waves", "array"),
            ("pods", "array"),
        ] {
            assert!(is(&n[f], t), "node.{f}: {t} in {n}");
        }
        assert!(
            [
                "drained",
                "refused",
                "timedOut",
                "failed",
                "interrupted",
                "dryRun"
            ]
            .contains(&n["status"].as_str().unwrap())
        );
        for w in n["waves"].as_array().unwrap() {
            assert!(
                is(&w["name"], "string")
                    && is(&w["pods"], "number")
                    && is(&w["startedMs"], "number"),
                "{w}"
            );
        }
        for p in n["pods"].as_array().unwrap() {
            assert!(
                is(&p["pod"], "string") && is(&p["priority"], "number"),
                "{p}"
            );
            let state = p["result"]["state"].as_str().unwrap();
            assert!(
                [
                    "evicted",
                    "completed",
                    "goneByItself",
                    "skipped",
                    "wouldEvict",
                    "wouldBlock",
                    "remaining"
                ]
                .contains(&state),
                "{p}"
            );
            if state == "remaining" || state == "wouldBlock" {
                let cause = &p["result"]["cause"];
                assert!(is(&cause["kind"], "string"), "{p}");
                if cause["kind"] == "pdb" {
                    for f in ["name", "message"] {
                        assert!(is(&cause[f], "string"), "{p}");
                    }
                    for f in [
                        "disruptionsAllowed",
                        "currentHealthy",
                        "desiredHealthy",
                        "expectedPods",
                    ] {
                        assert!(cause[f].is_null() || is(&cause[f], "number"), "{p}");
                    }
                }
            }
        }
    }
}

#[test]
fn json_and_yaml_reports_follow_the_documented_schema() {
    let c = Cluster::start(SMALL, 33);
    c.wait_settled();
    let node = db_node(&c);
    let out = c.maintain(&[
        "drain",
        &node,
        "--ignore-daemonsets",
        "--force",
        "--timeout",
        "3s",
        "-o",
        "json",
    ]);
    out.code(3);
    let typed = out.report();
    assert_eq!(
        (typed.api_version.as_str(), typed.kind.as_str()),
        ("kubectl-maintain.io/v1alpha1", "DrainReport")
    );
    assert_eq!(typed.node(&node).status, "timedOut");
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("stdout is JSON only");
    check_schema(&report);
    let db = report["nodes"][0]["pods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pod"] == "shop/db-0")
        .unwrap();
    assert_eq!(db["result"]["cause"]["kind"], "pdb");
    assert_eq!(db["result"]["cause"]["name"], "db");
    assert_eq!(db["result"]["cause"]["desiredHealthy"], 1);

    // `plan` reads the budgets: db's allows no disruption, so it would block.
    let plan = c.maintain(&["plan", &node, "--ignore-daemonsets", "-o", "yaml"]);
    plan.code(3);
    let as_json: serde_json::Value = serde_saphyr::from_str(&plan.stdout).expect("stdout is YAML");
    check_schema(&as_json);
}

/// Runs a command under a pseudo-terminal (util-linux `script`), typing
/// `input` once the confirmation prompt is on the screen (if one comes).
pub(crate) fn in_terminal(c: &Cluster, args: &str, input: &str) -> (String, i32) {
    in_terminal_env(c, &[], args, input)
}

fn in_terminal_env(c: &Cluster, env: &[(&str, &str)], args: &str, input: &str) -> (String, i32) {
    use std::io::{Read, Write};
    let cmd = format!("{} {args}", bin().display());
    let mut child = Command::new("script")
        .envs(env.iter().copied())
        .args(["-qec", &cmd, "/dev/null"])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.dir.path().join("home"))
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux runs");
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // Wait for the prompt (or for the end: with --yes there is none).
    let mut screen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !String::from_utf8_lossy(&screen).contains("Drain now?") {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => screen.extend(chunk),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!(
                "neither a prompt nor the end within 30 s for {args}: {}",
                String::from_utf8_lossy(&screen)
            ),
        }
    }
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    screen.extend(rx.try_iter().flatten());
    (
        String::from_utf8_lossy(&screen).into_owned(),
        status.code().unwrap_or(-1),
    )
}

#[test]
fn on_a_terminal_it_asks_first_and_shows_bars() {
    let c = Cluster::start(SMALL, 33);
    c.wait_settled();
    let node = db_node(&c);
    let mark = c.mark();
    let (screen, code) = in_terminal(
        &c,
        &format!("drain {node} --ignore-daemonsets --force --timeout 3s"),
        "n\n",
    );
    assert!(
        screen.contains("This will cordon and drain 1 node(s):"),
        "{screen}"
    );
    assert!(
        screen.contains("shop/db-0 (PDB db: "),
        "the budget that refuses now is named, with its numbers: {screen}"
    );
    assert!(screen.contains("Drain now?"), "{screen}");
    assert!(screen.contains("nothing was changed"), "{screen}");
    assert_eq!(code, 3);
    c.assert_asked(mark, Asked::NoWrite, "answering no");

    let (screen, code) = in_terminal(
        &c,
        &format!("drain {node} --ignore-daemonsets --force --timeout 3s"),
        "y\n",
    );
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains("nodes: 1 timed out"),
        "the overall line, the report's count: {screen}"
    );
    assert!(
        screen.contains(&format!("{node} ")) && screen.contains("=>"),
        "a bar for the node: {screen}"
    );
    assert!(screen.contains("wave user"), "{screen}");
    // --yes never asks.
    let (screen, _) = in_terminal(
        &c,
        &format!("drain {node} --ignore-daemonsets --force --timeout 1s --yes"),
        "",
    );
    assert!(!screen.contains("Drain now?"), "{screen}");
}

/// `drain --simulate` on a terminal: the question comes after the
/// prediction's verdict, so the operator answers knowing it.
#[test]
fn on_a_terminal_the_question_follows_the_prediction() {
    let c = Cluster::start(SMALL, 33);
    c.wait_settled();
    let node = db_node(&c);
    let mark = c.mark();
    let (screen, code) = in_terminal(
        &c,
        &format!("drain {node} --ignore-daemonsets --force --timeout 3s --simulate"),
        "n\n",
    );
    let verdict = screen
        .find("Predicted on a copy of the cluster")
        .unwrap_or_else(|| panic!("no verdict: {screen}"));
    let question = screen.find("Drain now?").expect("asked");
    assert!(verdict < question, "{screen}");
    let said = &screen[verdict..question];
    assert!(
        said.contains(&format!("node/{node}: timed out after 3.0s")),
        "{said}"
    );
    assert!(
        said.contains("PDB shop/db holds evictions back for") && said.contains("still at the end"),
        "{said}"
    );
    assert_eq!(code, 3);
    c.assert_asked(mark, Asked::NoWrite, "predicting and answering no");
}

#[test]
fn completion_files_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (shell, file) in [
        ("bash", "kubectl-maintain.bash"),
        ("zsh", "_kubectl-maintain"),
        ("fish", "kubectl-maintain.fish"),
        ("powershell", "_kubectl-maintain.ps1"),
    ] {
        let out = Command::new(bin())
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(out.status.success());
        let committed = std::fs::read_to_string(root.join("completions").join(file)).unwrap();
        assert!(
            committed == String::from_utf8_lossy(&out.stdout),
            "completions/{file} is stale: run `cargo run -- completion {shell} > completions/{file}`"
        );
    }
}

#[test]
fn kubectl_completes_node_names_through_the_plugin() {
    let c = Cluster::start(SMALL, 33);
    let path_dir = c.dir.path().join("bin");
    std::fs::create_dir_all(&path_dir).unwrap();
    std::os::unix::fs::symlink(bin(), path_dir.join("kubectl-maintain")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/kubectl_complete-maintain"),
        path_dir.join("kubectl_complete-maintain"),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        path_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(kubectl_path())
        .args(["__complete", "maintain", "drain", "worker-2", "work"])
        .env("PATH", path)
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.dir.path().join("home"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, ["worker-1", "worker-3", ":4"], "{stdout}");
}

/// Automation under a pseudo-terminal turns the question off with an
/// environment variable, as `--yes` does per command.
#[test]
fn the_question_can_be_turned_off_for_automation() {
    let c = Cluster::start(SMALL, 33);
    c.wait_settled();
    let node = db_node(&c);
    let (screen, code) = in_terminal_env(
        &c,
        &[("KUBECTL_MAINTAIN_NO_CONFIRM", "1")],
        &format!("drain {node} --ignore-daemonsets --force --timeout 1s"),
        "",
    );
    assert!(!screen.contains("Drain now?"), "{screen}");
    assert_eq!(code, 3, "drained up to the blocked pod: {screen}");
}
