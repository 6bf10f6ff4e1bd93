//! HTTPS, as every real apiserver serves it: a CA made at start (like
//! kubeadm's `ca.crt`), and a serving certificate it signs for the loopback
//! names (`127.0.0.1`, `::1`, `localhost`, and `kubernetes.default.svc` and
//! its kin, the names kubeadm puts in the apiserver's certificate). Clients
//! trust the CA through the kubeconfig's `certificate-authority-data` or,
//! in a pod, `/var/run/secrets/kubernetes.io/serviceaccount/ca.crt`.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

/// The CA clients trust, and the acceptor that serves with its certificate.
pub(crate) struct Tls {
    /// The CA's certificate, PEM.
    pub(crate) ca_pem: String,
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
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;

        let mut params =
            CertificateParams::new(NAMES.iter().map(|s| (*s).to_string()).collect::<Vec<_>>())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &ca)?;

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone(), ca.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )?;
        Ok(Tls {
            ca_pem: ca.pem(),
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
