//! One credential per process, fetched once and reused, as client-go keeps
//! one (staging/src/k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go:
//! the `Authenticator` caches the ExecCredential until its
//! `expirationTimestamp`, and runs the plugin again once after a 401;
//! transport/token_source.go for a token file, read again when it
//! changes, trimmed as `strings.TrimSpace` trims it).
//!
//! kube-rs runs an exec plugin once per client it builds and again within
//! 60 s of the token's expiry, so a run of several clients and 15-second
//! tokens ran it for nearly every request; and it sends a token file's
//! trailing newline. Here every client of the process (a drain's, a
//! roll's, an in-cluster Job's) shares one [`Credential`] behind a tower
//! layer that sets `Authorization` on each request. A plugin that answers
//! with a client certificate changes the connections instead: each new
//! certificate is a new [`Identity`], on which the client's connections
//! are made again (connections.rs).

use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use futures::future::BoxFuture;
use http::{HeaderValue, Request, Response, StatusCode, header::AUTHORIZATION};
use k8s_openapi::jiff::Timestamp;
use kube::config::{ExecConfig, ExecInteractiveMode};
use secrecy::{ExposeSecret, SecretString};
use tower::{BoxError, Layer, Service};

use super::failure::{CredentialError, Credentials};

/// Where the token comes from.
enum Source {
    Exec(Box<ExecConfig>),
    File(std::path::PathBuf),
}

/// The token in hand, and until when it holds.
struct Cached {
    /// None for a plugin that answered with a client certificate alone.
    token: Option<SecretString>,
    /// Which fetch made it (a 401 names the fetch it refused).
    fetch: u32,
    /// An exec credential's `expirationTimestamp`; none: until a 401.
    expires: Option<Timestamp>,
    /// A token file's modification time and length when read.
    stamp: Option<(SystemTime, u64)>,
    /// When the file was last looked at (at most once a second).
    looked: Instant,
}

/// What a plugin gave besides a token: a client certificate and its key,
/// PEM, which the TLS connections present.
#[derive(Debug, Clone, Default)]
pub(crate) struct Identity {
    pub(crate) certificate: Option<String>,
    pub(crate) key: Option<SecretString>,
}

impl Identity {
    fn same(&self, other: &Identity) -> bool {
        self.certificate == other.certificate
            && self.key.as_ref().map(ExposeSecret::expose_secret)
                == other.key.as_ref().map(ExposeSecret::expose_secret)
    }
}

/// What a request carries from the credential: the `Authorization` header
/// (none for a client certificate alone), and which fetch gave it.
#[derive(Debug)]
pub(crate) struct Sent {
    pub(crate) header: Option<HeaderValue>,
    fetch: u32,
}

/// One credential, shared by every client of the process.
pub(crate) struct Credential {
    source: Source,
    cached: tokio::sync::Mutex<Option<Cached>>,
    /// How many times the plugin ran or the file was read (tests, lines).
    fetches: StdMutex<u32>,
    /// The client certificate the connections present, and how many
    /// times it changed.
    identity: StdMutex<(u64, Identity)>,
}

impl Credential {
    pub(crate) fn exec(config: ExecConfig) -> Credential {
        Credential::new(Source::Exec(Box::new(config)))
    }

    pub(crate) fn file(path: impl Into<std::path::PathBuf>) -> Credential {
        Credential::new(Source::File(path.into()))
    }

    fn new(source: Source) -> Credential {
        Credential {
            source,
            cached: tokio::sync::Mutex::new(None),
            fetches: StdMutex::new(0),
            identity: StdMutex::new((0, Identity::default())),
        }
    }

