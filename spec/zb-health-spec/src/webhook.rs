//! A transition webhook's URL, checked once for the manifest's
//! `observability.webhook`, the `HEALTH_WEBHOOK_URL` variable and
//! `zb_health::publish::WebhookPublisher::new`.

/// A webhook URL taken apart: `http://host[:port][/path]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    /// The host, without brackets for an IPv6 literal.
    pub host: String,
    /// The port; 80 when the URL names none.
    pub port: u16,
    /// The request target: the path, `/` when the URL has none.
    pub target: String,
}

/// Parses a webhook URL: `http://` (no TLS here), a host, an optional
/// numeric port and path.
///
/// # Errors
///
/// Why `url` is refused, quoting it: not `http://`, no host, user info (a
/// secret in a URL ends up in logs), white space, or a port that is not a
/// number.
pub fn parse_webhook_url(url: &str) -> Result<WebhookUrl, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("`{url}` is not an http:// URL (no TLS here)"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.is_empty() || authority.contains('@') || url.contains(char::is_whitespace) {
        return Err(format!(
            "`{url}` has no host, or has user info or white space"
        ));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (
            host,
            port.parse()
                .map_err(|_| format!("`{url}` has a port that is not a number"))?,
        ),
        None => (authority, 80),
    };
    Ok(WebhookUrl {
        host: host.trim_matches(['[', ']']).to_owned(),
        port,
        target: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_url_is_taken_apart_and_the_rest_refused() {
        let u = parse_webhook_url("http://127.0.0.1:9093/hooks/health").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.target.as_str()),
            ("127.0.0.1", 9093, "/hooks/health")
        );
        let u = parse_webhook_url("http://alerts").unwrap();
        assert_eq!((u.port, u.target.as_str()), (80, "/"));
        for bad in [
            "https://alerts/x",
            "http://",
            "http://user:secret@alerts/x",
            "http://alerts:http/x",
            "http://alerts/a b",
        ] {
            assert!(parse_webhook_url(bad).is_err(), "{bad}");
        }
    }
}
