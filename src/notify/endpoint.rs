//! Where a notification goes and in which format: `--notify URL`. The
//! format is the URL's scheme prefix (`slack+https://…`, `teams+https://…`,
//! `json+https://…`), or else its host: Slack's incoming webhooks
//! (hooks.slack.com), Microsoft Teams' (Workflows on *.logic.azure.com and
//! *.powerplatform.com, the retired connectors on *.webhook.office.com);
//! anything else gets the generic JSON body (docs/notifications.md).

use crate::outbound::Url;

/// A notification's body format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// The documented `kubectl-maintain.io/v1` JSON.
    Json,
    /// Slack incoming webhook: `{"text": …}`.
    Slack,
    /// Microsoft Teams incoming webhook: a message with an Adaptive Card.
    Teams,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// Where it is POSTed (the prefix taken off).
    pub(crate) url: Url,
    pub(crate) format: Format,
}

impl Endpoint {
    pub(crate) fn parse(input: &str) -> Result<Endpoint, String> {
        let (format, url) = match input.split_once('+') {
            Some((prefix, rest)) if rest.starts_with("http://") || rest.starts_with("https://") => {
                let format = match prefix {
                    "json" => Format::Json,
                    "slack" => Format::Slack,
                    "teams" => Format::Teams,
                    other => {
                        return Err(format!(
                            "--notify {}: {other:?} is not a format (json+, slack+ or teams+ before http(s)://)",
                            Url::shown_of(rest)
                        ));
                    }
                };
                (Some(format), rest)
            }
            _ => (None, input),
        };
        let url = Url::parse("--notify", url).map_err(|e| {
            format!("{e} (with json+, slack+ or teams+ before it to choose the format)")
        })?;
        let host = url.uri().host().unwrap_or_default().to_ascii_lowercase();
        let format = format.unwrap_or(if host == "hooks.slack.com" {
            Format::Slack
        } else if host.ends_with(".webhook.office.com")
            || host.ends_with(".logic.azure.com")
            || host.ends_with(".powerplatform.com")
        {
            Format::Teams
        } else {
            Format::Json
        });
        Ok(Endpoint { url, format })
    }

    /// The URL as messages show it: scheme, host and port only (a webhook's
    /// path is its secret).
    pub(crate) fn shown(&self) -> String {
        format!("{}/…", self.url.shown())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_comes_from_the_prefix_or_the_host() {
        let f = |s: &str| Endpoint::parse(s).unwrap().format;
        assert_eq!(f("https://hooks.slack.com/services/T/B/x"), Format::Slack);
        assert_eq!(
            f("https://acme.webhook.office.com/webhookb2/x"),
            Format::Teams
        );
        assert_eq!(
            f("https://prod-1.westeurope.logic.azure.com:443/workflows/x"),
            Format::Teams
        );
        assert_eq!(f("http://127.0.0.1:9000/hook"), Format::Json);
        assert_eq!(f("slack+http://127.0.0.1:9000/hook"), Format::Slack);
        assert_eq!(f("teams+https://relay.example/x"), Format::Teams);
        assert_eq!(
            Endpoint::parse("json+https://hooks.slack.com/x").unwrap(),
            Endpoint {
                url: Url::parse("--notify", "https://hooks.slack.com/x").unwrap(),
                format: Format::Json
            }
        );
    }

    #[test]
    fn bad_urls_are_refused_and_secrets_not_shown() {
        assert!(
            Endpoint::parse("ftp://x/y")
                .unwrap_err()
                .contains("http://")
        );
        assert!(
            Endpoint::parse("mail+https://x/y")
                .unwrap_err()
                .contains("not a format")
        );
        assert!(Endpoint::parse("hooks.slack.com/x").is_err());
        let e = Endpoint::parse("https://hooks.slack.com/services/T/B/secret").unwrap();
        assert_eq!(e.shown(), "https://hooks.slack.com/…");
    }
}
