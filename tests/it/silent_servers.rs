//! A server that goes silent is bounded and said (src/client/silence.rs,
//! src/client/failure.rs): a request with no answer is told within 10 s
//! with what it waits on; `--request-timeout` bounds the dial, the TLS
//! handshake and the answer; a server that takes connections and never
//! completes TLS is told as kubectl tells it, not as a failed dial.

use std::time::{Duration, Instant};

use kube_sandbox::Faults;

use crate::scenario::Scenario;

#[test]
fn a_request_with_no_answer_is_said_within_10_s_and_bounded_by_the_flag() {
    let c = Scenario::new().node("n1").start(33);
    c.sandbox.set_faults(Faults {
        latency_ms: 12_000,
        only: vec!["list nodes".into()],
        ..Faults::default()
    });
    let started = Instant::now();
    let out = c.maintain(&["status"]);
    out.success();
    assert!(started.elapsed() >= Duration::from_secs(12), "{out:?}");
    let said = out
        .stderr
        .lines()
        .find(|l| l.contains("GET nodes: no answer from") && l.contains("for 10 s"))
        .unwrap_or_else(|| panic!("the wait is said: {out:?}"));
    assert!(said.contains("--request-timeout"), "{said}");
    // The flag bounds it, and says so in kubectl's words.
    let started = Instant::now();
    let bounded = c.maintain(&["status", "--request-timeout=3s"]);
    assert_ne!(bounded.code, 0, "{bounded:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{bounded:?}");
    // kubectl, beside it on the same server: its line alone, no "error: "
    // and no request named before it. Its last words vary from run to run
    // (net/http's `request canceled (Client.Timeout exceeded while
    // awaiting headers)`, or `context deadline exceeded`): ours are
    // net/http's, never the socket's `timed out`.
    let kubectl = c.kubectl(&["get", "nodes", "--request-timeout=3s"]);
    assert_ne!(kubectl.code, 0, "{kubectl:?}");
    let last = |stderr: &str| stderr.lines().last().unwrap_or_default().to_string();
    assert!(
        last(&kubectl.stderr).starts_with("Unable to connect to the server: "),
        "{kubectl:?}"
    );
    assert!(
        last(&bounded.stderr).starts_with("Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded while awaiting headers)"),
        "{bounded:?}"
    );
}

#[test]
fn a_server_that_never_completes_tls_is_told_so_within_the_request_timeout() {
    let c = Scenario::new().node("n1").start(33);
    // Takes connections, says nothing.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut kept = Vec::new();
        for s in silent.incoming().take(8) {
            kept.push(s);
        }
        std::thread::sleep(Duration::from_secs(30));
    });
    let (_, ca) = c.server_and_ca();
    let kc = c.dir.path().join("silent");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: s\n  cluster: {{server: \"https://127.0.0.1:{port}\", certificate-authority-data: {ca}}}\ncontexts:\n- name: x\n  context: {{cluster: s, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\n"
        ),
    )
    .unwrap();
    let kc = kc.to_str().unwrap();
    let started = Instant::now();
    let ours = c.maintain(&["status", "--request-timeout=2s", "--kubeconfig", kc]);
    let took = started.elapsed();
    assert_ne!(ours.code, 0);
    assert!(took < Duration::from_secs(10), "{took:?}: {ours:?}");
    assert!(
        ours.stderr
            .contains("Unable to connect to the server: net/http: TLS handshake timeout"),
        "{ours:?}"
    );
    // kubectl, beside it: the same end, after five tries of discovery
    // (`TLS handshake timeout` only past client-go's 10 s, without the flag).
    let started = Instant::now();
    let kubectl = c.kubectl(&["get", "nodes", "--request-timeout=2s", "--kubeconfig", kc]);
    assert_ne!(kubectl.code, 0);
    // Its last words vary from run to run (`context deadline exceeded`,
    // `request canceled while waiting for connection`): its prefix does not.
    assert!(
        kubectl.stderr.contains("Unable to connect to the server: "),
        "{kubectl:?}"
    );
    assert!(took <= started.elapsed(), "ours gave up first");
    drop(held);
}
