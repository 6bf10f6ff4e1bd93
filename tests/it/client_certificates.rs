//! Client certificates of every kind kubeadm, k3s and an operator's
//! `openssl` write (issue #63): RSA as PKCS#1 and PKCS#8, EC as SEC1 and
//! PKCS#8, Ed25519; in the kubeconfig as data or as files. The sandbox's
//! CA signs them, as kubeadm's `ca.key` does, and the sandbox
//! authenticates each as its CommonName (kube-apiserver's x509
//! authenticator, which verifies the certificate at every request). The
//! real kubectl and ours on the same kubeconfig: both are let in as the
//! certificate's user; both are refused, in the same words, with a
//! certificate that expired or one another CA signed (401, as
//! kube-apiserver answers them) or a key that is not the certificate's;
//! and both outlive an exec plugin's certificate that ends mid-drain,
//! fetching the next and connecting with it.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use k8s_openapi::jiff::Timestamp;

use crate::harness::{Asked, Cluster, Run};
use crate::scenario::Scenario;

/// `openssl ARGS` in `dir`, which must succeed.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is required (.ci/run installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The key kinds, each as `openssl` makes it, with the PEM header it has.
const KINDS: [(&str, &[&str], &str); 5] = [
    (
        "rsa-pkcs1",
        &["genrsa", "-traditional", "-out", "KEY", "2048"],
        "RSA PRIVATE KEY",
    ),
    (
        "rsa-pkcs8",
        &[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            "KEY",
        ],
        "PRIVATE KEY",
    ),
    (
        "ec-sec1",
        &[
            "ecparam",
            "-name",
            "prime256v1",
            "-genkey",
            "-noout",
            "-out",
            "KEY",
        ],
        "EC PRIVATE KEY",
    ),
    (
        "ec-pkcs8",
        &[
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            "KEY",
        ],
        "PRIVATE KEY",
    ),
    (
        "ed25519",
        &["genpkey", "-algorithm", "ed25519", "-out", "KEY"],
        "PRIVATE KEY",
    ),
];

/// A signing request for `/CN=user/O=system:masters` with `key`, in `csr`.
fn request(dir: &Path, key: &str, user: &str, csr: &str) {
    let subject = format!("/CN={user}/O=system:masters");
    openssl(
        dir,
        &["req", "-new", "-key", key, "-subj", &subject, "-out", csr],
    );
}

/// A key of `kind` in `key`, as openssl writes it.
fn generate_key(dir: &Path, kind: usize, key: &str) {
    let (name, genkey, header) = KINDS[kind];
    let args: Vec<&str> = genkey
        .iter()
        .map(|a| if *a == "KEY" { key } else { a })
        .collect();
    openssl(dir, &args);
    let pem = std::fs::read_to_string(dir.join(key)).unwrap();
    assert!(
        pem.starts_with(&format!("-----BEGIN {header}-----")),
        "{name}: {pem}"
    );
}

/// A key of `kind` and a certificate for `/CN=user/O=system:masters`
/// signed by `ca` (the sandbox's, or another) for `days` (-1: expired).
fn certificate(dir: &Path, kind: usize, user: &str, ca: &str, days: &str) -> (PathBuf, PathBuf) {
    let name = KINDS[kind].0;
    let key = format!("{user}-{name}.key");
    generate_key(dir, kind, &key);
    let (csr, crt) = (format!("{user}-{name}.csr"), format!("{user}-{name}.crt"));
    request(dir, &key, user, &csr);
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &format!("{ca}.crt"),
            "-CAkey",
            &format!("{ca}.key"),
            "-days",
            days,
            "-extfile",
            "client.ext",
            "-out",
            &crt,
        ],
    );
    (dir.join(crt), dir.join(key))
}