    /// What the next request carries, from the cache while it holds.
    pub(crate) async fn header(&self) -> Result<Sent, CredentialError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_mut()
            && self.still_holds(c)
        {
            return sent(c);
        }
        let fresh = self.fetch().await?;
        let sent = sent(&fresh);
        *cached = Some(fresh);
        sent
    }

    /// The first fetch, before any client is built: a plugin may answer
    /// with a client certificate, which the connections present.
    pub(crate) async fn first(&self) -> Result<(), CredentialError> {
        let mut cached = self.cached.lock().await;
        *cached = Some(self.fetch().await?);
        Ok(())
    }

    /// The client certificate to connect with, and its generation: one
    /// more each time a fetch brought another.
    pub(crate) fn identity(&self) -> (u64, Identity) {
        self.identity.lock().expect("identity").clone()
    }

    /// The server refused what `sent` carried (401): the next request
    /// fetches again, once, unless another request already did.
    pub(crate) async fn refused(&self, sent: &Sent) {
        let mut cached = self.cached.lock().await;
        if cached.as_ref().is_some_and(|c| c.fetch == sent.fetch) {
            *cached = None;
        }
    }

    fn still_holds(&self, c: &mut Cached) -> bool {
        match &self.source {
            // client-go: valid until it expires (`isExpired`).
            Source::Exec(_) => c.expires.is_none_or(|t| Timestamp::now() < t),
            Source::File(path) => {
                if c.looked.elapsed() < Duration::from_secs(1) {
                    return true;
                }
                c.looked = Instant::now();
                file_stamp(path) == c.stamp
            }
        }
    }

    async fn fetch(&self) -> Result<Cached, CredentialError> {
        let fetch = {
            let mut n = self.fetches.lock().expect("fetches");
            *n += 1;
            *n
        };
        match &self.source {
            Source::Exec(config) => {
                let config = config.as_ref().clone();
                let (mut cached, identity) =
                    tokio::task::spawn_blocking(move || run_plugin(&config))
                        .await
                        .map_err(|_| {
                            CredentialError(Credentials::Other("the plugin did not finish".into()))
                        })??;
                cached.fetch = fetch;
                let mut current = self.identity.lock().expect("identity");
                if !current.1.same(&identity) {
                    *current = (current.0 + 1, identity);
                }
                Ok(cached)
            }
            Source::File(path) => {
                let read = |e: std::io::Error| {
                    CredentialError(Credentials::File {
                        path: path.display().to_string(),
                        why: e.to_string(),
                    })
                };
                let stamp = file_stamp(path);
                let text = std::fs::read_to_string(path).map_err(read)?;
                let token = text.trim().to_string();
                if token.is_empty() {
                    return Err(CredentialError(Credentials::File {
                        path: path.display().to_string(),
                        why: "the file holds no token".into(),
                    }));
                }
                Ok(Cached {
                    token: Some(token.into()),
                    fetch,
                    expires: None,
                    stamp,
                    looked: Instant::now(),
                })
            }
        }
    }

    /// How many times the credential was fetched.
    #[cfg(test)]
    pub(crate) fn fetches(&self) -> u32 {
        *self.fetches.lock().expect("fetches")
    }
}

fn file_stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

fn sent(c: &Cached) -> Result<Sent, CredentialError> {
    Ok(Sent {
        header: c.token.as_ref().map(bearer).transpose()?,
        fetch: c.fetch,
    })
}

fn bearer(token: &SecretString) -> Result<HeaderValue, CredentialError> {
    let mut value =
        HeaderValue::from_str(&format!("Bearer {}", token.expose_secret())).map_err(|_| {
            CredentialError(Credentials::Other("the token is not a valid header".into()))
        })?;
    value.set_sensitive(true);
    Ok(value)
}

