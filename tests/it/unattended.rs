//! A roll nobody watches (#31): notifications to a local receiver (the
//! documented body, Slack's, retries on 500, a dead endpoint counted), the
//! metrics pushed to a real Pushgateway and scraped by a real Prometheus,
//! a real Prometheus alert holding the roll until it clears, maintenance
//! windows (on the real clock, and on the simulated one for a long wait),
//! hooks echoed late and never, and MaintenancePlanned before the first
//! drain.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube_sandbox::resources::Resource;
use serde_json::Value;

use crate::harness::{Cluster, TempDir};
use crate::pool::{four_nodes, with_blocked_node};
use crate::scenario::Scenario;

/// One request the receiver got: path, body, when.
#[derive(Debug, Clone)]
pub(crate) struct Got {
    pub(crate) path: String,
    body: Value,
    /// Its `Authorization` header.
    authorization: Option<String>,
}

/// A local webhook receiver: answers 500 to the first `fail_first`
/// requests, then 200.
pub(crate) fn receiver(fail_first: usize) -> (u16, Arc<Mutex<Vec<Got>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let got = Arc::new(Mutex::new(Vec::new()));
    let seen = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let mut length = 0;
            let mut authorization = None;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if h.to_ascii_lowercase().starts_with("authorization:") {
                    authorization = Some(h["authorization:".len()..].trim().to_string());
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let n = {
                let mut g = seen.lock().unwrap();
                g.push(Got {
                    path,
                    body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                    authorization,
                });
                g.len()
            };
            let status = if n <= fail_first {
                "500 Internal Server Error"
            } else {
                "200 OK"
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
    });
    (port, got)
}

#[test]
fn notifications_follow_the_roll_retry_and_tell_a_blocked_node_once() {
    let c = with_blocked_node().start(33);
    c.wait_settled();
    let (port, got) = receiver(2);
    let (slack_port, slack_got) = receiver(0);
    let hook = format!("http://127.0.0.1:{port}/hook");
    let slack = format!("slack+http://127.0.0.1:{slack_port}/slack");
    let out = c.maintain(&[
        "roll",
        "n1",
        "n2",
        "n3",
        "--ignore-daemonsets",
        "--max-parallel",
        "1",
        "--timeout",
        "6s",
        "--notify",
        &hook,
        "--notify",
        &slack,
        "--notify",
        "http://127.0.0.1:1/dead",
        "--notify-after",
        "2s",
        "--notify-template",
        "node.started=Draining node %s",
        "-o",
        "json",
    ]);
    out.code(3);
    assert_eq!(
        out.stderr
            .matches("notifications to http://127.0.0.1:1/… fail")
            .count(),
        1,
        "one warning for the dead endpoint:\n{}",
        out.stderr
    );
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let got = got.lock().unwrap().clone();
    let generic: Vec<&Got> = got.iter().filter(|g| g.path == "/hook").collect();
    assert_eq!(generic.len(), got.len());
    // The first two answers were 500: the first notification came three times.
    assert_eq!(got[0].body, got[1].body);
    assert_eq!(got[1].body, got[2].body);
    assert_eq!(generic[0].body["kind"], "run.started");
    let kinds: Vec<&str> = generic
        .iter()
        .skip(2)
        .map(|g| g.body["kind"].as_str().unwrap())
        .collect();
    // Every body follows docs/notifications.md.
    for g in &generic {
        documented(&g.body);
    }
    assert_eq!(generic[0].body["nodes"].as_array().unwrap().len(), 3);
    n1_blocked_once(&generic, &kinds);
    let started = generic
        .iter()
        .find(|g| g.body["kind"] == "node.started" && g.body["node"] == "n1")
        .expect("n1 started");
    assert_eq!(started.body["text"], "Draining node n1");
    assert_eq!(said(&generic, "node.done", "node"), ["n2", "n3"]);
    let last = generic.last().unwrap();
    assert_eq!(last.body["kind"], "run.finished");
    assert_eq!(last.body["summary"]["exitCode"], 3);
    // Slack's format: the text alone.
    let slack = slack_got.lock().unwrap().clone();
    assert_eq!(slack.len(), generic.len() - 2);
    assert!(
        slack
            .iter()
            .all(|g| g.body.as_object().unwrap().len() == 1 && g.body["text"].is_string())
    );
    // The report counts what was delivered and what was not.
    let n = &report["notifications"];
    assert_eq!(n["sent"].as_u64().unwrap() as usize, slack.len() * 2, "{n}");
    assert!(n["failed"].as_u64().unwrap() >= 1, "{n}");
}

