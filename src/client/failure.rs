//! Why a request got no answer, read once from the error's causes, and
//! what that means: a certificate, a handshake or a credential plugin
//! that failed will fail the same way on every try, so they are final at
//! once; a refused connection or a name that does not resolve is final
//! too while nothing has been changed (kubectl fails at once: there is
//! nothing to finish), and retried once the drain has changed something
//! it must see through. The words are kubectl's (k8s.io/kubectl
//! pkg/cmd/util/helpers.go, `StandardErrorMessage`: "The connection to
//! the server … was refused", "Unable to connect to the server: …"; and
//! client-go plugin/pkg/client/auth/exec/exec.go for credential plugins),
//! never the plugin's arguments, environment or output.

use std::error::Error;

use super::kubeconfig::ExecPlugin;

/// The cause of a request that got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoAnswer {
    /// The server (or the proxy) refused the connection.
    Refused,
    /// The server's name does not resolve.
    Unresolved,
    /// No connection could be made in time (a firewall that drops, a
    /// host that is down).
    ConnectTimeout,
    /// The TLS handshake failed: an unknown CA, a name the certificate
    /// does not hold, an expired certificate.
    Tls(String),
    /// The credential plugin (or another credential source) failed.
    Credentials(Credentials),
    /// The proxy would not open a tunnel.
    Proxy(String),
    /// The connection (and its TLS) was made, but the answer's headers did
    /// not come within this long (crate::client::silence).
    Silent(std::time::Duration),
    /// Anything else: a reset, a timeout, a closed connection.
    Other(String),
}

/// A request whose answer did not start in time (crate::client::silence),
/// in Go's net/http words.
#[derive(Debug, thiserror::Error)]
#[error("net/http: request canceled (Client.Timeout exceeded while awaiting headers)")]
pub(crate) struct NoHeaders {
    pub(crate) waited: std::time::Duration,
}

/// A credential that could not be had (crate::client::credential's
/// failure), worded as the other credential failures are.
#[derive(Debug, Clone, thiserror::Error)]
#[error("getting credentials failed")]
pub(crate) struct CredentialError(pub(crate) Credentials);

/// How a credential source failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Credentials {
    /// The plugin ran and exited with this code; what it wrote to stderr.
    Exited { code: Option<i32>, stderr: String },
    /// The plugin is not installed.
    NotFound,
    /// The plugin's output was not a credential.
    BadOutput,
    /// A token file that cannot be read, or holds nothing.
    File { path: String, why: String },
    /// Any other failure of the credentials, kind only.
    Other(String),
}

impl NoAnswer {
    /// Fails the same way on every try.
    pub(crate) fn is_final(&self) -> bool {
        matches!(self, NoAnswer::Tls(_) | NoAnswer::Credentials(_))
    }

    /// Fails at once while nothing has been changed yet.
    pub(crate) fn is_first_contact_final(&self) -> bool {
        self.is_final()
            || matches!(
                self,
                NoAnswer::Refused
                    | NoAnswer::Unresolved
                    | NoAnswer::ConnectTimeout
                    | NoAnswer::Proxy(_)
            )
    }
}

