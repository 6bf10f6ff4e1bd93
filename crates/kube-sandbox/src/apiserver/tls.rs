//! HTTPS, as every real apiserver serves it: a CA made at start (like
//! kubeadm's `ca.crt`), and a serving certificate it signs for the loopback
//! names (`127.0.0.1`, `::1`, `localhost`, and `kubernetes.default.svc` and
//! its kin, the names kubeadm puts in the apiserver's certificate). Clients
//! trust the CA through the kubeconfig's `certificate-authority-data` or,
//! in a pod, `/var/run/secrets/kubernetes.io/serviceaccount/ca.crt`.
//!
//! The same CA is the client CA (`--client-ca-file`, as kubeadm's
//! `ca.crt` is both). As kube-apiserver serves
//! (staging/src/k8s.io/apiserver/pkg/server/secure_serving.go: Go's
//! `tls.RequestClientCert` whenever a client CA is set), the handshake asks
//! for a client certificate, takes any, and checks only that the client
//! holds its key; the x509 authenticator verifies it against the CA, at
//! the current time, on every request (auth/x509.rs), so a certificate
//! that expires while its connection is open is refused from then on, and
//! an expired or unknown one is a 401, not a failed handshake. A client
//! without one is asked for nothing more. Behind a front door that
//! verifies certificates itself (`verifyClientCertificatesInHandshake`),
//! the handshake refuses such a certificate with its TLS alert.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::DistinguishedName;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use tokio_rustls::TlsAcceptor;

/// The CA clients trust, and the acceptor that serves with its certificate.
pub(crate) struct Tls {
    /// The CA's certificate, PEM.
    pub(crate) ca_pem: String,
    /// The CA's private key, PKCS#8 PEM (kubeadm's `ca.key`): what signs
    /// client certificates.
    pub(crate) ca_key_pem: String,
    pub(crate) acceptor: TlsAcceptor,
    /// The client CA's verifier, which each request's certificate passes.
    clients: Arc<dyn ClientCertVerifier>,
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
    /// A new CA, and a serving certificate signed by it; `at_the_door`:
    /// client certificates verified in the handshake.
    pub(crate) fn generate(at_the_door: bool) -> Result<Tls, TlsError> {
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
            .with_client_cert_verifier(if at_the_door {
                clients.clone()
            } else {
                Arc::new(RequestClientCert(clients.clone()))
            })
            .with_single_cert(
                vec![cert.der().clone(), ca.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )?;
        Ok(Tls {
            ca_pem: ca.pem(),
            ca_key_pem,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            clients,
        })
    }

    /// Whether the client CA signed `chain`'s first certificate for client
    /// authentication and it holds at `now`.
    pub(crate) fn verify(&self, chain: &[CertificateDer<'static>], now: UnixTime) -> bool {
        chain.split_first().is_some_and(|(leaf, intermediates)| {
            self.clients
                .verify_client_cert(leaf, intermediates, now)
                .is_ok()
        })
    }
}

/// Go's `tls.RequestClientCert`: a certificate is asked for (naming the
/// client CA) and any is taken; the handshake's signature proves the
/// client holds its key, checked as the CA's verifier checks it.
#[derive(Debug)]
struct RequestClientCert(Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_is_pem_and_the_acceptor_is_made() {
        let tls = Tls::generate(false).expect("certificates");
        assert!(tls.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
    }
}
