//! The rules of `kind: http`, an upstream HTTP dependency: which URLs it
//! can call and which status codes count as healthy. One place, read by
//! the manifest reader (a located error), the runtime's `HttpProbe` (a
//! refused construction) and the schema test. With them, the pieces every
//! URL a probe connects to shares (its scheme and authority read once, its
//! password redacted once), which [`crate::redis`] uses too.

use std::fmt;

/// The status codes an HTTP probe counts as healthy, inclusive at both
/// ends. Written `200-299` (a range) or `204` (one code) in a manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatusRange {
    /// The lowest healthy code.
    pub low: u16,
    /// The highest healthy code.
    pub high: u16,
}

impl StatusRange {
    /// `200-299`, the default, as Xabaril's `HealthChecks.Uris`: a
    /// redirect is not followed, so a 3xx is a failure unless the range
    /// admits it (a redirect to a login page is not the upstream answering).
    pub const DEFAULT: StatusRange = StatusRange {
        low: 200,
        high: 299,
    };

    /// Whether `code` is in the range.
    pub const fn contains(self, code: u16) -> bool {
        self.low <= code && code <= self.high
    }

    /// A range of real status codes (100–599), `low` not above `high`;
    /// otherwise what is wrong, for a message.
    pub fn new(low: u16, high: u16) -> Result<Self, String> {
        for code in [low, high] {
            if !(100..=599).contains(&code) {
                return Err(format!("`{code}` is not an HTTP status code (100-599)"));
            }
        }
        if low > high {
            return Err(format!(
                "the range `{low}-{high}` is empty: its low end is above its high end"
            ));
        }
        Ok(Self { low, high })
    }

    /// Parses `200-299` or `204`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let code = |t: &str| {
            t.trim()
                .parse::<u16>()
                .map_err(|_| format!("`{}` is not a status code", t.trim()))
        };
        match s.split_once('-') {
            Some((low, high)) => Self::new(code(low)?, code(high)?),
            None => {
                let c = code(s)?;
                Self::new(c, c)
            }
        }
    }
}

impl Default for StatusRange {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for StatusRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.low == self.high {
            write!(f, "{}", self.low)
        } else {
            write!(f, "{}-{}", self.low, self.high)
        }
    }
}

/// What is wrong with a URL an HTTP probe cannot call: the message, and
/// the help that says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlProblem {
    /// What is wrong.
    pub message: String,
    /// What to write instead.
    pub help: &'static str,
}

/// A plain `http://` URL taken apart: the one reading of the URLs
/// zb-health calls (an HTTP probe's upstream, the transition webhook, the
/// CLI's `probe` and dashboard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// The host name or address, an IPv6 literal without its brackets.
    pub host: String,
    /// The port, 80 when the URL names none.
    pub port: u16,
    /// The authority without user info, as the `Host` header sends it
    /// (`h:8080`, `[::1]`).
    pub authority: String,
    /// Where to connect: `host:port`, an IPv6 literal bracketed.
    pub connect: String,
    /// The request target: path and query, `/` when the URL has none.
    pub target: String,
    /// Whether the URL carries `user[:password]@`: the HTTP probe sends it
    /// as nothing; the webhook and the CLI refuse it.
    pub user_info: bool,
}

/// Checks that `url` is one zb-health can call,
/// `http://host[:port][/path][?query]`, and takes it apart. `https` is
/// refused: zb-health's HTTP clients have no TLS (only the certificate
/// probe's handshake source carries a TLS client), so an `https` URL could
/// never be called. The URL
/// is never shown back here, since it may hold credentials: the caller
/// shows it through [`without_password`].
///
/// # Errors
///
/// What is wrong: not a URL, not `http`, no host, a port that is not a
/// number, a `#fragment`.
pub fn parse_url(url: &str) -> Result<HttpUrl, UrlProblem> {
    let help = "write an `http://host:port/path` URL, e.g. `http://inventory:8080/health`";
    let problem = |message: &str| UrlProblem {
        message: message.to_owned(),
        help,
    };
    let (scheme, rest) = split_scheme(url, "http").map_err(|m| problem(&m))?;
    if scheme.eq_ignore_ascii_case("https") {
        return Err(UrlProblem {
            message: "is an `https` URL, and zb-health's HTTP clients have no TLS".to_owned(),
            help: "call the upstream over `http://` (e.g. its in-cluster port), or check it with a custom probe that brings its own TLS client",
        });
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(problem("does not start with `http://`"));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, target) = rest.split_at(end);
    if target.contains('#') {
        return Err(problem(
            "has a `#fragment`, which is never sent to the server",
        ));
    }
    let parts = split_authority(authority, 80).map_err(problem)?;
    Ok(HttpUrl {
        host: parts.name.to_owned(),
        port: parts.port,
        authority: parts.host.to_owned(),
        connect: parts.connect(),
        user_info: parts.user_info.is_some(),
        target: match target {
            "" => "/".to_owned(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_owned(),
        },
    })
}

/// `url` as its scheme and the rest, after `://`; otherwise why it is not
/// a URL at all, naming the `expected` scheme, for the caller's message.
pub(crate) fn split_scheme<'a>(url: &'a str, expected: &str) -> Result<(&'a str, &'a str), String> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("is not a URL: it holds spaces or control characters".to_owned());
    }
    url.split_once("://")
        .ok_or_else(|| format!("is not a URL: it has no `{expected}://`"))
}

