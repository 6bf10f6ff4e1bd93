//! First contact, side by side with the real kubectl: the same kubeconfig,
//! environment and flags given to `kubectl drain` and to ours, and what an
//! operator sees compared line by line. Configuration errors, an
//! unreachable server, a certificate that is not trusted and a failing
//! credential plugin must fail at once, in kubectl's words, printing no
//! secret; proxies go through a real HTTP CONNECT proxy (Debian's
//! tinyproxy).

use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{Cluster, Run};

/// A token in every kubeconfig here, which no output may carry.
const TOKEN: &str = "tok-FIRST-CONTACT-5d2e";
/// What the credential plugin writes, takes and is given.
const PLUGIN_TOKEN: &str = "tok-PLUGIN-OUT-91ab";
const PLUGIN_ARG: &str = "arg-SECRET-3c7f";
const PLUGIN_ENV: &str = "env-SECRET-0b44";

fn https_cluster() -> Cluster {
    Cluster::start_with(&crate::drain::two_nodes().yaml(), 33, |cfg| {
        cfg.owner_token = Some(TOKEN.into());
    })
}

/// A kubeconfig of one cluster (its `fields`), one context and one user
/// (its `user` fields), with `extra` top-level lines.
fn kubeconfig(dir: &Path, name: &str, cluster: &str, user: &str, extra: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n{cluster}\ncontexts:\n- name: ctx\n  context: {{cluster: c, user: u}}\ncurrent-context: ctx\nusers:\n- name: u\n  user:\n{user}\n{extra}"
        ),
    )
    .unwrap();
    path
}

fn indent(fields: &[String]) -> String {
    fields
        .iter()
        .map(|f| format!("    {f}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// kubectl's error line, without the client-go log lines it prints
/// before it (`E1128 … memcache.go …`).
fn kubectl_lines(run: &Run) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_log = false;
    for line in run.stderr.lines() {
        if line.starts_with('E') && line.contains(".go:") {
            in_log = line.ends_with('<');
            continue;
        }
        if in_log {
            in_log = !line.starts_with(" >");
            continue;
        }
        lines.push(line.to_string());
    }
    lines
}

fn assert_no_secret(run: &Run, secrets: &[&str]) {
    for s in secrets {
        assert!(
            !run.stdout.contains(s) && !run.stderr.contains(s),
            "{s} printed: {run:?}"
        );
    }
}

/// Runs kubectl drain and ours (a client dry run) with the same
/// arguments and environment; ours must fail within `within`.
fn both(c: &Cluster, args: &[&str], env: &[(&str, &str)], within: Duration) -> (Run, Run) {
    let mut k = vec!["drain", "n1"];
    k.extend_from_slice(args);
    let kubectl = c.kubectl_env(&k, env);
    let mut m = vec!["drain", "n1", "--dry-run=client"];
    m.extend_from_slice(args);
    let start = Instant::now();
    let ours = c.maintain_env(&m, env);
    assert!(
        start.elapsed() < within,
        "ours took {:?} for {args:?}: {ours:?}",
        start.elapsed()
    );
    (kubectl, ours)
}

#[test]
fn kubeconfig_mistakes_are_refused_at_once_in_kubectls_words() {
    let c = https_cluster();
    let dir = c.dir.path();
    let (server, ca) = c.server_and_ca();
    let user = indent(&[format!("token: {TOKEN}")]);
    let good = [
        format!("server: {server}"),
        format!("certificate-authority-data: {ca}"),
    ];
    let plain = kubeconfig(dir, "plain", &indent(&good), &user, "");
    let p = plain.to_str().unwrap();
    let ca_file = dir.join("ca.crt");
    std::fs::write(&ca_file, "not read").unwrap();
    let ca_and_insecure = kubeconfig(
        dir,
        "ca-insecure",
        &indent(&[
            format!("server: {server}"),
            format!("certificate-authority: {}", ca_file.display()),
            "insecure-skip-tls-verify: true".into(),
        ]),
        &user,
        "",
    );
    let gone = kubeconfig(dir, "gone", &indent(&good), &user, "");
    let text = std::fs::read_to_string(&gone).unwrap();
    std::fs::write(
        &gone,
        text.replace("current-context: ctx", "current-context: gone"),
    )
    .unwrap();
    let missing = dir.join("no-such-kubeconfig");
    // Each case: the flags, then the line kubectl and we both print.
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec![
                "--kubeconfig".into(),
                p.into(),
                "--context".into(),
                "typo".into(),
            ],
            "error: context \"typo\" does not exist".into(),
        ),
        (
            vec![
                "--kubeconfig".into(),
                p.into(),
                "--user".into(),
                "nobody".into(),
            ],
            "error: auth info \"nobody\" does not exist".into(),
        ),
        (
            vec![
                "--kubeconfig".into(),
                p.into(),
                "--cluster".into(),
                "nocl".into(),
            ],
            "error: cluster \"nocl\" does not exist".into(),
        ),
        (
            vec!["--kubeconfig".into(), gone.display().to_string()],
            "Error in configuration: context was not found for specified context: gone".into(),
        ),
        (
            vec!["--kubeconfig".into(), ca_and_insecure.display().to_string()],
            "error: specifying a root certificates file with the insecure flag is not allowed"
                .into(),
        ),
        (
            vec![
                "--kubeconfig".into(),
                p.into(),
                "--certificate-authority".into(),
                ca_file.display().to_string(),
                "--insecure-skip-tls-verify".into(),
            ],
            "error: specifying a root certificates file with the insecure flag is not allowed"
                .into(),
        ),
        (
            vec!["--kubeconfig".into(), missing.display().to_string()],
            format!(
                "error: stat {}: no such file or directory",
                missing.display()
            ),
        ),
    ];
    for (args, line) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (kubectl, ours) = both(&c, &args, &[], Duration::from_secs(5));
        assert_eq!(kubectl_lines(&kubectl), [line.as_str()], "kubectl {args:?}");
        assert_eq!(ours.stderr.trim_end(), line, "ours {args:?}: {ours:?}");
        // Fix the input: nothing was sent.
        assert_eq!(ours.code, 2, "{ours:?}");
        assert_no_secret(&ours, &[TOKEN]);
    }
}

