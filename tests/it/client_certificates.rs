//! Client certificates of every kind kubeadm, k3s and an operator's
//! `openssl` write (issue #63): RSA as PKCS#1 and PKCS#8, EC as SEC1 and
//! PKCS#8, Ed25519; in the kubeconfig as data or as files. The sandbox's
//! CA signs them, as kubeadm's `ca.key` does, and the sandbox
//! authenticates each as its CommonName (kube-apiserver's x509
//! authenticator). The real kubectl and ours on the same kubeconfig: both
//! are let in as the certificate's user, and both are refused, in the
//! same words, with a certificate that expired, one another CA signed, or
//! a key that is not the certificate's.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;

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

/// A key of `kind` and a certificate for `/CN=user/O=system:masters`
/// signed by `ca` (the sandbox's, or another) for `days` (-1: expired).
fn certificate(dir: &Path, kind: usize, user: &str, ca: &str, days: &str) -> (PathBuf, PathBuf) {
    let (name, genkey, header) = KINDS[kind];
    let key = format!("{user}-{name}.key");
    let args: Vec<&str> = genkey
        .iter()
        .map(|a| if *a == "KEY" { key.as_str() } else { a })
        .collect();
    openssl(dir, &args);
    let pem = std::fs::read_to_string(dir.join(&key)).unwrap();
    assert!(
        pem.starts_with(&format!("-----BEGIN {header}-----")),
        "{name}: {pem}"
    );
    let (csr, crt) = (format!("{user}-{name}.csr"), format!("{user}-{name}.crt"));
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-key",
            &key,
            "-subj",
            &format!("/CN={user}/O=system:masters"),
            "-out",
            &csr,
        ],
    );
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
    std::fs::write(
        dir.join("client.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
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

#[test]
fn a_client_certificate_refused_is_said_as_kubectl_says_it() {
    let c = Scenario::new().node("n1").deployment("web", 1).start(33);
    c.wait_settled();
    let dir = cas(&c);
    let expired = certificate(dir, 2, "late", "ca", "-1");
    let stranger = certificate(dir, 3, "stranger", "other", "1");
    let (crt, _) = certificate(dir, 0, "mine", "ca", "1");
    let (_, other_key) = certificate(dir, 1, "theirs", "ca", "1");
    for (case, pair, words) in [
        ("expired", expired, "remote error: tls: expired certificate"),
        (
            "another CA's",
            stranger,
            "remote error: tls: unknown certificate authority",
        ),
        (
            "not its key",
            (crt, other_key),
            "tls: private key does not match public key",
        ),
    ] {
        let kc = kubeconfig(&c, &format!("{}.conf", case.replace(' ', "-")), &pair, true);
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