/// Reads the cause from an error and its sources.
pub(crate) fn of(e: &(dyn Error + 'static)) -> NoAnswer {
    let mut cause: Option<&(dyn Error + 'static)> = Some(e);
    let mut proxy = false;
    let mut connecting = false;
    while let Some(c) = cause {
        if c.downcast_ref::<hyper_util::client::legacy::Error>()
            .is_some_and(hyper_util::client::legacy::Error::is_connect)
        {
            connecting = true;
        }
        if let Some(auth) = c.downcast_ref::<kube::client::AuthError>() {
            return NoAnswer::Credentials(credentials(auth));
        }
        if let Some(e) = c.downcast_ref::<CredentialError>() {
            return NoAnswer::Credentials(e.0.clone());
        }
        if let Some(s) = c.downcast_ref::<NoHeaders>() {
            return NoAnswer::Silent(s.waited);
        }
        if let Some(kube::Error::Auth(auth)) = c.downcast_ref::<kube::Error>() {
            return NoAnswer::Credentials(credentials(auth));
        }
        let words = c.to_string();
        if words.starts_with("tunnel error") || words.starts_with("SOCKS error") {
            proxy = true;
            if !words.ends_with("failed to create underlying connection") {
                return NoAnswer::Proxy(words);
            }
        }
        if words.contains("invalid peer certificate")
            || words.contains("certificate not valid for name")
            || words.contains("received fatal alert")
            || words.contains("keys may not be consistent")
        {
            return NoAnswer::Tls(tls_words(&words));
        }
        if words.contains("dns error") || words.contains("failed to lookup address") {
            return NoAnswer::Unresolved;
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused if proxy => {
                    return NoAnswer::Proxy("connection refused".into());
                }
                std::io::ErrorKind::ConnectionRefused => return NoAnswer::Refused,
                std::io::ErrorKind::TimedOut if connecting => return NoAnswer::ConnectTimeout,
                _ => {}
            }
        }
        cause = c.source();
    }
    NoAnswer::Other(innermost(e))
}

fn credentials(e: &kube::client::AuthError) -> Credentials {
    use kube::client::AuthError as A;
    match e {
        A::AuthExecRun { out, .. } => Credentials::Exited {
            code: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
        },
        A::AuthExecStart(io) if io.kind() == std::io::ErrorKind::NotFound => Credentials::NotFound,
        A::AuthExecStart(_) => Credentials::Other("the plugin could not be started".into()),
        A::AuthExecParse(_) | A::ExecPluginFailed => Credentials::BadOutput,
        A::ReadTokenFile(e, path) => Credentials::File {
            path: path.display().to_string(),
            why: e.to_string(),
        },
        A::MissingCommand => Credentials::Other("the exec plugin names no command".into()),
        _ => Credentials::Other("the credentials could not be obtained".into()),
    }
}

/// rustls's words for a handshake that failed, as Go's crypto/tls and x509
/// say them (never a rustls enum name): the server's refusal of our
/// certificate (`received fatal alert: X`) as Go's `remote error: tls: ...`,
/// our refusal of the server's as x509's.
fn tls_words(words: &str) -> String {
    if let Some(alert) = words.split("received fatal alert: ").nth(1) {
        let alert = alert
            .split(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .unwrap_or_default();
        return format!("remote error: tls: {}", go_alert(alert));
    }
    // rustls's `InconsistentKeys::KeyMismatch`, by its name or its words.
    if words.contains("KeyMismatch") || words.contains("key mismatch") {
        // crypto/tls X509KeyPair's words: our own key and certificate.
        return "tls: private key does not match public key (the kubeconfig's client-key is not the client-certificate's)".into();
    }
    let x509 = if words.contains("UnknownIssuer") {
        "x509: certificate signed by unknown authority"
    } else if words.contains("BadSignature") {
        // Go finds a trusted authority of the issuer's name whose key did
        // not sign it (every kubeadm cluster's CA is `CN=kubernetes`).
        "x509: certificate signed by unknown authority (a trusted certificate authority has the issuer's name but did not sign it: check certificate-authority-data)"
    } else if let Some(names) = not_valid_for(words) {
        return format!("tls: failed to verify certificate: x509: {names}");
    } else if words.contains("NotValidForName") {
        "x509: certificate is not valid for the server's name (check --tls-server-name and the server URL)"
    } else if words.contains("Expired") || words.contains("NotValidYet") {
        "x509: certificate has expired or is not yet valid"
    } else if words.contains("CaUsedAsEndEntity") {
        // Go trusts a CA's own certificate served as the server's; rustls
        // (webpki) does not.
        "x509: the server's certificate is a certificate authority's (CA:TRUE), which is refused as a server's own certificate: serve one that this CA signed (kubectl accepts it; docs/usage.md, Differences)"
    } else {
        return format!("tls: {}", innermost_words(words));
    };
    format!("tls: failed to verify certificate: {x509}")
}

/// A TLS alert as Go's crypto/tls alert.go names it: rustls names it in
/// CamelCase (`CertificateExpired`).
fn go_alert(alert: &str) -> String {
    let known = match alert {
        "CertificateExpired" => "expired certificate",
        "CertificateRequired" => "certificate required",
        "BadCertificate" => "bad certificate",
        "UnknownCA" => "unknown certificate authority",
        "CertificateRevoked" => "revoked certificate",
        "CertificateUnknown" => "unknown certificate",
        "UnsupportedCertificate" => "unsupported certificate",
        "HandshakeFailure" => "handshake failure",
        "AccessDenied" => "access denied",
        "DecryptError" => "error decrypting message",
        "ProtocolVersion" => "protocol version not supported",
        "InternalError" => "internal error",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    plain_words(alert).to_ascii_lowercase()
}

/// rustls's `certificate not valid for name "x"; certificate is only
/// valid for DnsName("a") or IpAddress(1.2.3.4)` as Go's x509
/// `HostnameError` says it: the certificate's IP addresses for a name that
/// is an address, its DNS names otherwise (`certificate is valid for a,
/// b, not x`).
fn not_valid_for(words: &str) -> Option<String> {
    let rest = words.split("certificate not valid for name \"").nth(1)?;
    let (name, rest) = rest.split_once('"')?;
    let wants_ip = name.parse::<std::net::IpAddr>().is_ok();
    let valid: Vec<String> = rest
        .split_once("only valid for ")
        .map(|(_, list)| list)
        .unwrap_or_default()
        .split([',', ' '])
        .filter(|w| !w.is_empty() && *w != "or")
        .filter_map(|w| {
            let (kind, value) = w.split_once('(')?;
            let value = value.trim_end_matches(')').trim_matches('"');
            match (kind, wants_ip) {
                ("IpAddress", true) => Some(
                    value
                        .parse::<std::net::IpAddr>()
                        .map_or_else(|_| value.to_string(), |ip| ip.to_string()),
                ),
                ("DnsName", false) => Some(value.to_string()),
                _ => None,
            }
        })
        .collect();
    Some(if valid.is_empty() {
        format!("certificate is not valid for any names, but wanted to match {name}")
    } else {
        format!("certificate is valid for {}, not {name}", valid.join(", "))
    })
}

/// A library's words with its enum names made words: a debug structure
/// (`Other(OtherError(PathLenConstraintViolated))`) becomes its innermost
/// name, and a CamelCase name is split where its case changes
/// (`path len constraint violated`). An operator never reads a type.
fn plain_words(words: &str) -> String {
    let camel = |w: &str| {
        w.len() > 1
            && w.starts_with(|c: char| c.is_ascii_uppercase())
            && w.chars().all(|c| c.is_ascii_alphanumeric())
            && w.chars().any(|c| c.is_ascii_lowercase())
            && w.chars().skip(1).any(|c| c.is_ascii_uppercase())
    };
    let split = |w: &str| {
        let mut out = String::new();
        for (i, c) in w.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push(' ');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    };
    words
        .split(' ')
        .map(|token| {
            // `Name(...)`: a debug structure, told by its innermost name.
            let debug = token.find('(').is_some_and(|i| {
                i > 0
                    && token.starts_with(|c: char| c.is_ascii_uppercase())
                    && token[..i].chars().all(|c| c.is_ascii_alphanumeric())
            });
            if debug {
                let inner = token
                    .trim_end_matches([')', ',', '}', ';'])
                    .rsplit(['(', '{'])
                    .next()
                    .unwrap_or(token);
                return split(inner);
            }
            let core = token.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
            if camel(core) {
                format!("{}{}", split(core), &token[core.len()..])
            } else {
                token.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn innermost_words(words: &str) -> &str {
    words.rsplit(": ").next().unwrap_or(words)
}

fn innermost(e: &(dyn Error + 'static)) -> String {
    let mut last = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last
}

/// Does a TCP connection to `host:port` open within a second?
fn dials(at: &str) -> bool {
    use std::net::ToSocketAddrs as _;
    at.to_socket_addrs().is_ok_and(|mut addrs| {
        addrs.any(|a| {
            std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(1)).is_ok()
        })
    })
}

/// What kubectl says of it, for the server at `server` (a URL); `exec`,
/// the chosen user's credential plugin; `proxy`, the proxy requests go
/// through (shown without credentials).
pub(crate) fn words(
    cause: &NoAnswer,
    server: &str,
    exec: Option<&ExecPlugin>,
    proxy: Option<&str>,
) -> String {
    let unable = "Unable to connect to the server";
    match cause {
        NoAnswer::Refused => format!(
            "The connection to the server {} was refused - did you specify the right host or port?",
            host_port(server)
        ),
        NoAnswer::Unresolved => {
            let host = host_port(server);
            let host = host.rsplit_once(':').map_or(host.as_str(), |(h, _)| h);
            format!("{unable}: dial tcp: lookup {host}: no such host")
        }
        NoAnswer::ConnectTimeout => {
            let at = host_port(server);
            // The connect timeout covers the dial and the TLS handshake
            // alike; which one the server let lapse is told apart here,
            // once, by a dial of its own (never through a proxy).
            if proxy.is_none() && server.starts_with("https://") && dials(&at) {
                format!(
                    "{unable}: net/http: TLS handshake timeout (the server at {at} takes connections but never completes TLS: check that this is the API server's port, and that nothing in between holds the handshake)"
                )
            } else {
                format!("{unable}: dial tcp {at}: i/o timeout")
            }
        }
        // The proxy refused its login: Go's words (x/net/proxy's SOCKS5
        // dialer; net/http's CONNECT answer), and where the login is.
        NoAnswer::Proxy(w) if w.contains("credentials not accepted") => format!(
            "{unable}: socks connect tcp {}->{}: username/password authentication failed (the proxy refused the login in its URL: check its user and password)",
            proxy.map_or_else(|| "(proxy)".to_string(), host_port),
            host_port(server)
        ),
        NoAnswer::Proxy(w) if w.contains("proxy authorization required") => format!(
            "{unable}: proxyconnect tcp {}: Proxy Authentication Required (the proxy refused the login in its URL, or wants one: check its user and password)",
            proxy.map_or_else(|| "(proxy)".to_string(), host_port)
        ),
        NoAnswer::Proxy(w) => format!(
            "{unable}: proxyconnect {}: {w} (the proxy comes from the kubeconfig's proxy-url, else HTTPS_PROXY or HTTP_PROXY; NO_PROXY names what goes direct)",
            proxy.unwrap_or("(proxy)")
        ),
        NoAnswer::Silent(waited) => format!(
            "{unable}: {} (the server at {} takes connections but sent no answer in {} s on any try: check the API server's health and any load balancer or proxy in between; --request-timeout bounds each request)",
            NoHeaders { waited: *waited },
            host_port(server),
            waited.as_secs()
        ),
        NoAnswer::Tls(w) | NoAnswer::Other(w) => format!("{unable}: {}", plain_words(w)),
        NoAnswer::Credentials(c) => {
            let command = exec.map_or("(none)", |e| e.command.as_str());
            match c {
                Credentials::Exited { code, stderr } => {
                    let code = code.map_or_else(|| "a signal".into(), |c| format!("exit code {c}"));
                    let line = format!(
                        "{unable}: getting credentials: exec: executable {command} failed with {code}"
                    );
                    if stderr.is_empty() {
                        line
                    } else {
                        format!("{stderr}\n{line}")
                    }
                }
                Credentials::NotFound => {
                    let hint = exec
                        .and_then(|e| e.install_hint.as_deref())
                        .map(|h| format!("\n\n{h}"))
                        .unwrap_or_default();
                    format!(
                        "{unable}: getting credentials: exec: executable {command} not found\n\n\
                         It looks like you are trying to use a client-go credential plugin that is not installed.\n\n\
                         To learn more about this feature, consult the documentation available at:\n      \
                         https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins{hint}"
                    )
                }
                Credentials::BadOutput => format!(
                    "{unable}: getting credentials: decoding stdout: the output of {command} is not an ExecCredential with a status"
                ),
                Credentials::File { path, why } => {
                    format!(
                        "{unable}: getting credentials: failed to read token file {path:?}: {why}"
                    )
                }
                Credentials::Other(what) => format!("{unable}: getting credentials: {what}"),
            }
        }
    }
}

/// `host:port` as kubectl names a server: the URL's authority.
fn host_port(server: &str) -> String {
    match server.parse::<http::Uri>() {
        Ok(u) => u.authority().map_or_else(
            || server.to_string(),
            |a| {
                a.as_str()
                    .rsplit('@')
                    .next()
                    .unwrap_or_default()
                    .to_string()
            },
        ),
        Err(_) => server.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_unresolved_and_certificates_are_told_in_kubectls_words() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(of(&refused), NoAnswer::Refused);
        assert_eq!(
            words(&NoAnswer::Refused, "https://127.0.0.1:1/", None, None),
            "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"
        );
        let dns = std::io::Error::other("dns error: failed to lookup address information");
        assert_eq!(of(&dns), NoAnswer::Unresolved);
        assert_eq!(
            words(
                &NoAnswer::Unresolved,
                "https://api.invalid:6443",
                None,
                None
            ),
            "Unable to connect to the server: dial tcp: lookup api.invalid: no such host"
        );
        let ca = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "invalid peer certificate: UnknownIssuer",
        );
        let cause = of(&ca);
        assert!(cause.is_final());
        assert_eq!(
            words(&cause, "https://a:6443", None, None),
            "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority"
        );
        for (rustls, go) in [
            (
                "invalid peer certificate: BadSignature",
                "tls: failed to verify certificate: x509: certificate signed by unknown authority (",
            ),
            (
                "received fatal alert: CertificateExpired",
                "remote error: tls: expired certificate",
            ),
            (
                "received fatal alert: CertificateRequired",
                "remote error: tls: certificate required",
            ),
            (
                "received fatal alert: NoApplicationProtocol",
                "remote error: tls: no application protocol",
            ),
        ] {
            let e = std::io::Error::new(std::io::ErrorKind::InvalidData, rustls);
            let said = words(&of(&e), "https://a", None, None);
            assert!(said.contains(go), "{said}");
            for name in ["BadSignature", "Expired", "Required", "Protocol"] {
                assert!(!said.contains(name), "{said}");
            }
        }
        let sni = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            r#"certificate not valid for name "wrong.example"; certificate is only valid for IpAddress(127.0.0.1), DnsName("localhost") or DnsName("kubernetes")"#,
        );
        assert_eq!(
            words(&of(&sni), "https://a", None, None),
            "Unable to connect to the server: tls: failed to verify certificate: x509: certificate is valid for localhost, kubernetes, not wrong.example"
        );
        let ip = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            r#"certificate not valid for name "127.0.0.2"; certificate is only valid for IpAddress(127.0.0.1), IpAddress(0::1) or DnsName("localhost")"#,
        );
        assert_eq!(
            words(&of(&ip), "https://a", None, None),
            "Unable to connect to the server: tls: failed to verify certificate: x509: certificate is valid for 127.0.0.1, ::1, not 127.0.0.2"
        );
        assert!(!NoAnswer::Refused.is_final() && NoAnswer::Refused.is_first_contact_final());
        assert!(!NoAnswer::Other("reset".into()).is_first_contact_final());
    }

    /// No token with a lower-case letter before an upper-case one: no
    /// library type name (`KeyMismatch`, `CaUsedAsEndEntity`) reaches the
    /// operator.
    fn no_type_names(said: &str) -> bool {
        !said.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
            w.as_bytes()
                .windows(2)
                .any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase())
        })
    }

    /// rustls's and webpki's certificate errors, as they reach us in an
    /// error's words: each is told in words, never by its name.
    #[test]
    fn no_tls_failure_is_told_by_its_type_name() {
        let known = [
            "BadEncoding",
            "Expired",
            "ExpiredContext",
            "NotValidYet",
            "NotValidYetContext",
            "Revoked",
            "UnhandledCriticalExtension",
            "UnknownIssuer",
            "UnknownRevocationStatus",
            "ExpiredRevocationList",
            "BadSignature",
            "UnsupportedSignatureAlgorithm",
            "NotValidForName",
            "InvalidPurpose",
            "ApplicationVerificationFailure",
            "CaUsedAsEndEntity",
            "EndEntityUsedAsCa",
            "PathLenConstraintViolated",
            "RequiredEkuNotFound",
            "NameConstraintViolation",
            "MaximumPathDepthExceeded",
            "UnsupportedCertVersion",
            "KeyMismatch",
        ];
        let shapes = |name: &str| {
            [
                format!("invalid peer certificate: {name}"),
                format!("invalid peer certificate: Other(OtherError({name}))"),
                format!("received fatal alert: {name}"),
                format!("tls handshake: {name}"),
            ]
        };
        let check = |name: &str| {
            for words in shapes(name) {
                let e = std::io::Error::new(std::io::ErrorKind::InvalidData, words.clone());
                let said = super::words(&of(&e), "https://a:6443", None, None);
                assert!(no_type_names(&said), "{words} -> {said}");
                assert!(
                    said.starts_with("Unable to connect to the server: "),
                    "{said}"
                );
            }
        };
        for name in known {
            check(name);
        }
        // Names rustls may add: any CamelCase name, in any of the shapes.
        proptest::proptest!(|(humps in proptest::collection::vec("[A-Z][a-z]{1,6}", 2..5))| {
            check(&humps.concat());
        });
        // rustls's own words for a client key that is not its
        // certificate's (`Error::InconsistentKeys(KeyMismatch)`).
        let mismatch = std::io::Error::other("keys may not be consistent: key mismatch");
        assert!(
            words(&of(&mismatch), "https://a", None, None)
                .contains("tls: private key does not match public key"),
        );
        let ca_as_leaf = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))",
        );
        let said = words(&of(&ca_as_leaf), "https://a", None, None);
        assert!(
            said.contains("is a certificate authority's (CA:TRUE)"),
            "{said}"
        );
    }

    #[test]
    fn a_failed_plugin_is_named_with_its_stderr_and_never_its_arguments() {
        let exec = ExecPlugin {
            command: "/usr/bin/get-token".into(),
            install_hint: Some("brew install get-token".into()),
        };
        let exited = NoAnswer::Credentials(Credentials::Exited {
            code: Some(1),
            stderr: "idp unreachable".into(),
        });
        assert_eq!(
            words(&exited, "https://a", Some(&exec), None),
            "idp unreachable\nUnable to connect to the server: getting credentials: exec: executable /usr/bin/get-token failed with exit code 1"
        );
        let missing = words(
            &NoAnswer::Credentials(Credentials::NotFound),
            "https://a",
            Some(&exec),
            None,
        );
        assert!(missing.contains("executable /usr/bin/get-token not found"));
        assert!(missing.ends_with("\n\nbrew install get-token"));
    }
}