/// The sandbox's CA written as kubeadm keeps it (`ca.crt`, `ca.key`), and
/// another CA (`other.crt`, `other.key`) the sandbox does not trust.
fn cas(c: &Cluster) -> &Path {
    let dir = c.dir.path();
    std::fs::write(dir.join("ca.crt"), c.sandbox.ca_pem()).unwrap();
    std::fs::write(dir.join("ca.key"), c.sandbox.ca_key_pem()).unwrap();
    // What kubeadm puts in a client certificate (an X.509 v3 one: webpki,
    // and so the sandbox, refuses the v1 that a bare `openssl x509 -req`
    // makes, which Go would take).
    let ext = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n";
    std::fs::write(dir.join("client.ext"), ext).unwrap();
    // `openssl ca`, whose -enddate takes a second, for certificates that
    // end within a test.
    std::fs::write(dir.join("index.txt"), "").unwrap();
    std::fs::write(dir.join("serial"), "1000\n").unwrap();
    std::fs::write(
        dir.join("ca.cnf"),
        format!(
            "[ca]\ndefault_ca = sandbox\n[sandbox]\ndatabase = index.txt\nnew_certs_dir = .\n\
             serial = serial\ncertificate = ca.crt\nprivate_key = ca.key\ndefault_md = sha256\n\
             policy = any\nunique_subject = no\nx509_extensions = client\n\
             [any]\ncommonName = supplied\norganizationName = optional\n[client]\n{ext}"
        ),
    )
    .unwrap();
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "other.key",
            "-out",
            "other.crt",
            "-subj",
            "/CN=kubernetes",
            "-days",
            "1",
        ],
    );
    dir
}

/// An EC key and a certificate for `/CN=user/O=system:masters` that the
/// sandbox's CA signs, ending at `end` (to the second).
fn certificate_until(dir: &Path, user: &str, end: Timestamp) -> (PathBuf, PathBuf) {
    let (key, csr, crt) = (
        format!("{user}.key"),
        format!("{user}.csr"),
        format!("{user}.crt"),
    );
    generate_key(dir, 2, &key);
    request(dir, &key, user, &csr);
    let end = end.strftime("%Y%m%d%H%M%SZ").to_string();
    openssl(
        dir,
        &[
            "ca", "-batch", "-config", "ca.cnf", "-notext", "-in", &csr, "-out", &crt, "-enddate",
            &end,
        ],
    );
    (dir.join(crt), dir.join(key))
}

/// A kubeconfig whose user is this certificate and key: inline as data,
/// or as files, as kubeadm and k3s write either.
fn kubeconfig(c: &Cluster, name: &str, (crt, key): &(PathBuf, PathBuf), data: bool) -> PathBuf {
    let user = if data {
        let b64 =
            |p: &Path| base64::engine::general_purpose::STANDARD.encode(std::fs::read(p).unwrap());
        format!(
            "{{client-certificate-data: {}, client-key-data: {}}}",
            b64(crt),
            b64(key)
        )
    } else {
        format!(
            "{{client-certificate: {}, client-key: {}}}",
            crt.display(),
            key.display()
        )
    };
    c.kubeconfig_with_user(name, &user)
}

/// The real kubectl (`auth whoami`) and ours (a server-side dry run of a
/// drain) on kubeconfig `kc`: both let in as `user`, ours by its client
/// certificate on every request (the request log says x509), changing
/// nothing. Our run.
fn both_let_in(c: &Cluster, kc: &str, user: &str, what: &str) -> Run {
    let whoami = c.kubectl(&[
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
        "--kubeconfig",
        kc,
    ]);
    whoami.success();
    assert_eq!(whoami.stdout.trim(), user, "kubectl, {what}: {whoami:?}");
    let mark = c.mark();
    let ours = c.maintain(&[
        "drain",
        "n1",
        "--dry-run=server",
        "--ignore-daemonsets",
        "--kubeconfig",
        kc,
    ]);
    assert_eq!(ours.code, 0, "ours, {what}: {ours:?}");
    let asked = c.assert_asked(mark, Asked::NoWrite, what);
    assert!(
        !asked.is_empty() && asked.iter().all(|e| e.auth == "x509" && e.status < 400),
        "{what}: {asked:?}"
    );
    ours
}

#[test]
fn every_kind_of_client_certificate_lets_both_in_as_its_user() {
    let c = Scenario::new().node("n1").deployment("web", 1).start(33);
    c.wait_settled();
    let dir = cas(&c);
    for (kind, (name, _, _)) in KINDS.iter().enumerate() {
        let user = format!("alice-{name}");
        let pair = certificate(dir, kind, &user, "ca", "1");
        let kc = kubeconfig(&c, &format!("{name}.conf"), &pair, kind % 2 == 0);
        let kc = kc.to_str().unwrap();
        both_let_in(&c, kc, &user, name);
    }
}