#[test]
fn a_malformed_kubeconfig_is_named_without_its_lines() {
    let c = https_cluster();
    let bad = c.dir.path().join("malformed");
    std::fs::write(
        &bad,
        format!("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: {TOKEN}\n   bad: [\n"),
    )
    .unwrap();
    let (kubectl, ours) = both(
        &c,
        &["--kubeconfig", bad.to_str().unwrap()],
        &[],
        Duration::from_secs(5),
    );
    let prefix = format!("error: error loading config file \"{}\": ", bad.display());
    assert!(
        kubectl_lines(&kubectl)[0].starts_with(&prefix),
        "{kubectl:?}"
    );
    assert!(ours.stderr.starts_with(&prefix), "{ours:?}");
    assert_eq!(ours.stderr.lines().count(), 1, "{ours:?}");
    assert_no_secret(&ours, &[TOKEN]);
    assert_eq!(ours.code, 2);
}

#[test]
fn kubeconfig_merges_and_overrides_work_as_kubectls() {
    let c = https_cluster();
    let dir = c.dir.path();
    let (server, ca) = c.server_and_ca();
    let token = indent(&[format!("token: {TOKEN}")]);
    let good = kubeconfig(
        dir,
        "good",
        &indent(&[
            format!("server: {server}"),
            format!("certificate-authority-data: {ca}"),
        ]),
        &token,
        "",
    );
    // KUBECONFIG naming a file that is not there: skipped, as kubectl does.
    let list = format!("{}:{}", dir.join("absent").display(), good.display());
    let kubectl = c.kubectl_env(&["get", "nodes"], &[("KUBECONFIG", &list)]);
    kubectl.success();
    let ours = c.maintain_env(&["status"], &[("KUBECONFIG", &list)]);
    ours.success();
    // --certificate-authority over an insecure file verifies: a wrong CA
    // is then refused by both, the right one trusted by both.
    let insecure = kubeconfig(
        dir,
        "insecure",
        &indent(&[
            format!("server: {server}"),
            "insecure-skip-tls-verify: true".into(),
        ]),
        &token,
        "",
    );
    let right = dir.join("right-ca.crt");
    let pem = String::from_utf8(base64_decode(&ca)).unwrap();
    std::fs::write(&right, pem).unwrap();
    let i = insecure.to_str().unwrap();
    c.kubectl(&[
        "--kubeconfig",
        i,
        "--certificate-authority",
        right.to_str().unwrap(),
        "get",
        "nodes",
    ])
    .success();
    c.maintain(&[
        "status",
        "--kubeconfig",
        i,
        "--certificate-authority",
        right.to_str().unwrap(),
    ])
    .success();
    let wrong = dir.join("wrong-ca.crt");
    std::fs::write(&wrong, OTHER_CA).unwrap();
    let (kubectl, ours) = both(
        &c,
        &[
            "--kubeconfig",
            i,
            "--certificate-authority",
            wrong.to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(5),
    );
    let line = "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority";
    assert_eq!(kubectl_lines(&kubectl), [line], "{kubectl:?}");
    assert_eq!(ours.stderr.trim_end(), line, "{ours:?}");
    assert_eq!(ours.code, 1);
}

#[test]
fn unreachable_and_untrusted_servers_fail_at_once_like_kubectl() {
    let c = https_cluster();
    let dir = c.dir.path();
    let (server, ca) = c.server_and_ca();
    let token = indent(&[format!("token: {TOKEN}")]);
    let refused = kubeconfig(
        dir,
        "refused",
        &indent(&["server: https://127.0.0.1:1".into()]),
        &token,
        "",
    );
    let (kubectl, ours) = both(
        &c,
        &["--kubeconfig", refused.to_str().unwrap()],
        &[],
        Duration::from_secs(5),
    );
    let line = "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?";
    assert_eq!(kubectl_lines(&kubectl), [line]);
    assert_eq!(ours.stderr.trim_end(), line, "{ours:?}");
    assert_eq!((kubectl.code, ours.code), (1, 1));
    // A CA that did not sign the server's certificate.
    let other = base64_encode(OTHER_CA.as_bytes());
    let wrong_ca = kubeconfig(
        dir,
        "wrong-ca",
        &indent(&[
            format!("server: {server}"),
            format!("certificate-authority-data: {other}"),
        ]),
        &token,
        "",
    );
    let (kubectl, ours) = both(
        &c,
        &["--kubeconfig", wrong_ca.to_str().unwrap()],
        &[],
        Duration::from_secs(5),
    );
    assert_eq!(
        kubectl_lines(&kubectl),
        ours.stderr.lines().collect::<Vec<_>>(),
        "{ours:?}"
    );
    // A server name the certificate does not hold.
    let sni = kubeconfig(
        dir,
        "sni",
        &indent(&[
            format!("server: {server}"),
            format!("certificate-authority-data: {ca}"),
            "tls-server-name: wrong.example".into(),
        ]),
        &token,
        "",
    );
    let (kubectl, ours) = both(
        &c,
        &["--kubeconfig", sni.to_str().unwrap()],
        &[],
        Duration::from_secs(5),
    );
    let k = kubectl_lines(&kubectl);
    assert!(k[0].ends_with(", not wrong.example"), "{k:?}");
    assert_eq!(k, ours.stderr.lines().collect::<Vec<_>>(), "{ours:?}");
    assert_no_secret(&ours, &[TOKEN]);
    // A token the server does not take.
    let wrong_token = kubeconfig(
        dir,
        "wrong-token",
        &indent(&[
            format!("server: {server}"),
            format!("certificate-authority-data: {ca}"),
        ]),
        &indent(&["token: tok-NOT-THE-OWNERS-4e1a".into()]),
        "",
    );
    let (kubectl, ours) = both(
        &c,
        &["--kubeconfig", wrong_token.to_str().unwrap()],
        &[],
        Duration::from_secs(5),
    );
    assert_eq!(
        kubectl_lines(&kubectl),
        ours.stderr.lines().collect::<Vec<_>>(),
        "{ours:?}"
    );
    assert_eq!((kubectl.code, ours.code), (1, 1));
    assert_no_secret(&ours, &["tok-NOT-THE-OWNERS-4e1a"]);
}

#[test]
fn a_failing_credential_plugin_is_named_with_its_stderr_and_no_secret() {
    let c = https_cluster();
    let dir = c.dir.path();
    let (server, ca) = c.server_and_ca();
    let plugin = dir.join("failing-plugin.sh");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\necho 'the identity provider did not answer' >&2\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{PLUGIN_TOKEN}\"}}}}'\nexit 1\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cluster = indent(&[
        format!("server: {server}"),
        format!("certificate-authority-data: {ca}"),
    ]);
    let exec = |command: &str| {
        format!(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {command}\n      args: [\"--secret\", \"{PLUGIN_ARG}\"]\n      env: [{{name: SECRET_ENV, value: {PLUGIN_ENV}}}]\n      installHint: \"install it with: apt-get install get-token\"\n      interactiveMode: Never"
        )
    };
    let failing = kubeconfig(
        dir,
        "failing",
        &cluster,
        &exec(plugin.to_str().unwrap()),
        "",
    );
    let (kubectl, ours) = both(
        &c,
        &["--kubeconfig", failing.to_str().unwrap()],
        &[],
        Duration::from_secs(5),
    );
    let line = format!(
        "Unable to connect to the server: getting credentials: exec: executable {} failed with exit code 1",
        plugin.display()
    );
    assert_eq!(kubectl_lines(&kubectl).last(), Some(&line), "{kubectl:?}");
    assert!(
        kubectl
            .stderr
            .contains("the identity provider did not answer")
    );
    assert_eq!(
        ours.stderr.lines().collect::<Vec<_>>(),
        ["the identity provider did not answer", line.as_str()],
        "{ours:?}"
    );
    assert_eq!(ours.code, 1);
    assert_no_secret(&ours, &[PLUGIN_TOKEN, PLUGIN_ARG, PLUGIN_ENV]);
    // Not installed: kubectl's explanation and the kubeconfig's hint.
    let absent = kubeconfig(dir, "absent", &cluster, &exec("no-such-get-token"), "");
    let (kubectl, ours) = both(
        &c,
        &["--kubeconfig", absent.to_str().unwrap()],
        &[],
        Duration::from_secs(5),
    );
    for run in [&kubectl, &ours] {
        assert!(
            run.stderr.contains("Unable to connect to the server: getting credentials: exec: executable no-such-get-token not found")
                && run.stderr.contains("install it with: apt-get install get-token"),
            "{run:?}"
        );
    }
    assert_no_secret(&ours, &[PLUGIN_TOKEN, PLUGIN_ARG, PLUGIN_ENV]);
}