/// Runs the plugin as client-go does: its args and env, the
/// `KUBERNETES_EXEC_INFO` of its apiVersion, stdin given only when it may
/// ask (`interactiveMode` Always, or IfAvailable on a terminal).
fn run_plugin(config: &ExecConfig) -> Result<(Cached, Identity), CredentialError> {
    use std::io::IsTerminal as _;
    let Some(command) = &config.command else {
        return Err(CredentialError(Credentials::Other(
            "the exec plugin names no command".into(),
        )));
    };
    let interactive = match config.interactive_mode {
        Some(ExecInteractiveMode::Never) => false,
        Some(ExecInteractiveMode::Always) => true,
        _ => std::io::stdin().is_terminal(),
    };
    let api_version = config
        .api_version
        .clone()
        .unwrap_or_else(|| "client.authentication.k8s.io/v1".into());
    let mut spec = serde_json::json!({"interactive": interactive});
    if config.provide_cluster_info
        && let Some(cluster) = &config.cluster
    {
        spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
    }
    let info =
        serde_json::json!({"apiVersion": api_version, "kind": "ExecCredential", "spec": spec});
    let mut cmd = std::process::Command::new(command);
    cmd.args(config.args.iter().flatten());
    for env in config.env.iter().flatten() {
        if let (Some(name), Some(value)) = (env.get("name"), env.get("value")) {
            cmd.env(name, value);
        }
    }
    for name in config.drop_env.iter().flatten() {
        cmd.env_remove(name);
    }
    cmd.env("KUBERNETES_EXEC_INFO", info.to_string());
    cmd.stdout(std::process::Stdio::piped());
    if interactive {
        cmd.stdin(std::process::Stdio::inherit())
            .stderr(std::process::Stdio::inherit());
    } else {
        cmd.stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
    }
    let out = cmd.output().map_err(|e| {
        CredentialError(if e.kind() == std::io::ErrorKind::NotFound {
            Credentials::NotFound
        } else {
            Credentials::Other("the plugin could not be started".into())
        })
    })?;
    if !out.status.success() {
        return Err(CredentialError(Credentials::Exited {
            code: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
        }));
    }
    let answer: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|_| CredentialError(Credentials::BadOutput))?;
    let status = &answer["status"];
    let text = |field: &str| {
        status[field]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let identity = Identity {
        certificate: text("clientCertificateData"),
        key: text("clientKeyData").map(SecretString::from),
    };
    let token = text("token");
    if token.is_none() && identity.certificate.is_none() {
        return Err(CredentialError(Credentials::BadOutput));
    }
    let expires = match text("expirationTimestamp") {
        Some(t) => Some(
            t.parse::<Timestamp>()
                .map_err(|_| CredentialError(Credentials::BadOutput))?,
        ),
        None => None,
    };
    Ok((
        Cached {
            token: token.map(SecretString::from),
            fetch: 0,
            expires,
            stamp: None,
            looked: Instant::now(),
        },
        identity,
    ))
}

/// Sets each request's `Authorization` from the shared credential, and
/// tells it of a 401 so that the next request fetches again.
#[derive(Clone)]
pub(crate) struct AuthLayer(pub(crate) Arc<Credential>);

impl<S> Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> AuthService<S> {
        AuthService {
            credential: self.0.clone(),
            inner,
        }
    }
}

#[derive(Clone)]
pub(crate) struct AuthService<S> {
    credential: Arc<Credential>,
    inner: S,
}