/// A URL's authority (`[user[:password]@]host[:port]`) taken apart: the
/// one reading of hosts and ports for every URL a probe connects to (an
/// HTTP upstream's, a Redis server's). No `Debug`: the user info may hold
/// a password.
pub(crate) struct Authority<'a> {
    /// The user info before the last `@`, as written (still
    /// percent-encoded), if any.
    pub user_info: Option<&'a str>,
    /// The host and port as written, without the user info.
    pub host: &'a str,
    /// The host name or address, an IPv6 literal without its brackets.
    pub name: &'a str,
    /// The port, or the scheme's default.
    pub port: u16,
}

impl Authority<'_> {
    /// Where to connect: `host:port`, an IPv6 literal bracketed.
    pub fn connect(&self) -> String {
        match self.host.starts_with('[') {
            true => format!("[{}]:{}", self.name, self.port),
            false => format!("{}:{}", self.name, self.port),
        }
    }
}

/// Takes `authority` apart, `default_port` when it names none; otherwise
/// what is wrong with it (no host, a malformed `[IPv6]`, a port that is
/// not a number), for the caller's message.
pub(crate) fn split_authority(
    authority: &str,
    default_port: u16,
) -> Result<Authority<'_>, &'static str> {
    let (user_info, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, authority),
    };
    // An IPv6 literal is bracketed, `[::1]:80`; its colons are not a port's.
    let (name, port) = match host.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((n, "")) => (n, None),
            Some((n, p)) if p.starts_with(':') => (n, Some(&p[1..])),
            _ => return Err("has a malformed `[IPv6]` host"),
        },
        None => match host.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host, None),
        },
    };
    if name.is_empty() {
        return Err("has no host");
    }
    let port = match port {
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| "has a port that is not a number from 0 to 65535")?,
    };
    Ok(Authority {
        user_info,
        host,
        name,
        port,
    })
}

/// `url` with the password of its user info (`user:password@`) replaced by
/// `***`, for messages: the one redaction of every URL the library shows
/// (a database's, an upstream's). A user info without `:` is kept.
pub fn without_password(url: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let Some((scheme, rest)) = url.split_once("://") else {
        return Cow::Borrowed(url);
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return Cow::Borrowed(url);
    };
    match rest[..at].split_once(':') {
        Some((user, _)) => Cow::Owned(format!("{scheme}://{user}:***{}", &rest[at..])),
        None => Cow::Borrowed(url),
    }
}

/// `s` with each `%XX` replaced by its byte, as UTF-8, and each `+` by a
/// space when `plus_as_space` (a query's form encoding; a URL's user info
/// keeps `+`); `None` for a `%` not followed by two hex digits, or bytes
/// that are not UTF-8. The one decoding of every URL part the library
/// reads.
pub(crate) fn percent_decode(s: &str, plus_as_space: bool) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        match b {
            b'%' => {
                let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
                bytes.push(u8::from_str_radix(hex, 16).ok()?);
                rest = &tail[2..];
            }
            b'+' if plus_as_space => bytes.push(b' '),
            b => bytes.push(b),
        }
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_reaches_the_message() {
        for (url, shown) in [
            (
                "postgres://app:s3cret@db:5432/app",
                "postgres://app:***@db:5432/app",
            ),
            ("postgres://app@db/app", "postgres://app@db/app"),
            ("postgres://db/app?user=a", "postgres://db/app?user=a"),
            ("sqlite://orders.db?mode=rwc", "sqlite://orders.db?mode=rwc"),
            ("postgres://a:b@c@db/x", "postgres://a:***@db/x"),
            ("http://u:pw@h:80/p?q", "http://u:***@h:80/p?q"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(without_password(url), shown, "{url}");
        }
    }

    #[test]
    fn a_status_range_is_a_range_of_real_codes() {
        assert_eq!(StatusRange::parse("200-399"), StatusRange::new(200, 399));
        assert_eq!(StatusRange::parse("204"), StatusRange::new(204, 204));
        for bad in ["2xx", "300-200", "99", "200-600", "", "-"] {
            assert!(StatusRange::parse(bad).is_err(), "{bad}");
        }
        assert!(StatusRange::DEFAULT.contains(299) && !StatusRange::DEFAULT.contains(302));
    }

    #[test]
    fn only_plain_http_urls_are_callable() {
        for ok in [
            "http://127.0.0.1:8080/health",
            "http://u:p@inventory/x?y=1",
            "HTTP://h",
            "http://[::1]:80/",
            "http://[::1]/",
        ] {
            assert!(parse_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "not a url",
            "https://h/",
            "ftp://h/",
            "http:///x",
            "http://h:port/",
            "http://h/#top",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        let url = parse_url("http://u:p@[::1]?q=1").unwrap();
        assert_eq!(
            (
                url.authority.as_str(),
                url.connect.as_str(),
                url.target.as_str()
            ),
            ("[::1]", "[::1]:80", "/?q=1")
        );
        let url = parse_url("http://h:8080/a/b").unwrap();
        assert_eq!(
            (url.connect.as_str(), url.target.as_str()),
            ("h:8080", "/a/b")
        );
    }
}