/// `drain -l` takes what a roll takes unattended (#53): notifications,
/// retried when refused, a blocked node told once past `--notify-after`,
/// and its metrics pushed to a real Pushgateway (Debian's).
#[test]
fn a_pool_drain_notifies_and_pushes_its_metrics() {
    let c = with_blocked_node().start(33);
    c.wait_settled();
    let (port, got) = receiver(1);
    let hook = format!("http://127.0.0.1:{port}/hook");
    let gw_port = free_port();
    let gateway = format!("http://127.0.0.1:{gw_port}");
    let _gw = start(
        "prometheus-pushgateway",
        &[format!("--web.listen-address=127.0.0.1:{gw_port}")],
    );
    wait_until("the Pushgateway", Duration::from_secs(20), || {
        http("GET", &format!("{gateway}/-/ready"), "").0 == 200
    });
    let out = c.maintain(&[
        "drain",
        "-l",
        "pool=blue",
        "--ignore-daemonsets",
        "--max-parallel",
        "1",
        "--timeout",
        "6s",
        "--notify",
        &hook,
        "--notify-after",
        "2s",
        "--pushgateway",
        &gateway,
        "-o",
        "json",
    ]);
    out.code(3);
    let got = got.lock().unwrap().clone();
    // The first answer was 500: the first notification came twice.
    assert_eq!(got[0].body, got[1].body);
    assert_eq!(got[0].body["kind"], "run.started");
    for g in &got {
        documented(&g.body);
        assert_eq!(g.body["command"], "drain");
    }
    let kinds: Vec<&str> = got
        .iter()
        .skip(1)
        .map(|g| g.body["kind"].as_str().unwrap())
        .collect();
    let got: Vec<&Got> = got.iter().collect();
    n1_blocked_once(&got, &kinds);
    assert_eq!(
        said(&got, "node.done", "text"),
        [
            "Node n2 is drained; it stays cordoned",
            "Node n3 is drained; it stays cordoned"
        ]
    );
    let last = got.last().unwrap();
    assert_eq!(last.body["kind"], "run.finished", "{kinds:?}");
    assert_eq!(last.body["summary"]["exitCode"], 3);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        report["notifications"]["failed"], 0,
        "retried, then delivered"
    );
    let (_, pushed) = http("GET", &format!("{gateway}/metrics"), "");
    let series = |state: &str| {
        pushed
            .lines()
            .find(|l| {
                l.starts_with("kubectl_maintain_nodes{")
                    && l.contains(&format!("state=\"{state}\""))
            })
            .unwrap_or_else(|| panic!("no pushed {state} series:\n{pushed}"))
            .to_string()
    };
    assert!(series("done").ends_with(" 2"), "{pushed}");
    assert!(series("blocked").ends_with(" 1"), "{pushed}");
}

/// One `node.blocked`, for n1 (held by the budget `solo`), told once the
/// hold lasted `--notify-after` (2s) and not again when it ended blocked.
fn n1_blocked_once(got: &[&Got], kinds: &[&str]) {
    let blocked = said(got, "node.blocked", "node");
    assert_eq!(blocked, ["n1"], "one blocked notification: {kinds:?}");
    let reason = &said(got, "node.blocked", "reason")[0];
    assert!(
        reason.contains("solo") && reason.contains(", for 2"),
        "{reason}"
    );
}

/// A field of every notification of this kind, in order.
fn said<'a>(got: &[&'a Got], kind: &str, field: &str) -> Vec<&'a str> {
    got.iter()
        .filter(|g| g.body["kind"] == kind)
        .map(|g| g.body[field].as_str().unwrap())
        .collect()
}

