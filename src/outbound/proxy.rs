//! Which proxy a request goes through, as kubectl decides it: a cluster's
//! `proxy-url` for every request to that cluster (client-go
//! rest/transport.go: `Config.Proxy` replaces the environment), else the
//! environment as Go's `http.ProxyFromEnvironment` reads it
//! (golang.org/x/net/http/httpproxy/proxy.go): `HTTPS_PROXY` for https
//! targets, `HTTP_PROXY` for http ones (not in a CGI request), upper case
//! first; `NO_PROXY` entries are `*`, IP addresses, CIDR ranges and
//! domains (`example.com` is that host and its subdomains, `.example.com`
//! the subdomains alone), each with an optional port; `localhost` and
//! loopback addresses never go through a proxy. The same rules serve the
//! API server (through kube's `http-proxy` and `socks5` features) and
//! every other endpoint (this module's parent).

use std::net::IpAddr;

/// A proxy setting that cannot be used, in kubectl's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid proxy URL {shown:?}: {why}")]
pub(crate) struct BadProxy {
    /// The setting without its credentials.
    shown: String,
    why: String,
}

/// The proxy for `target`: the cluster's `proxy-url` when it has one,
/// else what `env` (a variable's value by name) says.
pub(crate) fn for_target(
    target: &http::Uri,
    cluster_proxy: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<http::Uri>, BadProxy> {
    if let Some(proxy) = cluster_proxy.filter(|p| !p.is_empty()) {
        return parse(proxy).map(Some);
    }
    let var = |upper: &str| {
        env(upper)
            .or_else(|| env(&upper.to_ascii_lowercase()))
            .filter(|v| !v.is_empty())
    };
    let proxy = match target.scheme_str() {
        Some("https") => var("HTTPS_PROXY"),
        // Go ignores HTTP_PROXY in a CGI request (golang.org/issue/16405).
        Some("http") if env("REQUEST_METHOD").is_none_or(|m| m.is_empty()) => var("HTTP_PROXY"),
        _ => None,
    };
    let Some(proxy) = proxy else {
        return Ok(None);
    };
    if !use_proxy(target, var("NO_PROXY").as_deref().unwrap_or_default()) {
        return Ok(None);
    }
    parse(&proxy).map(Some)
}

/// The process's environment, for `for_target`.
pub(crate) fn environment(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A proxy URL as Go's `parseProxy` takes it: http, https or socks5
/// (socks5h is socks5 resolving names at the proxy, which is what the
/// client's socks5 does); anything without a scheme is http.
fn parse(proxy: &str) -> Result<http::Uri, BadProxy> {
    let with_scheme = match proxy.split_once("://") {
        Some(_) => proxy.to_string(),
        None => format!("http://{proxy}"),
    };
    let with_scheme = match with_scheme.strip_prefix("socks5h://") {
        Some(rest) => format!("socks5://{rest}"),
        None => with_scheme,
    };
    let bad = |why: &str| BadProxy {
        shown: super::Url::shown_of(proxy),
        why: why.to_string(),
    };
    let uri: http::Uri = with_scheme.parse().map_err(|_| bad("not a URL"))?;
    match uri.scheme_str() {
        Some("http" | "https" | "socks5") if uri.host().is_some() => Ok(uri),
        Some("http" | "https" | "socks5") => Err(bad("no host")),
        _ => Err(bad("the scheme must be http, https or socks5")),
    }
}

/// Go's `useProxy`: false for localhost, loopback and what `NO_PROXY`
/// names.
fn use_proxy(target: &http::Uri, no_proxy: &str) -> bool {
    let Some(host) = target.host() else {
        return true;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let port = target
        .port_u16()
        .unwrap_or(if target.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    let ip = host.parse::<IpAddr>().ok();
    if host == "localhost" || ip.is_some_and(|ip| ip.is_loopback()) {
        return false;
    }
    !no_proxy
        .split(',')
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| !e.is_empty())
        .any(|entry| matches(&entry, &host, ip, port))
}

/// Whether one `NO_PROXY` entry names the host and port.
fn matches(entry: &str, host: &str, ip: Option<IpAddr>, port: u16) -> bool {
    if entry == "*" {
        return true;
    }
    if let Some((net, bits)) = entry.split_once('/') {
        return match (net.parse::<IpAddr>(), bits.parse::<u8>(), ip) {
            (Ok(net), Ok(bits), Some(ip)) => in_cidr(ip, net, bits),
            _ => false,
        };
    }
    let (entry_host, entry_port) = split_port(entry);
    let port_ok = entry_port.is_none_or(|p| p == port);
    if let Ok(entry_ip) = entry_host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        return ip == Some(entry_ip) && port_ok;
    }
    let domain = entry_host.strip_prefix('*').unwrap_or(entry_host);
    let matched = match domain.strip_prefix('.') {
        // `.example.com`: the subdomains only.
        Some(_) => host.ends_with(domain),
        // `example.com`: the host and its subdomains.
        None => host == domain || host.ends_with(&format!(".{domain}")),
    };
    matched && port_ok
}

/// `host:port` into its parts; a bare IPv6 address has no port.
fn split_port(entry: &str) -> (&str, Option<u16>) {
    if entry.matches(':').count() > 1 && !entry.starts_with('[') {
        return (entry, None);
    }
    match entry.rsplit_once(':') {
        Some((host, port)) if port.parse::<u16>().is_ok() => (host, port.parse().ok()),
        _ => (entry, None),
    }
}

fn in_cidr(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy(target: &str, cluster: Option<&str>, vars: &[(&str, &str)]) -> Option<String> {
        let env = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        };
        for_target(&target.parse().unwrap(), cluster, &env)
            .unwrap()
            .map(|u| u.to_string())
    }

    #[test]
    fn the_scheme_chooses_the_variable_and_upper_case_wins() {
        let vars = [
            ("HTTPS_PROXY", "http://s:3128"),
            ("https_proxy", "http://lower:3128"),
            ("http_proxy", "p:8080"),
        ];
        assert_eq!(
            proxy("https://api.example:6443", None, &vars).as_deref(),
            Some("http://s:3128/")
        );
        assert_eq!(
            proxy("http://api.example", None, &vars).as_deref(),
            Some("http://p:8080/")
        );
        // A CGI request never takes HTTP_PROXY.
        let cgi = [("HTTP_PROXY", "http://p:1"), ("REQUEST_METHOD", "GET")];
        assert_eq!(proxy("http://api.example", None, &cgi), None);
        assert_eq!(proxy("https://api.example", None, &[]), None);
    }

    #[test]
    fn loopback_and_no_proxy_entries_go_direct() {
        let direct = |target: &str, no: &str| {
            proxy(
                target,
                None,
                &[("HTTPS_PROXY", "http://s:3128"), ("NO_PROXY", no)],
            )
            .is_none()
        };
        assert!(direct("https://127.0.0.1:6443", ""));
        assert!(direct("https://localhost:6443", ""));
        assert!(direct("https://[::1]:6443", ""));
        assert!(direct("https://api.example:6443", "*"));
        assert!(direct("https://api.example:6443", "other.org, example"));
        assert!(direct("https://api.example:6443", "api.example"));
        assert!(direct("https://a.api.example:6443", "api.example"));
        assert!(direct("https://a.api.example:6443", ".api.example"));
        assert!(!direct("https://api.example:6443", ".api.example"));
        assert!(direct("https://a.api.example:6443", "*.api.example"));
        assert!(!direct("https://notapi.example:6443", "api.example"));
        assert!(direct("https://api.example:6443", "api.example:6443"));
        assert!(!direct("https://api.example:6443", "api.example:443"));
        assert!(direct("https://10.1.2.3:6443", "10.0.0.0/8"));
        assert!(!direct("https://11.1.2.3:6443", "10.0.0.0/8"));
        assert!(direct("https://10.1.2.3:6443", "10.1.2.3"));
        assert!(direct("https://[fd00::1]:6443", "fd00::/8"));
        assert!(direct("https://API.Example:6443", "api.example"));
    }

    #[test]
    fn a_clusters_proxy_url_wins_over_the_environment_and_loopback() {
        let vars = [("HTTPS_PROXY", "http://env:3128"), ("NO_PROXY", "*")];
        assert_eq!(
            proxy("https://127.0.0.1:6443", Some("socks5://s:1080"), &vars).as_deref(),
            Some("socks5://s:1080/")
        );
        assert_eq!(
            proxy("https://api:6443", Some("socks5h://s:1080"), &[]).as_deref(),
            Some("socks5://s:1080/")
        );
        let bad = for_target(
            &"https://api:6443".parse().unwrap(),
            Some("ftp://user:pw@p:21"),
            &|_| None,
        )
        .unwrap_err();
        assert!(!bad.to_string().contains("pw"), "{bad}");
    }
}
