//! HTTPS, as every real apiserver serves it: a CA made at start (like
//! kubeadm's `ca.crt`), and a serving certificate it signs for the loopback
//! names (`127.0.0.1`, `::1`, `localhost`, and `kubernetes.default.svc` and
//! its kin, the names kubeadm puts in the apiserver's certificate). Clients
//! trust the CA through the kubeconfig's `certificate-authority-data` or,
//! in a pod, `/var/run/secrets/kubernetes.io/serviceaccount/ca.crt`.
//!
//! The same CA is the client CA (`--client-ca-file`, as kubeadm's
//! `ca.crt` is both): a client may present a certificate it signed, which
//! the handshake verifies (an expired one is refused with the alert
//! kubectl words `remote error: tls: expired certificate`), and the x509
//! authenticator reads (auth/x509.rs). A client without one is asked for
//! nothing more.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio_rustls::TlsAcceptor;

/// The CA clients trust, and the acceptor that serves with its certificate.
pub(crate) struct Tls {
    /// The CA's certificate, PEM.
    pub(crate) ca_pem: String,
    /// The CA's private key, PKCS#8 PEM (kubeadm's `ca.key`): what signs
    /// client certificates.
    pub(crate) ca_key_pem: String,
    pub(crate) acceptor: TlsAcceptor,
}

/// Why TLS could not be set up (never expected: the keys are made here).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    #[error("making the sandbox's certificates: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("the sandbox's TLS settings: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The names the serving certificate holds.
const NAMES: [&str; 7] = [
    "127.0.0.1",
    "::1",
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
];

impl Tls {
    /// A new CA, and a serving certificate signed by it.
    pub(crate) fn generate() -> Result<Tls, TlsError> {
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kube-sandbox-ca");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate()?;
        let ca_key_pem = ca_key.serialize_pem();
        let ca = CertifiedIssuer::self_signed(ca_params, ca_key)?;

        let mut params =
            CertificateParams::new(NAMES.iter().map(|s| (*s).to_string()).collect::<Vec<_>>())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &ca)?;

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone())?;
        let clients =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .allow_unauthenticated()
                .build()
                .map_err(|e| TlsError::Rustls(rustls::Error::General(e.to_string())))?;
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_client_cert_verifier(clients)
            .with_single_cert(
                vec![cert.der().clone(), ca.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )?;
        Ok(Tls {
            ca_pem: ca.pem(),
            ca_key_pem,
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_is_pem_and_the_acceptor_is_made() {
        let tls = Tls::generate().expect("certificates");
        assert!(tls.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
    }
}