/// The generic body's documented fields (docs/notifications.md), no more.
fn documented(b: &Value) {
    assert_eq!(b["version"], "kubectl-maintain.io/v1", "{b}");
    assert!(b["run"].as_str().is_some_and(|r| !r.is_empty()));
    assert!(b["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert!(b["text"].as_str().is_some_and(|t| !t.is_empty()));
    let allowed = [
        "version", "kind", "command", "run", "time", "text", "node", "reason", "nodes", "summary",
    ];
    assert!(
        ["drain", "roll"].contains(&b["command"].as_str().unwrap()),
        "{b}"
    );
    let keys = b.as_object().unwrap().keys();
    assert!(
        keys.into_iter().all(|k| allowed.contains(&k.as_str())),
        "{b}"
    );
}

/// A Debian Prometheus component run for a test, stopped when dropped.
struct Component(Child);

impl Drop for Component {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn http(method: &str, url: &str, body: &str) -> (u16, String) {
    let out = Command::new("curl")
        .args([
            "-s",
            "-X",
            method,
            "--data-binary",
            body,
            "-w",
            "\n%{http_code}",
            url,
        ])
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn start(program: &str, args: &[String]) -> Component {
    Component(
        Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} is required (.ci/run installs it): {e}")),
    )
}

/// A query's single value from Prometheus.
fn query(prom: &str, q: &str) -> Option<f64> {
    let (_, body) = http(
        "GET",
        &format!(
            "{prom}/api/v1/query?query={}",
            q.replace(' ', "%20")
                .replace('{', "%7B")
                .replace('}', "%7D")
                .replace('"', "%22")
                .replace('=', "%3D")
        ),
        "",
    );
    let v: Value = serde_json::from_str(&body).ok()?;
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

/// A real Pushgateway, and a real Prometheus scraping it and the roll's
/// `--metrics-addr` every second, with an alert rule on a pushed metric.
fn prometheus_and_pushgateway() -> ((TempDir, Component, Component), String, String, u16) {
    let dir = TempDir::new("prometheus");
    let (gw_port, prom_port, metrics_port) = (free_port(), free_port(), free_port());
    let gateway = format!("http://127.0.0.1:{gw_port}");
    let prom = format!("http://127.0.0.1:{prom_port}");
    let gw = start(
        "prometheus-pushgateway",
        &[format!("--web.listen-address=127.0.0.1:{gw_port}")],
    );
    std::fs::write(
        dir.path().join("rules.yml"),
        "groups:\n- name: test\n  rules:\n  - alert: MaintenanceTestAlert\n    expr: test_alert_firing > 0\n  - alert: Watchdog\n    expr: vector(1)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [rules.yml]\nscrape_configs:\n- job_name: pushgateway\n  honor_labels: true\n  static_configs: [{{targets: ['127.0.0.1:{gw_port}']}}]\n- job_name: roll\n  static_configs: [{{targets: ['127.0.0.1:{metrics_port}']}}]\n"
        ),
    )
    .unwrap();
    let server = start(
        "prometheus",
        &[
            format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ),
            format!("--storage.tsdb.path={}", dir.path().join("data").display()),
            format!("--web.listen-address=127.0.0.1:{prom_port}"),
        ],
    );
    wait_until("the Pushgateway", Duration::from_secs(20), || {
        http("GET", &format!("{gateway}/-/ready"), "").0 == 200
    });
    wait_until("Prometheus", Duration::from_secs(30), || {
        http("GET", &format!("{prom}/-/ready"), "").0 == 200
    });
    ((dir, gw, server), gateway, prom, metrics_port)
}

#[test]
fn metrics_are_pushed_and_scraped_and_a_firing_alert_holds_the_roll() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let (_parts, gateway, prom, metrics_port) = prometheus_and_pushgateway();
    // A metric the test pushes fires a real alert rule.
    let alert_group = format!("{gateway}/metrics/job/test");
    assert_eq!(http("PUT", &alert_group, "test_alert_firing 1\n").0, 200);
    wait_until("the alert firing", Duration::from_secs(30), || {
        http("GET", &format!("{prom}/api/v1/alerts"), "")
            .1
            .contains("\"MaintenanceTestAlert\"")
            && http("GET", &format!("{prom}/api/v1/alerts"), "")
                .1
                .contains("\"firing\"")
    });
    let child = c.maintain_spawn(&[
        "roll",
        "-l",
        "pool=blue",
        "--ignore-daemonsets",
        "--max-parallel",
        "2",
        "--block-on-alerts",
        &prom,
        "--alert-filter",
        "^MaintenanceTest",
        "--alert-check-interval",
        "1s",
        "--metrics-addr",
        &format!("127.0.0.1:{metrics_port}"),
        "--pushgateway",
        &gateway,
        "-o",
        "json",
    ]);
    // Held: Prometheus scrapes the roll's /metrics and sees the hold.
    wait_until(
        "the hold scraped by Prometheus",
        Duration::from_secs(30),
        || query(&prom, "kubectl_maintain_holds{what=\"alerts\"}") == Some(1.0),
    );
    let cordoned = |c: &Cluster| {
        c.sandbox
            .view()
            .list(Resource::Nodes)
            .iter()
            .any(|n| n["spec"]["unschedulable"] == true)
    };
    assert!(!cordoned(&c), "no node is taken while the alert fires");
    assert_eq!(
        query(&prom, "kubectl_maintain_nodes{state=\"pending\"}"),
        Some(4.0)
    );
    // The alert clears: the roll goes on by itself.
    assert_eq!(http("DELETE", &alert_group, "").0, 202);
    let out = Cluster::finish(child, Duration::from_secs(90));
    out.success();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let holds = report["holds"].as_array().expect("holds in the report");
    assert!(
        holds.iter().any(|h| h["what"] == "alerts"
            && h["reason"]
                .as_str()
                .unwrap()
                .contains("MaintenanceTestAlert")
            && !h["reason"].as_str().unwrap().contains("Watchdog")),
        "{holds:?}"
    );
    // The Pushgateway has the end state, under the run's grouping key.
    let run = report["roll"].as_str().unwrap();
    let (_, pushed) = http("GET", &format!("{gateway}/metrics"), "");
    let done = pushed
        .lines()
        .find(|l| {
            l.starts_with("kubectl_maintain_nodes{")
                && l.contains(&format!("run=\"{run}\""))
                && l.contains("state=\"done\"")
        })
        .unwrap_or_else(|| panic!("no pushed nodes series:\n{pushed}"));
    assert!(done.ends_with(" 4"), "{done}");
    assert!(
        pushed.contains("kubectl_maintain_run_end_time_seconds{"),
        "{pushed}"
    );
    assert!(
        pushed.contains("kubectl_maintain_evictions_total{code=\"201\""),
        "{pushed}"
    );
    wait_until(
        "the pushed series in Prometheus",
        Duration::from_secs(20),
        || {
            query(
                &prom,
                &format!(
                    "kubectl_maintain_nodes{{job=\"kubectl-maintain\",run=\"{run}\",state=\"done\"}}"
                ),
            ) == Some(4.0)
        },
    );
}

fn condition(c: &Cluster, node: &str, kind: &str) -> Option<String> {
    let n = c.get(Resource::Nodes, "", node)?;
    n["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|x| x["type"] == kind)
        .map(|x| x["status"].as_str().unwrap_or_default().to_string())
}

#[test]
fn maintenance_planned_is_on_every_node_before_the_first_drain_and_cleared_at_the_end() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let child = c.maintain_spawn(&[
        "roll",
        "-l",
        "pool=blue",
        "--ignore-daemonsets",
        "--max-parallel",
        "1",
        "--announce",
        "3s",
    ]);
    let nodes = ["r1", "r2", "r3", "r4"];
    c.wait_for(
        "MaintenancePlanned on every node",
        Duration::from_secs(20),
        |c| {
            nodes
                .iter()
                .all(|n| condition(c, n, "MaintenancePlanned").as_deref() == Some("True"))
        },
    );
    assert!(
        c.sandbox
            .view()
            .list(Resource::Nodes)
            .iter()
            .all(|n| n["spec"]["unschedulable"] != true),
        "announced before any drain"
    );
    c.wait_for("a node in maintenance", Duration::from_secs(20), |c| {
        nodes
            .iter()
            .any(|n| condition(c, n, "MaintenanceInProgress").as_deref() == Some("True"))
    });
    let out = Cluster::finish(child, Duration::from_secs(90));
    out.success();
    assert!(out.stderr.contains("(--announce)"), "{}", out.stderr);
    for n in nodes {
        assert_eq!(
            condition(&c, n, "MaintenancePlanned").as_deref(),
            Some("False"),
            "{n}"
        );
        assert_eq!(
            condition(&c, n, "MaintenanceInProgress").as_deref(),
            Some("False"),
            "{n}"
        );
    }
}

/// Two runs plan r1: the roll that returns it leaves MaintenancePlanned
/// True while the other still plans it (its claim, as another run writes
/// it), and False everywhere no one else does.
#[test]
fn maintenance_planned_stays_while_another_run_still_plans_the_node() {
    let c = four_nodes().start(33);
    c.wait_settled();
    let later = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    c.kubectl(&[
        "annotate",
        "node",
        "r1",
        &format!("kubectl-maintain.io/planned-by-otherrun={later}"),
    ])
    .success();
    let out = c.maintain(&[
        "roll",
        "-l",
        "pool=blue",
        "--ignore-daemonsets",
        "--max-parallel",
        "2",
        "--announce",
        "1s",
    ]);
    out.success();
    assert_eq!(
        condition(&c, "r1", "MaintenancePlanned").as_deref(),
        Some("True"),
        "the other run still plans r1"
    );
    assert_eq!(
        condition(&c, "r1", "MaintenanceInProgress").as_deref(),
        Some("False")
    );
    for n in ["r2", "r3", "r4"] {
        assert_eq!(
            condition(&c, n, "MaintenancePlanned").as_deref(),
            Some("False"),
            "{n}"
        );
    }
    let r1 = c.get(Resource::Nodes, "", "r1").unwrap();
    let claims: Vec<&String> = r1["metadata"]["annotations"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("kubectl-maintain.io/planned-by-"))
        .collect();
    assert_eq!(
        claims,
        ["kubectl-maintain.io/planned-by-otherrun"],
        "ours taken back: {r1}"
    );
}

fn two_nodes() -> Cluster {
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment("web", 2)
        .start(33);
    c.wait_settled();
    c
}

/// A webhook's login and path are credentials: its requests go through the
/// proxy HTTP_PROXY names with the login as a Basic header, and neither
/// is printed, in lines, the report or the bodies.
#[test]
fn a_webhook_goes_through_the_proxy_with_its_login_and_is_never_shown() {
    let c = two_nodes();
    let proxy = crate::connecting::Proxy::start(c.dir.path());
    let host = crate::connecting::hostname();
    let (port, got) = receiver(0);
    let hook = format!("http://hook-user:hook-PASS-31@{host}:{port}/hook/SECRET-PATH-9f");
    let out = c.maintain_env(
        &[
            "roll",
            "n1",
            "--ignore-daemonsets",
            "--notify",
            &hook,
            "-o",
            "json",
        ],
        &[("HTTP_PROXY", &proxy.url())],
    );
    out.success();
    assert!(proxy.tunnels_to(&host) > 0, "through the proxy");
    let got = got.lock().unwrap().clone();
    assert!(!got.is_empty());
    for g in &got {
        assert_eq!(g.path, "/hook/SECRET-PATH-9f");
        // base64("hook-user:hook-PASS-31")
        assert_eq!(
            g.authorization.as_deref(),
            Some("Basic aG9vay11c2VyOmhvb2stUEFTUy0zMQ==")
        );
        let body = g.body.to_string();
        assert!(
            !body.contains("hook-PASS-31") && !body.contains("SECRET-PATH"),
            "{body}"
        );
    }
    for s in ["hook-PASS-31", "SECRET-PATH-9f", "hook-user"] {
        assert!(
            !out.stdout.contains(s) && !out.stderr.contains(s),
            "{s}: {out:?}"
        );
    }
    // A refused URL is named without its login or path.
    let bad = c.maintain(&["roll", "n1", "--notify", "ftp://u:ftp-PASS-5@h/p-SECRET"]);
    bad.code(2);
    assert!(
        !bad.stderr.contains("ftp-PASS-5") && !bad.stderr.contains("p-SECRET"),
        "{bad:?}"
    );
}

fn annotation(c: &Cluster, node: &str, key: &str) -> Option<String> {
    c.get(Resource::Nodes, "", node)?["metadata"]["annotations"][key]
        .as_str()
        .map(str::to_string)
}

#[test]
fn a_hook_that_echoes_late_holds_the_drain_and_one_that_never_echoes_fails_it() {
    let c = two_nodes();
    let plan = c.dir.path().join("plan.yaml");
    std::fs::write(
        &plan,
        "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  hooks:\n    preDrain:\n    - annotation: example.com/ready\n      timeout: 60s\n",
    )
    .unwrap();
    // A value an old run left never counts.
    c.kubectl(&["annotate", "node", "n1", "example.com/ready=abc/1"])
        .success();
    let mut run = c.maintain_watched(&[
        "roll",
        "n1",
        "--ignore-daemonsets",
        "--plan",
        plan.to_str().unwrap(),
        "-o",
        "json",
    ]);
    run.wait_for_stderr("waiting for hooks", Duration::from_secs(20));
    let held_from = std::time::Instant::now();
    c.wait_for("the pre-drain request", Duration::from_secs(20), |c| {
        annotation(c, "n1", "kubectl-maintain.io/pre-drain").is_some()
    });
    let asked = annotation(&c, "n1", "kubectl-maintain.io/pre-drain").unwrap();
    let node = c.get(Resource::Nodes, "", "n1").unwrap();
    assert_ne!(
        node["spec"]["unschedulable"], true,
        "held before the cordon"
    );
    // The other operator echoes the value, with the real kubectl.
    let echoed_after = held_from.elapsed();
    c.kubectl(&[
        "annotate",
        "node",
        "n1",
        &format!("example.com/ready={asked}"),
        "--overwrite",
    ])
    .success();
    let out = run.finish(Duration::from_secs(60));
    out.success();
    assert!(
        out.stderr.contains("preDrain hook: example.com/ready"),
        "{}",
        out.stderr
    );
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let hold = &report["holds"][0];
    assert_eq!(
        (hold["what"].as_str(), hold["node"].as_str()),
        (Some("example.com/ready"), Some("n1"))
    );
    // It held at least from when it said so until the echo began.
    let lasted = u128::from(hold["lastedMs"].as_u64().unwrap());
    assert!(
        lasted + 1 >= echoed_after.as_millis(),
        "{hold} {echoed_after:?}"
    );

    std::fs::write(
        &plan,
        "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  hooks:\n    preDrain:\n    - annotation: example.com/never\n      timeout: 2s\n",
    )
    .unwrap();
    let out = c.maintain(&[
        "roll",
        "n2",
        "--ignore-daemonsets",
        "--plan",
        plan.to_str().unwrap(),
        "-o",
        "json",
    ]);
    out.code(3);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let message = report["nodes"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("preDrain hook example.com/never: did not echo"),
        "{message}"
    );
    let table = c.maintain(&[
        "roll",
        "n2",
        "--ignore-daemonsets",
        "--plan",
        plan.to_str().unwrap(),
    ]);
    assert!(
        table
            .stdout
            .contains("node/n2: preDrain hook example.com/never"),
        "{}",
        table.stdout
    );
}

/// `DAY HH:MM:SS-HH:MM:SS UTC` opening `from_now` from now.
fn window_in(from_now: Duration) -> String {
    let at = kube_conventions::time::now()
        .checked_add(jiff::SignedDuration::try_from(from_now).unwrap())
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::UTC);
    let end = at.checked_add(jiff::SignedDuration::from_hours(1)).unwrap();
    format!(
        "{} {}-{} UTC",
        at.strftime("%a"),
        at.strftime("%H:%M:%S"),
        end.strftime("%H:%M:%S")
    )
}

