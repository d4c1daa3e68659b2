//! A transition webhook's URL, checked once for the manifest's
//! `observability.webhook`, the `HEALTH_WEBHOOK_URL` variable and
//! `zb_health::publish::WebhookPublisher::new`: the one URL reading
//! ([`crate::upstream::parse_url`]) and one rule of the webhook's own.

use crate::upstream::{HttpUrl, parse_url, without_password};
use crate::{Rule, Violations};

/// Parses a webhook URL: `http://` (no TLS), a host, an optional numeric
/// port, path and query, and no user info: the webhook sends none, and a
/// secret in a URL ends up in logs.
///
/// # Errors
///
/// Why `url` is refused, quoting it with its password as `***`.
pub fn parse_webhook_url(url: &str) -> Result<HttpUrl, String> {
    let shown = without_password(url);
    let parts = parse_url(url).map_err(|p| {
        format!(
            "`{shown}` {}: a webhook goes to an `http://host:port/path` URL",
            p.message
        )
    })?;
    if parts.user_info {
        return Err(format!(
            "`{shown}` has user info, and a secret in a URL ends up in logs"
        ));
    }
    Ok(parts)
}

/// R15 for `observability.webhook`: `url` at `location` is refused unless
/// [`parse_webhook_url`] accepts it. One wording for the manifest's value
/// and a URL given in code; whether it was accepted.
pub fn check_webhook_url<L>(url: &str, location: L, sink: &mut Violations<L>) -> bool {
    let Err(reason) = parse_webhook_url(url) else {
        return true;
    };
    sink.push(
        Rule::ValueType,
        location,
        format!("`observability.webhook`: {reason}"),
        "write the receiver's URL as `http://host:port/path`; `HEALTH_WEBHOOK_URL` overrides it at start",
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_url_is_taken_apart_and_the_rest_refused() {
        let u = parse_webhook_url("http://127.0.0.1:9093/hooks/health").unwrap();
        assert_eq!(
            (u.connect.as_str(), u.target.as_str()),
            ("127.0.0.1:9093", "/hooks/health")
        );
        let u = parse_webhook_url("http://alerts").unwrap();
        assert_eq!((u.port, u.target.as_str()), (80, "/"));
        // An IPv6 receiver: bracketed to connect and in the `Host` header.
        let u = parse_webhook_url("http://[::1]:9093/h").unwrap();
        assert_eq!(
            (u.connect.as_str(), u.authority.as_str()),
            ("[::1]:9093", "[::1]:9093")
        );
        let err = parse_webhook_url("http://user:secret@alerts/x").unwrap_err();
        assert!(
            err.contains("user:***@") && !err.contains("user:secret"),
            "{err}"
        );
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