/// Refused by kube-apiserver, which takes any certificate in the handshake
/// and refuses the request (secure_serving.go, x509.go: 401), or by a TLS
/// front door that verifies it in the handshake (an mTLS load balancer):
/// the real kubectl and ours say the same words for each, which tell which
/// side refused, and never a library's name for it.
#[test]
fn a_client_certificate_refused_is_said_as_kubectl_says_it() {
    for door in [false, true] {
        let scenario = Scenario::new().node("n1").deployment("web", 1).yaml();
        let c = Cluster::start_with(&scenario, 33, |cfg| {
            cfg.verify_client_certificates_in_handshake = door;
        });
        c.wait_settled();
        let dir = cas(&c);
        let expired = certificate(dir, 2, "late", "ca", "-1");
        let stranger = certificate(dir, 3, "stranger", "other", "1");
        let (crt, _) = certificate(dir, 0, "mine", "ca", "1");
        let (_, other_key) = certificate(dir, 1, "theirs", "ca", "1");
        let (late, unknown) = if door {
            (
                "remote error: tls: expired certificate",
                "remote error: tls: unknown certificate authority",
            )
        } else {
            (
                "You must be logged in to the server",
                "You must be logged in to the server",
            )
        };
        for (case, pair, words) in [
            ("expired", expired, late),
            ("another CA's", stranger, unknown),
            (
                "not its key",
                (crt, other_key),
                "tls: private key does not match public key",
            ),
        ] {
            let case = format!("{case}{}", if door { ", at the door" } else { "" });
            let kc = kubeconfig(
                &c,
                &format!("{}.conf", case.replace([' ', ','], "-")),
                &pair,
                true,
            );
            let kc = kc.to_str().unwrap();
            let theirs = c.kubectl(&["get", "nodes", "--kubeconfig", kc]);
            assert!(
                theirs.code != 0 && theirs.stderr.contains(words),
                "kubectl, {case}: {theirs:?}"
            );
            let ours = c.maintain(&["status", "--kubeconfig", kc]);
            assert!(
                ours.code != 0 && ours.stderr.contains(words),
                "ours, {case}: {ours:?}"
            );
            for word in [
                "CertificateExpired",
                "UnknownCA",
                "KeyMismatch",
                "AlertReceived",
            ] {
                assert!(
                    !ours.stderr.contains(word),
                    "a library's name, {case}: {ours:?}"
                );
            }
        }
    }
}

/// An exec plugin that answers with a client certificate and no token
/// (`status.clientCertificateData`, `clientKeyData`), as cloud plugins for
/// certificate-based clusters do: both are let in as its user, and the
/// plugin's answer reaches no output.
#[test]
fn an_exec_plugins_client_certificate_lets_both_in_as_its_user() {
    let c = Scenario::new().node("n1").deployment("web", 1).start(33);
    c.wait_settled();
    let dir = cas(&c);
    let (crt, key) = certificate(dir, 2, "plugged", "ca", "1");
    let json = |p: &Path| serde_json::to_string(&std::fs::read_to_string(p).unwrap()).unwrap();
    let answer = format!(
        "{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"clientCertificateData\":{},\"clientKeyData\":{}}}}}",
        json(&crt),
        json(&key)
    );
    let plugin = dir.join("cert-plugin.sh");
    std::fs::write(&plugin, format!("#!/bin/sh\ncat <<'EOF'\n{answer}\nEOF\n")).unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let kc = crate::credentials::exec_kubeconfig(&c, "cert-plugin.conf", &plugin);
    let kc = kc.to_str().unwrap();
    let ours = both_let_in(&c, kc, "plugged", "an exec plugin's certificate");
    let secret = std::fs::read_to_string(&key).unwrap();
    let body = secret.lines().nth(1).unwrap();
    assert!(
        !ours.stdout.contains(body) && !ours.stderr.contains(body),
        "the key printed"
    );
}