#[test]
fn a_window_that_opens_later_delays_the_first_drain() {
    let c = two_nodes();
    let window = window_in(Duration::from_secs(6));
    let mut run = c.maintain_watched(&["roll", "n1", "--ignore-daemonsets", "--window", &window]);
    run.wait_for_stderr(
        "outside every --window: the next opens at",
        Duration::from_secs(20),
    );
    let node = c.get(Resource::Nodes, "", "n1").unwrap();
    assert_ne!(node["spec"]["unschedulable"], true, "not before the window");
    let out = run.finish(Duration::from_secs(60));
    out.success();
}

/// A drain outside its `--window` holds, says until when, and cordons
/// nothing before the window opens; the report keeps the hold.
#[test]
fn a_drain_outside_its_window_holds_and_cordons_nothing() {
    let c = two_nodes();
    let window = window_in(Duration::from_secs(6));
    let mut run = c.maintain_watched(&[
        "drain",
        "n1",
        "--ignore-daemonsets",
        "--window",
        &window,
        "-o",
        "json",
    ]);
    run.wait_for_stderr(
        "node/n1 waiting: outside every --window: the next opens at",
        Duration::from_secs(20),
    );
    let node = c.get(Resource::Nodes, "", "n1").unwrap();
    assert_ne!(node["spec"]["unschedulable"], true, "not before the window");
    let out = run.finish(Duration::from_secs(60));
    out.success();
    assert!(
        out.stderr
            .contains("each node is cordoned when its turn comes"),
        "{out:?}"
    );
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let holds = report["holds"].as_array().expect("holds in the report");
    assert!(
        holds
            .iter()
            .any(|h| h["what"] == "window" && h["lastedMs"].as_u64().unwrap() > 1000),
        "{holds:?}"
    );
}

