//! A client certificate as kube-apiserver's x509 authenticator reads one
//! (k8s.io/apiserver pkg/authentication/request/x509/x509.go,
//! `CommonNameUserConversion`): its subject's CommonName is the user, each
//! Organization a group; one without a CommonName authenticates no one,
//! and the request goes on to the other authenticators. The handshake took
//! any certificate (apiserver/tls.rs); each request's is verified here
//! against the client CA at the sandbox's time, as x509.go's
//! `AuthenticateRequest` verifies the chain per request, and one that
//! fails is an error that refuses the request (401) unless a token
//! authenticates it (the union authenticator goes on past an error).

use rustls::pki_types::{CertificateDer, UnixTime};

use super::UserInfo;

/// What a connection's client certificate says of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Presented {
    /// None presented, or one that names no user.
    Nothing,
    /// A verified certificate's user.
    User(UserInfo),
    /// One the client CA did not sign, or not valid now: an error.
    Refused,
}

/// The request's certificate `chain`, which `verified` checks against the
/// client CA at the sandbox's time.
pub(crate) fn authenticate(
    chain: &[CertificateDer<'static>],
    verified: impl FnOnce(&[CertificateDer<'static>], UnixTime) -> bool,
) -> Presented {
    let now = UnixTime::since_unix_epoch(std::time::Duration::from_secs(
        kube_conventions::time::now()
            .as_second()
            .max(0)
            .unsigned_abs(),
    ));
    if !verified(chain, now) {
        return Presented::Refused;
    }
    chain
        .first()
        .and_then(|leaf| user_of(leaf))
        .map_or(Presented::Nothing, Presented::User)
}

/// The user a verified client certificate (DER) names, if any.
fn user_of(certificate: &[u8]) -> Option<UserInfo> {
    let (_, cert) = x509_parser::parse_x509_certificate(certificate).ok()?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .filter(|cn| !cn.is_empty())?
        .to_string();
    let mut groups: Vec<String> = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect();
    // Every authenticated user's group (authenticatorfactory's
    // AuthenticatedGroupAdder).
    groups.push("system:authenticated".into());
    Some(UserInfo { name, groups })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};

    fn certificate(cn: Option<&str>, orgs: &[&str]) -> Vec<u8> {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name = DistinguishedName::new();
        if let Some(cn) = cn {
            params.distinguished_name.push(DnType::CommonName, cn);
        }
        for o in orgs {
            params.distinguished_name.push(DnType::OrganizationName, *o);
        }
        let key = KeyPair::generate().expect("key");
        params.self_signed(&key).expect("cert").der().to_vec()
    }

    #[test]
    fn the_common_name_is_the_user_and_the_organization_its_group() {
        let user = user_of(&certificate(Some("alice"), &["system:masters"])).expect("a user");
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, ["system:masters", "system:authenticated"]);
        assert_eq!(user_of(&certificate(None, &["dev"])), None, "no CommonName");
        assert_eq!(user_of(b"not a certificate"), None);
    }
}
