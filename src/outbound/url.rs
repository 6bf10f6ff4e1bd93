//! One URL type for every endpoint that is not the API server (`--notify`,
//! `--pushgateway`, `--block-on-alerts`): what is typed on the command
//! line may carry a login (`https://user:pass@host`) and a secret path (a
//! Slack or Teams webhook's path is its credential). The login is taken
//! out at once and sent as an `Authorization: Basic` header, as Go's
//! net/http does for a URL's userinfo; what is ever shown, in lines,
//! reports, notifications, errors and metrics, is the scheme, host and
//! port alone. Rather than on the command line, where `ps` and shell
//! history keep it, a URL can be given as `env:NAME` (the variable's value)
//! or `file:PATH` (the file's first line): `resolve`.

use std::fmt;

use base64::Engine as _;

/// An http or https endpoint, its credentials apart.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Url {
    /// Without userinfo.
    uri: http::Uri,
    /// `Basic …` from the userinfo, if any.
    auth: Option<http::HeaderValue>,
}

impl Url {
    /// An http(s) URL; `flag` names it in the error, which shows only what
    /// `shown_of` shows.
    pub(crate) fn parse(flag: &str, input: &str) -> Result<Url, String> {
        let refuse = || {
            format!(
                "{flag} {}: an http:// or https:// URL",
                Url::shown_of(input)
            )
        };
        let uri: http::Uri = input.parse().map_err(|_| refuse())?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(refuse());
        }
        let auth = login(&uri).map(|(user, password)| basic(&user, &password));
        let authority = uri.authority().map(|a| a.as_str().to_string());
        let host_port = authority
            .as_deref()
            .map(|a| a.rsplit_once('@').map_or(a, |(_, h)| h).to_string())
            .unwrap_or_default();
        let mut parts = uri.into_parts();
        parts.authority = Some(host_port.parse().map_err(|_| refuse())?);
        let uri = http::Uri::from_parts(parts).map_err(|_| refuse())?;
        Ok(Url { uri, auth })
    }

    /// The same endpoint with `path` (and query) in place of its own path.
    pub(crate) fn with_path(&self, path: &str) -> Url {
        let mut parts = self.uri.clone().into_parts();
        parts.path_and_query = path.parse().ok();
        Url {
            uri: http::Uri::from_parts(parts).unwrap_or_else(|_| self.uri.clone()),
            auth: self.auth.clone(),
        }
    }

    /// The path as given, without a trailing slash.
    pub(crate) fn path(&self) -> &str {
        self.uri.path().trim_end_matches('/')
    }

    /// Where requests go (no credentials in it).
    pub(crate) fn uri(&self) -> &http::Uri {
        &self.uri
    }

    /// The `Authorization` header its userinfo makes.
    pub(crate) fn authorization(&self) -> Option<&http::HeaderValue> {
        self.auth.as_ref()
    }

    /// Scheme, host and port: all that is ever shown of it.
    pub(crate) fn shown(&self) -> String {
        let port = self.uri.port().map(|p| format!(":{p}")).unwrap_or_default();
        format!(
            "{}://{}{port}",
            self.uri.scheme_str().unwrap_or("http"),
            self.uri.host().unwrap_or_default()
        )
    }

    /// What may be shown of text that was meant as a URL, parsed or not:
    /// its scheme, host and port, or nothing of it.
    pub(crate) fn shown_of(input: &str) -> String {
        let Some((scheme, rest)) = input.split_once("://") else {
            return "(a URL, not shown)".to_string();
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        format!("{scheme}://{host_port}")
    }
}

/// The URL a flag's value stands for: `env:NAME` is the variable's value,
/// `file:PATH` the file's first line, anything else itself. An error names
/// the variable or the file, never a value.
pub(crate) fn resolve(flag: &str, input: &str) -> Result<String, String> {
    if let Some(name) = input.strip_prefix("env:") {
        return std::env::var(name)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.trim().to_string())
            .ok_or_else(|| format!("{flag} env:{name}: the variable {name} is not set"));
    }
    if let Some(path) = input.strip_prefix("file:") {
        let text = crate::files::read_text(std::path::Path::new(path))
            .map_err(|e| format!("{flag} file:{path}: cannot be read: {e}"))?;
        return text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
            .ok_or_else(|| format!("{flag} file:{path}: the file is empty"));
    }
    Ok(input.to_string())
}

/// A URL's login, its userinfo percent-decoded: (user, password); the
/// password empty when there is none. An endpoint's and a proxy's alike.
pub(crate) fn login(uri: &http::Uri) -> Option<(String, String)> {
    let userinfo = uri.authority()?.as_str().rsplit_once('@')?.0;
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    Some((decode(user), decode(password)))
}

/// `Basic base64(user:password)`, a sensitive header value.
pub(crate) fn basic(user: &str, password: &str) -> http::HeaderValue {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let mut value = http::HeaderValue::from_str(&format!("Basic {encoded}"))
        .expect("base64 is a valid header value");
    value.set_sensitive(true);
    value
}

impl fmt::Debug for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_becomes_a_header_and_is_never_shown() {
        let u = Url::parse("--block-on-alerts", "http://am:p%40ss@127.0.0.1:9093/x/y").unwrap();
        assert_eq!(u.shown(), "http://127.0.0.1:9093");
        assert_eq!(
            format!("{u:?} {u}"),
            "http://127.0.0.1:9093 http://127.0.0.1:9093"
        );
        assert_eq!(u.uri().to_string(), "http://127.0.0.1:9093/x/y");
        // base64("am:p@ss")
        assert_eq!(
            u.authorization().unwrap().to_str().unwrap(),
            "Basic YW06cEBzcw=="
        );
        assert!(u.authorization().unwrap().is_sensitive());
        let plain = Url::parse("--pushgateway", "https://pgw.example/").unwrap();
        assert_eq!(plain.authorization(), None);
        assert_eq!(
            plain.with_path("/metrics/job/j").uri().to_string(),
            "https://pgw.example/metrics/job/j"
        );
    }

    #[test]
    fn a_url_can_come_from_a_file_and_its_errors_name_only_the_file() {
        let dir = std::env::temp_dir().join(format!("url-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("hook");
        std::fs::write(&file, "\n  https://hooks.slack.com/services/T/B/x  \n").unwrap();
        let given = format!("file:{}", file.display());
        assert_eq!(
            resolve("--notify", &given).unwrap(),
            "https://hooks.slack.com/services/T/B/x"
        );
        assert_eq!(resolve("--notify", "https://a/b").unwrap(), "https://a/b");
        let e = resolve("--notify", "file:/nonexistent/hook").unwrap_err();
        assert!(
            e.starts_with("--notify file:/nonexistent/hook: cannot be read"),
            "{e}"
        );
        let e = resolve("--pushgateway", "env:KUBECTL_MAINTAIN_TEST_UNSET_9c1").unwrap_err();
        assert_eq!(
            e,
            "--pushgateway env:KUBECTL_MAINTAIN_TEST_UNSET_9c1: the variable KUBECTL_MAINTAIN_TEST_UNSET_9c1 is not set"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_refusal_shows_no_path_and_no_login() {
        for bad in [
            "ftp://u:secret@host/hook-secret",
            "https://u:secret@/hook-secret",
            "hooks.slack.com/hook-secret",
        ] {
            let e = Url::parse("--notify", bad).unwrap_err();
            assert!(!e.contains("secret"), "{e}");
        }
        assert_eq!(
            Url::shown_of("https://u:pw@hooks.slack.com/services/T/B/x"),
            "https://hooks.slack.com"
        );
    }
}