#[test]
fn a_window_hours_away_is_waited_for_on_the_simulated_clock() {
    use clap::Parser;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let dir = TempDir::new("window");
    let kubeconfig = dir.path().join("kubeconfig");
    let yaml = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment("web", 2)
        .yaml();
    rt.block_on(async {
        kube_sandbox::follow_tokio_clock();
        let parsed = kube_sandbox::scenario::parse(std::path::Path::new("s.yaml"), &yaml).unwrap();
        let sandbox =
            kube_sandbox::Sandbox::start(parsed.objects, kube_sandbox::Options::default())
                .await
                .unwrap();
        sandbox.write_kubeconfig(&kubeconfig).unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
        let window = window_in(Duration::from_secs(5 * 3600));
        let (wall, virtual_start) = (Instant::now(), tokio::time::Instant::now());
        let cli = kubectl_maintain::cli::Cli::parse_from([
            "kubectl-maintain",
            "roll",
            "n1",
            "--ignore-daemonsets",
            "--window",
            &window,
            "--lease-duration",
            "1h",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ]);
        let code = Box::pin(kubectl_maintain::run(cli))
            .await
            .expect("the roll runs");
        assert_eq!(code, 0);
        let simulated = virtual_start.elapsed();
        assert!(
            simulated >= Duration::from_secs(5 * 3600 - 60),
            "waited {simulated:?}"
        );
        assert!(wall.elapsed() < Duration::from_secs(120), "in virtual time");
        let n1 = sandbox.view().get(Resource::Nodes, "", "n1").unwrap();
        assert_ne!(
            n1["spec"]["unschedulable"], true,
            "uncordoned after its roll"
        );
    });
}

