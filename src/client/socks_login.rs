//! SOCKS5 with a login (RFC 1929), the user and password from the proxy
//! URL (`socks5://user:pass@host:1080`), as kubectl dials such a proxy
//! (client-go's `proxy.SOCKS5` with its `Auth`). kube-rs builds its SOCKS5
//! connector without the login, so a proxy that asks for one refuses every
//! connection; for that proxy alone the client's stack is built here, from
//! kube's own parts (`ConfigExt`: the TLS connector, the base URI, the
//! auth and header layers) around hyper-util's `SocksV5::with_auth`, with
//! kube's timeouts and gzip, as kube's builder makes it for every other
//! proxy.

use http::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::SocksV5;
use hyper_util::rt::TokioExecutor;
use kube::client::{ConfigExt, DynBody};
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

/// The proxy's login and its URL without it, when it is a SOCKS5 proxy
/// with a login.
pub(crate) fn login_of(proxy: &Uri) -> Option<(Uri, String, String)> {
    if proxy.scheme_str() != Some("socks5") {
        return None;
    }
    let (user, password) = crate::outbound::login(proxy)?;
    let host = proxy.authority()?.as_str().rsplit_once('@')?.1;
    let bare = Uri::builder()
        .scheme("socks5")
        .authority(host)
        .path_and_query("/")
        .build()
        .ok()?;
    Some((bare, user, password))
}

/// kube's stack under a client's own layers (its builder's
/// `GenericService`, which kube does not export).
pub(crate) type Stack =
    BoxService<http::Request<kube::client::Body>, http::Response<Box<DynBody>>, BoxError>;

/// kube's client stack, through a SOCKS5 proxy that takes a login.
pub(crate) fn stack(
    config: &kube::Config,
    proxy: Uri,
    user: String,
    password: String,
) -> Result<Stack, kube::Error> {
    let mut dial = HttpConnector::new();
    dial.enforce_http(false);
    let socks = SocksV5::new(proxy, dial).with_auth(user, password);
    let https = config.rustls_https_connector_with_connector(socks)?;
    let mut timed = hyper_timeout::TimeoutConnector::new(https);
    timed.set_connect_timeout(config.connect_timeout);
    timed.set_read_timeout(config.read_timeout);
    timed.set_write_timeout(config.write_timeout);
    let http = hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(timed);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .layer(
            tower_http::decompression::DecompressionLayer::new()
                .no_br()
                .no_deflate()
                .no_zstd()
                .gzip(!config.disable_compression),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(http)
        .map_response(|r| {
            r.map(|body| {
                Box::new(http_body_util::BodyExt::map_err(body, BoxError::from)) as Box<DynBody>
            })
        });
    Ok(BoxService::new(service))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_socks_login_is_taken_from_the_url_and_the_url_kept_without_it() {
        let proxy: http::Uri = "socks5://ops:p%40ss@127.0.0.1:1080".parse().unwrap();
        let (bare, user, password) = super::login_of(&proxy).unwrap();
        assert_eq!(bare.to_string(), "socks5://127.0.0.1:1080/");
        assert_eq!((user.as_str(), password.as_str()), ("ops", "p@ss"));
        assert!(super::login_of(&"socks5://127.0.0.1:1080".parse().unwrap()).is_none());
        assert!(super::login_of(&"http://u:p@127.0.0.1:3128".parse().unwrap()).is_none());
    }
}