/// A plugin `TOOL-plugin.sh` in `dir` that counts its runs in `TOOL-runs`
/// and answers, on its first run, a certificate for `TOOL-first` that ends
/// 5 s from now (its `expirationTimestamp` a second earlier, as plugins
/// say it), then one for `TOOL-next` that holds an hour. Its kubeconfig,
/// the count's file, the first certificate's end and its key's file.
fn expiring_plugin(c: &Cluster, tool: &str) -> (PathBuf, PathBuf, Timestamp, PathBuf) {
    let dir = c.dir.path();
    let hour = std::time::Duration::from_secs(3600);
    let next = certificate_until(dir, &format!("{tool}-next"), Timestamp::now() + hour);
    let now = Timestamp::now();
    let end = now + std::time::Duration::from_secs(5);
    let first = certificate_until(dir, &format!("{tool}-first"), end);
    let json = |p: &Path| serde_json::to_string(&std::fs::read_to_string(p).unwrap()).unwrap();
    let answer = |(crt, key): &(PathBuf, PathBuf), until: Timestamp| {
        let path = crt.with_extension("json");
        std::fs::write(
            &path,
            format!(
                "{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"clientCertificateData\":{},\"clientKeyData\":{},\"expirationTimestamp\":\"{}\"}}}}",
                json(crt),
                json(key),
                until.strftime("%Y-%m-%dT%H:%M:%SZ")
            ),
        )
        .unwrap();
        path
    };
    let early = answer(&first, end - std::time::Duration::from_secs(1));
    let late = answer(&next, now + hour);
    let count = dir.join(format!("{tool}-runs"));
    let plugin = dir.join(format!("{tool}-plugin.sh"));
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\nn=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}\n\
             if [ $n -eq 1 ]; then cat {early}; else cat {late}; fi\n",
            c = count.display(),
            early = early.display(),
            late = late.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let kc = crate::credentials::exec_kubeconfig(c, &format!("{tool}.conf"), &plugin);
    (kc, count, end, first.1)
}

/// An exec plugin's client certificate that ends while a drain waits on a
/// pod: client-go runs the plugin again when its `expirationTimestamp`
/// passes and connects anew with the next certificate (exec.go,
/// `connTracker.CloseAll`). The real kubectl and ours, each on its own
/// plugin and node: both drain, the plugin runs as often for ours as for
/// kubectl, and every request after the first certificate's end is made
/// with the second, none refused.
#[test]
fn an_exec_plugins_certificate_that_ends_mid_drain_is_fetched_again_and_connected_with() {
    use crate::scenario::owned_by_a_gone_replicaset;
    let c = Scenario::new()
        .node("n1")
        .node("n2")
        .node("spare")
        .pod("apps", "slow-1", "n1", |p| {
            owned_by_a_gone_replicaset(p, 9.0);
        })
        .pod("apps", "slow-2", "n2", |p| {
            owned_by_a_gone_replicaset(p, 9.0);
        })
        .start(33);
    c.wait_settled();
    cas(&c);
    let mut runs = Vec::new();
    for (tool, node) in [("kubectl", "n1"), ("ours", "n2")] {
        let (kc, count, end, key) = expiring_plugin(&c, tool);
        let mark = c.mark();
        let args = [
            "drain",
            node,
            "--ignore-daemonsets",
            "--kubeconfig",
            kc.to_str().unwrap(),
        ];
        let run = if tool == "kubectl" {
            c.kubectl(&args)
        } else {
            c.maintain(&[&args[..], &["--yes"]].concat())
        };
        assert_eq!(run.code, 0, "{tool}: {run:?}");
        let secret = std::fs::read_to_string(&key).unwrap();
        let body = secret.lines().nth(1).unwrap();
        assert!(
            !run.stdout.contains(body) && !run.stderr.contains(body),
            "{tool}: the key printed"
        );
        let asked: Vec<_> = c.requests().into_iter().skip(mark).collect();
        assert!(
            asked.iter().all(|e| e.status != 401),
            "{tool}: a request refused: {asked:?}"
        );
        let after: Vec<_> = asked
            .iter()
            .filter(|e| e.ts.parse::<Timestamp>().unwrap() > end)
            .collect();
        assert!(
            !after.is_empty() && after.iter().all(|e| e.user == format!("{tool}-next")),
            "{tool}: after the first certificate's end ({end}): {after:?}"
        );
        runs.push(
            std::fs::read_to_string(&count)
                .unwrap()
                .trim()
                .parse::<u32>()
                .unwrap(),
        );
    }
    assert!(
        (2..=runs[0]).contains(&runs[1]),
        "the plugin ran {} times for ours, {} for kubectl",
        runs[1],
        runs[0]
    );
}