#[test]
fn an_alertmanager_alert_holds_the_roll_until_it_resolves() {
    let c = two_nodes();
    let dir = TempDir::new("alertmanager");
    let port = free_port();
    let am = format!("http://127.0.0.1:{port}");
    std::fs::write(
        dir.path().join("am.yml"),
        "route:\n  receiver: none\nreceivers:\n- name: none\n",
    )
    .unwrap();
    let _am = start(
        "prometheus-alertmanager",
        &[
            format!("--config.file={}", dir.path().join("am.yml").display()),
            format!("--storage.path={}", dir.path().join("data").display()),
            format!("--web.listen-address=127.0.0.1:{port}"),
            "--cluster.listen-address=".into(),
        ],
    );
    wait_until("Alertmanager", Duration::from_secs(30), || {
        http("GET", &format!("{am}/-/ready"), "").0 == 200
    });
    let alert = |ends: &str| {
        format!(
            r#"[{{"labels": {{"alertname": "NodeFilesystemFull", "severity": "critical"}}, "endsAt": "{ends}"}}]"#
        )
    };
    let post = |body: String| {
        let out = Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "-H",
                "Content-Type: application/json",
                "-d",
                &body,
                &format!("{am}/api/v2/alerts"),
            ])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "200");
    };
    post(alert("2099-01-01T00:00:00Z"));
    let mut run = c.maintain_watched(&[
        "roll",
        "n1",
        "--ignore-daemonsets",
        "--block-on-alerts",
        &am,
        "--alert-filter",
        "severity=\"critical\"",
        "--alert-check-interval",
        "1s",
        "-o",
        "json",
    ]);
    run.wait_for_stderr(
        "1 alert firing: NodeFilesystemFull{severity=\"critical\"}",
        Duration::from_secs(20),
    );
    let n1 = c.get(Resource::Nodes, "", "n1").unwrap();
    assert_ne!(
        n1["spec"]["unschedulable"], true,
        "held while the alert is active"
    );
    post(alert(&kube_conventions::time::now_rfc3339()));
    let out = run.finish(Duration::from_secs(60));
    out.success();
}