/// Debian's tinyproxy on a free loopback port, logging each CONNECT.
pub(crate) struct Proxy {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Proxy {
    pub(crate) fn start(dir: &Path) -> Proxy {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = dir.join("tinyproxy.log");
        let conf = dir.join("tinyproxy.conf");
        // No ConnectPort line: CONNECT to any port (the sandbox's is random).
        std::fs::write(
            &conf,
            format!(
                "Port {port}\nListen 127.0.0.1\nTimeout 30\nLogFile \"{}\"\nLogLevel Connect\nMaxClients 20\nAllow 127.0.0.1\n",
                log.display()
            ),
        )
        .unwrap();
        let child = Command::new("tinyproxy")
            .args(["-d", "-c", conf.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tinyproxy is installed (.ci/run installs it from Debian)");
        listening(port, "tinyproxy");
        Proxy { child, port, log }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How many tunnels it opened to `host`.
    pub(crate) fn tunnels_to(&self, host: &str) -> usize {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines()
            .filter(|l| l.contains(&format!("CONNECT {host}:")))
            .count()
    }
}

/// Waits for `what` to listen on a loopback port (10 s at most).
fn listening(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// This machine's name, which resolves to a loopback address (as
/// /etc/hosts has it) but is not `localhost` or an IP literal, so Go's
/// rules send it through a proxy.
pub(crate) fn hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let loopback = (name.as_str(), 443)
        .to_socket_addrs()
        .is_ok_and(|mut a| a.all(|a| a.ip().is_loopback()));
    assert!(
        loopback,
        "the host name {name:?} must resolve to loopback (/etc/hosts)"
    );
    name
}

#[test]
fn proxies_are_used_as_kubectl_uses_them() {
    let c = https_cluster();
    let dir = c.dir.path();
    let proxy = Proxy::start(dir);
    let (server, ca) = c.server_and_ca();
    let port = server.rsplit(':').next().unwrap().to_string();
    let token = indent(&[format!("token: {TOKEN}")]);
    // A kubeconfig's proxy-url: every request goes through it, loopback too.
    let with_url = kubeconfig(
        dir,
        "proxy-url",
        &indent(&[
            format!("server: {server}"),
            format!("certificate-authority-data: {ca}"),
            format!("proxy-url: {}", proxy.url()),
        ]),
        &token,
        "",
    );
    let w = with_url.to_str().unwrap();
    let before = proxy.tunnels_to("127.0.0.1");
    c.kubectl(&["--kubeconfig", w, "get", "nodes"]).success();
    let kubectl_tunnels = proxy.tunnels_to("127.0.0.1") - before;
    assert!(kubectl_tunnels > 0);
    let before = proxy.tunnels_to("127.0.0.1");
    c.maintain(&["status", "--kubeconfig", w]).success();
    assert!(
        proxy.tunnels_to("127.0.0.1") > before,
        "ours went through the proxy-url"
    );
    // HTTPS_PROXY: a named server goes through it, loopback never does,
    // and NO_PROXY is honoured.
    let host = hostname();
    let named = kubeconfig(
        dir,
        "named",
        &indent(&[
            format!("server: https://{host}:{port}"),
            "tls-server-name: localhost".into(),
            format!("certificate-authority-data: {ca}"),
        ]),
        &token,
        "",
    );
    let n = named.to_str().unwrap();
    let env = [("HTTPS_PROXY", proxy.url())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    c.kubectl_env(&["--kubeconfig", n, "get", "nodes"], &env)
        .success();
    let via_kubectl = proxy.tunnels_to(&host);
    assert!(via_kubectl > 0, "kubectl went through HTTPS_PROXY");
    c.maintain_env(&["status", "--kubeconfig", n], &env)
        .success();
    let via_ours = proxy.tunnels_to(&host);
    assert!(via_ours > via_kubectl, "ours went through HTTPS_PROXY");
    let mut no_proxy = env.clone();
    no_proxy.push(("NO_PROXY", host.as_str()));
    c.maintain_env(&["status", "--kubeconfig", n], &no_proxy)
        .success();
    c.kubectl_env(&["--kubeconfig", n, "get", "nodes"], &no_proxy)
        .success();
    assert_eq!(
        proxy.tunnels_to(&host),
        via_ours,
        "NO_PROXY names the server"
    );
    let loopback_before = proxy.tunnels_to("127.0.0.1");
    c.maintain_env(&["status"], &env).success();
    assert_eq!(
        proxy.tunnels_to("127.0.0.1"),
        loopback_before,
        "loopback is never proxied"
    );
    // A proxy that is not there: fails at once, naming no credential.
    let dead = [("HTTPS_PROXY", "http://user:proxy-PASS-7a@127.0.0.1:1")];
    let start = Instant::now();
    let out = c.maintain_env(
        &["drain", "n1", "--dry-run=client", "--kubeconfig", n],
        &dead,
    );
    assert!(start.elapsed() < Duration::from_secs(5), "{out:?}");
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("Unable to connect to the server: proxyconnect"),
        "{out:?}"
    );
    assert_no_secret(&out, &["proxy-PASS-7a", TOKEN]);
}

/// A CA that signed nothing the sandbox serves.
const OTHER_CA: &str = "-----BEGIN CERTIFICATE-----
MIIBdzCCAR2gAwIBAgIUPlJWOO3Kfnafw3HiYsOFiSGZ9lkwCgYIKoZIzj0EAwIw
EDEOMAwGA1UEAwwFb3RoZXIwIBcNMjYxMTI4MDEwNjQxWhgPMjEyNjExMDQwMTA2
NDFaMBAxDjAMBgNVBAMMBW90aGVyMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
dHTIHCsO9CcPXb4xrkl0MWIVOYm3Ejrda/5JZ54MeuQ0BD+gqIy4G5pV1mTQPnTi
tWmi2T24Q9lusZE1XM3JZ6NTMFEwHQYDVR0OBBYEFA/7YDU3Z9npgkrD0vjXORdH
jP/MMB8GA1UdIwQYMBaAFA/7YDU3Z9npgkrD0vjXORdHjP/MMA8GA1UdEwEB/wQF
MAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgaWhZ/jNnQZo5pxbuMIV6DSkspTPrtE8E
rkHIh8gCRf4CIQDbPcwiR05+cxBR+CilaOQQz0060aoVouXVA/r9uWJAFA==
-----END CERTIFICATE-----
";

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

/// A SOCKS5 proxy that takes a login (RFC 1929), as Debian's microsocks
/// with `-u`/`-P`: the login from the proxy URL is sent, a wrong one is
/// refused, beside kubectl on the same kubeconfig.
#[test]
fn a_socks5_proxy_with_a_login_is_used_as_kubectl_uses_it() {
    const PASSWORD: &str = "sock-pass-3e9a";
    let c = https_cluster();
    let dir = c.dir.path();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut socks = Command::new("microsocks")
        .args([
            "-i",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-u",
            "ops",
            "-P",
            PASSWORD,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("microsocks is installed (scripts/test.sh installs it from Debian)");
    listening(port, "microsocks");
    let (server, ca) = c.server_and_ca();
    let token = indent(&[format!("token: {TOKEN}")]);
    let with = |name: &str, login: &str| {
        kubeconfig(
            dir,
            name,
            &indent(&[
                format!("server: {server}"),
                format!("certificate-authority-data: {ca}"),
                format!("proxy-url: socks5://{login}@127.0.0.1:{port}"),
            ]),
            &token,
            "",
        )
    };
    let good = with("socks-login", &format!("ops:{PASSWORD}"));
    let g = good.to_str().unwrap();
    c.kubectl(&["--kubeconfig", g, "get", "nodes"]).success();
    let ours = c.maintain(&["status", "--kubeconfig", g]);
    ours.success();
    assert_no_secret(&ours, &[PASSWORD]);
    let bad = with("socks-wrong", "ops:not-the-password");
    let b = bad.to_str().unwrap();
    let kubectl = c.kubectl(&["--kubeconfig", b, "get", "nodes"]);
    assert_ne!(kubectl.code, 0);
    let ours = c.maintain(&["status", "--kubeconfig", b]);
    assert_ne!(ours.code, 0, "{ours:?}");
    let words = "username/password authentication failed";
    assert!(ours.stderr.contains(words), "{ours:?}");
    assert!(kubectl.stderr.contains(words), "{kubectl:?}");
    assert_no_secret(&ours, &["not-the-password", PASSWORD]);
    let _ = socks.kill();
    let _ = socks.wait();
}

/// A cluster behind a path prefix, as Rancher's proxy serves a downstream
/// cluster (`https://rancher/k8s/clusters/ID`): the real kubectl and ours
/// keep the prefix on every request, watches included, and a request
/// without it finds nothing (404), as the proxy answers it.
#[test]
fn a_server_path_prefix_is_kept_on_every_request_as_kubectl_keeps_it() {
    let scenario = crate::scenario::Scenario::new()
        .node("n1")
        .node("n2")
        .deployment("web", 2)
        .yaml();
    let c = Cluster::start_with(&scenario, 33, |cfg| {
        cfg.path_prefix = Some("/k8s/clusters/c-m-4xk2p".into());
    });
    c.wait_settled();
    assert!(c.sandbox.url().ends_with("/k8s/clusters/c-m-4xk2p"));
    let theirs = c.kubectl(&["get", "nodes", "-o", "name"]);
    theirs.success();
    assert!(theirs.stdout.contains("node/n1"), "{theirs:?}");
    let mark = c.mark();
    let ours = c.maintain(&[
        "drain",
        "n1",
        "--ignore-daemonsets",
        "--yes",
        "--timeout",
        "30s",
    ]);
    ours.success();
    let asked = c.requests();
    let ours_asked: Vec<_> = asked[mark..]
        .iter()
        .filter(|e| e.user_agent.starts_with("kubectl-maintain/"))
        .collect();
    assert!(
        ours_asked.iter().any(|e| e.query.contains("watch")),
        "a watch through the prefix: {ours_asked:?}"
    );
    assert!(
        ours_asked.iter().all(|e| e.status != 404),
        "every request kept the prefix: {ours_asked:?}"
    );
    c.maintain(&["uncordon", "n1"]).success();
    // Without the prefix, nothing is there.
    let (server, _) = c.server_and_ca();
    let bare = server.trim_end_matches("/k8s/clusters/c-m-4xk2p");
    let lost = c.kubectl(&["get", "nodes", "--server", bare]);
    assert!(lost.code != 0, "{lost:?}");
}