impl<S, B, RB> Service<Request<B>> for AuthService<S>
where
    S: Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Send + 'static,
    RB: Send + 'static,
{
    type Response = Response<RB>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<RB>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let credential = self.credential.clone();
        // The clone waits for readiness; the ready one takes this request.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let sent = credential.header().await?;
            if let Some(header) = &sent.header {
                request.headers_mut().insert(AUTHORIZATION, header.clone());
            }
            let response = inner.call(request).await.map_err(Into::into)?;
            if response.status() == StatusCode::UNAUTHORIZED {
                credential.refused(&sent).await;
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(dir: &std::path::Path, body: &str) -> ExecConfig {
        let path = dir.join("plugin.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::process::Command::new("chmod")
            .args(["+x", path.to_str().unwrap()])
            .status()
            .unwrap();
        ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1".into()),
            command: Some(path.display().to_string()),
            args: None,
            env: None,
            drop_env: None,
            interactive_mode: Some(ExecInteractiveMode::Never),
            provide_cluster_info: false,
            cluster: None,
            install_hint: None,
            other: std::collections::BTreeMap::default(),
        }
    }

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("credential-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[tokio::test]
    async fn a_plugin_runs_once_until_its_token_expires_or_is_refused() {
        let d = dir("exec");
        let later = (Timestamp::now() + Duration::from_secs(3600)).to_string();
        let c = Credential::exec(plugin(
            &d,
            &format!(
                r#"echo '{{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{{"token":"t1","expirationTimestamp":"{later}"}}}}'"#
            ),
        ));
        let bearer = |sent: &Sent| sent.header.clone().unwrap();
        let first = c.header().await.unwrap();
        for _ in 0..5 {
            assert_eq!(bearer(&c.header().await.unwrap()), "Bearer t1");
        }
        assert_eq!(c.fetches(), 1);
        // A 401 for this fetch's token: one run, which a second 401 for
        // the same (older) fetch does not repeat.
        c.refused(&first).await;
        c.header().await.unwrap();
        assert_eq!(c.fetches(), 2);
        c.refused(&first).await;
        c.header().await.unwrap();
        c.header().await.unwrap();
        assert_eq!(c.fetches(), 2);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[tokio::test]
    async fn a_plugins_certificate_is_a_new_identity_only_when_it_changes() {
        let d = dir("cert");
        let past = (Timestamp::now() - Duration::from_secs(1)).to_string();
        // Each run answers the certificate the file holds, already expired.
        let held = d.join("cert.pem");
        std::fs::write(&held, "CERT-1").unwrap();
        let c = Credential::exec(plugin(
            &d,
            &format!(
                r#"printf '{{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{{"clientCertificateData":"%s","clientKeyData":"KEY","expirationTimestamp":"{past}"}}}}' "$(cat {})""#,
                held.display()
            ),
        ));
        assert_eq!(c.identity().0, 0);
        c.first().await.unwrap();
        let (generation, identity) = c.identity();
        assert_eq!(
            (generation, identity.certificate.as_deref()),
            (1, Some("CERT-1"))
        );
        let sent = c.header().await.unwrap();
        assert!(sent.header.is_none(), "no token, no Authorization");
        assert_eq!(c.identity().0, 1, "the same certificate again");
        std::fs::write(&held, "CERT-2").unwrap();
        c.header().await.unwrap();
        let (generation, identity) = c.identity();
        assert_eq!(
            (generation, identity.certificate.as_deref()),
            (2, Some("CERT-2"))
        );
        assert_eq!(c.fetches(), 3);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[tokio::test]
    async fn an_expired_token_is_fetched_again() {
        let d = dir("expired");
        let past = (Timestamp::now() - Duration::from_secs(1)).to_string();
        let c = Credential::exec(plugin(
            &d,
            &format!(
                r#"echo '{{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{{"token":"t","expirationTimestamp":"{past}"}}}}'"#
            ),
        ));
        c.header().await.unwrap();
        c.header().await.unwrap();
        assert_eq!(c.fetches(), 2);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[tokio::test]
    async fn a_failing_plugin_is_told_with_its_code_and_stderr() {
        let d = dir("fails");
        let c = Credential::exec(plugin(&d, "echo 'idp down' >&2; exit 3"));
        let e = c.header().await.unwrap_err();
        assert_eq!(
            e.0,
            Credentials::Exited {
                code: Some(3),
                stderr: "idp down".into()
            }
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[tokio::test]
    async fn a_token_file_is_trimmed_and_read_again_when_it_changes() {
        let d = dir("file");
        let path = d.join("token");
        std::fs::write(&path, "tok-1\n").unwrap();
        let c = Credential::file(&path);
        let bearer = |sent: Sent| sent.header.unwrap();
        assert_eq!(bearer(c.header().await.unwrap()), "Bearer tok-1");
        std::fs::write(&path, "tok-22\n").unwrap();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(bearer(c.header().await.unwrap()), "Bearer tok-22");
        assert_eq!(c.fetches(), 2);
        std::fs::remove_file(&path).unwrap();
        let e = Credential::file(&path).header().await.unwrap_err();
        assert!(matches!(e.0, Credentials::File { .. }), "{e:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