#[test]
fn a_roll_holds_kureds_lock_while_a_node_is_out_and_gives_it_back_only_if_it_took_it() {
    const LOCK: &str = "weave.works/kured-node-lock";
    let dir = TempDir::new("kured");
    let seen = dir.path().join("seen");
    // The action writes what kured's lock says while the node is out.
    let exec = format!(
        "{} get ds -n kube-system kured -o jsonpath='{{.metadata.annotations.weave\\.works/kured-node-lock}}' >> {}; echo >> {}",
        crate::harness::kubectl_path().display(),
        seen.display(),
        seen.display()
    );
    let gets_and_puts = |c: &Cluster| {
        let ds = |e: &&kube_sandbox::request_log::Entry| {
            e.user_agent.contains("kubectl-maintain") && e.path.contains("/daemonsets/kured")
        };
        let entries = c.requests();
        let get = entries
            .iter()
            .filter(ds)
            .filter(|e| e.method == "GET")
            .count();
        let put = entries
            .iter()
            .filter(ds)
            .filter(|e| e.method == "PUT")
            .count();
        (get, put)
    };
    let args = ["roll", "n1", "n2", "--ignore-daemonsets", "--exec", &exec];

    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment("web", 2)
        .object(crate::scenario::kured())
        .start(33);
    c.wait_settled();
    c.maintain(&args).success();
    let held = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(held.lines().count(), 2, "{held}");
    assert!(
        held.lines().all(|l| l.contains("nodeID")),
        "the lock is held while each node is out: {held}"
    );
    let ds = c.get(Resource::DaemonSets, "kube-system", "kured").unwrap();
    assert!(
        ds["metadata"]["annotations"][LOCK].is_null(),
        "given back: {ds}"
    );
    // Per node, one at a time: taken (read, written) and given back (read,
    // written); and the drain reads it once, as the owner of the node's
    // kured pod (kubectl's DaemonSet filter).
    assert_eq!(gets_and_puts(&c), (6, 4));

    // Without kured, each node looks for it once: nothing to give back.
    let c = two_nodes();
    std::fs::remove_file(&seen).unwrap();
    c.maintain(&args).success();
    assert_eq!(gets_and_puts(&c), (2, 0));
}
