//! The connections under a client, made again when the credential plugin
//! answers with another client certificate, as client-go does
//! (staging/src/k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go: the
//! TLS config's `GetClientCertificate` asks the authenticator for its
//! current certificate, and a refresh that changed it closes every
//! connection, `connTracker.CloseAll`, so that the next request
//! handshakes with the new one). kube-apiserver verifies a connection's
//! certificate at each request (x509.go), so one kept open past its
//! certificate's end would be refused from then on.
//!
//! The stack below a client's layers is kube's own (its TLS, proxies,
//! base URI and headers: `ClientBuilder::try_from`), or socks_login.rs's
//! for a SOCKS5 proxy with a login; it is built for the certificate in
//! hand and built again, dropping the old connections as their requests
//! end, when [`Credential::identity`] moves to a new generation.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use kube::client::{Body, ClientBuilder, DynBody};
use secrecy::ExposeSecret as _;
use tower::{BoxError, Layer, Service};

use super::credential::{Credential, Identity};
use super::socks_login::Stack;

/// The stack for `config` with the plugin's certificate, if it gave one,
/// in place of the kubeconfig's.
fn stack(config: &kube::Config, identity: &Identity) -> Result<Stack, kube::Error> {
    let mut config = config.clone();
    if let (Some(cert), Some(key)) = (&identity.certificate, &identity.key) {
        use base64::Engine as _;
        let b64 = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
        config.auth_info.client_certificate_data = Some(b64(cert));
        config.auth_info.client_key_data = Some(b64(key.expose_secret()).into());
    }
    match config
        .proxy_url
        .as_ref()
        .and_then(super::socks_login::login_of)
    {
        Some((proxy, user, password)) => super::socks_login::stack(&config, proxy, user, password),
        None => Ok(taken(ClientBuilder::try_from(config)?)),
    }
}

/// The service a builder holds: kube's builder gives its stack only to a
/// layer, so a layer takes it.
fn taken(builder: ClientBuilder<Stack>) -> Stack {
    let slot = Take(Mutex::new(None));
    let _ = builder.with_layer(&slot);
    let stack = slot.0.into_inner().expect("slot");
    stack.expect("a layer is given the stack it wraps")
}

struct Take(Mutex<Option<Stack>>);

impl Layer<Stack> for Take {
    type Service = ();

    fn layer(&self, inner: Stack) {
        *self.0.lock().expect("slot") = Some(inner);
    }
}

/// The stack for the credential's current certificate.
pub(crate) struct Connections {
    config: kube::Config,
    credential: Option<Arc<Credential>>,
    generation: u64,
    stack: Stack,
    /// A certificate the stack could not be built with (a key that is not
    /// its certificate's): the next request fails with it.
    unusable: Option<kube::Error>,
}

impl Connections {
    pub(crate) fn new(
        config: kube::Config,
        credential: Option<Arc<Credential>>,
    ) -> Result<Connections, kube::Error> {
        let (generation, identity) = credential
            .as_ref()
            .map(|c| c.identity())
            .unwrap_or_default();
        let stack = stack(&config, &identity)?;
        Ok(Connections {
            config,
            credential,
            generation,
            stack,
            unusable: None,
        })
    }
}

impl Service<http::Request<Body>> for Connections {
    type Response = http::Response<Box<DynBody>>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Asked after the request took the credential (the layer above
        // the client's buffer), so a certificate fetched for it is used.
        if let Some(credential) = &self.credential {
            let (generation, identity) = credential.identity();
            if generation != self.generation {
                match stack(&self.config, &identity) {
                    Ok(stack) => {
                        self.stack = stack;
                        self.generation = generation;
                        self.unusable = None;
                    }
                    // Not an error of readiness, which would end the
                    // buffer's worker for every later request.
                    Err(e) => self.unusable = Some(e),
                }
            }
        }
        if self.unusable.is_some() {
            return Poll::Ready(Ok(()));
        }
        self.stack.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        if let Some(e) = self.unusable.take() {
            return Box::pin(async move { Err(BoxError::from(e)) });
        }
        self.stack.call(request)
    }
}
