//! The rules of `kind: redis`: which URLs the Redis probe can connect to.
//! One place, read by the manifest reader (a located error), the runtime's
//! `RedisProbe` (a refused construction) and the schema test.
//!
//! The probe takes `redis://[user:password@]host[:port][/db]`:
//!
//! * the port defaults to [`DEFAULT_PORT`], the database to `0`;
//! * a password, with or without a user name (`redis://:pw@h` or
//!   `redis://app:pw@h`), is sent with `AUTH` when the connection opens;
//!   a character that has a meaning in a URL (`@`, `:`, `/`, `%`, …) is
//!   written percent-encoded, `%40` for `@`;
//! * `rediss://` is refused: the Redis probe has no TLS client, so a TLS
//!   server could never be checked; so are a Unix socket, a `?query` (the
//!   probe reads no options from one) and a `#fragment`.

use std::fmt;

use crate::upstream::{UrlProblem, percent_decode, split_authority, split_scheme};

/// Redis's port, when the URL names none.
pub const DEFAULT_PORT: u16 = 6379;

/// How a Redis URL is written, the help of every malformed one.
const HELP: &str =
    "write a `redis://[user:password@]host:port[/db]` URL, e.g. `redis://cache:6379/0`";

/// A Redis probe's URL taken apart. Its `Debug` shows the password as
/// `***`, so a logged value never carries it.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl {
    /// The host name or address, an IPv6 literal without its brackets.
    pub host: String,
    /// The port, [`DEFAULT_PORT`] when the URL names none.
    pub port: u16,
    /// The database to `SELECT`, `0` when the URL names none.
    pub db: u32,
    /// The user name for `AUTH`, percent-decoded; `None` when empty.
    pub username: Option<String>,
    /// The password for `AUTH`, percent-decoded; `None` when absent or
    /// empty.
    pub password: Option<String>,
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisUrl")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("db", &self.db)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .finish()
    }
}

/// Checks that `url` is one the Redis probe can connect to (see the
/// [module docs](self)) and takes it apart. The URL is never shown back
/// here, since it may hold a password: the caller shows it through
/// [`without_password`](crate::upstream::without_password).
///
/// # Errors
///
/// What is wrong: not a URL, not `redis://` (`rediss://` among them), no
/// host, a port or database that is not a number, a query or fragment,
/// user info that is not valid percent-encoded UTF-8.
pub fn parse_url(url: &str) -> Result<RedisUrl, UrlProblem> {
    let problem = |message: &str| UrlProblem {
        message: message.to_owned(),
        help: HELP,
    };
    let (scheme, rest) = split_scheme(url, "redis").map_err(|m| problem(&m))?;
    if scheme.eq_ignore_ascii_case("rediss") {
        return Err(UrlProblem {
            message: "is a `rediss` (TLS) URL, and the Redis probe has no TLS client".to_owned(),
            help: "connect over plain `redis://` (e.g. on the cluster's own network), or check it with a custom probe that brings its own TLS client",
        });
    }
    if !scheme.eq_ignore_ascii_case("redis") {
        return Err(problem(
            "does not start with `redis://` (the probe connects over TCP only)",
        ));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if path.contains('?') {
        return Err(problem(
            "has a `?query`, and the Redis probe reads no options from one",
        ));
    }
    if path.contains('#') {
        return Err(problem("has a `#fragment`, which means nothing to Redis"));
    }
    let db = match path.strip_prefix('/').unwrap_or(path) {
        "" => 0,
        n => n
            .parse::<u32>()
            .map_err(|_| problem("has a path that is not a database number (`/0`, `/1`, …)"))?,
    };
    let parts = split_authority(authority, DEFAULT_PORT).map_err(problem)?;
    let (username, password) = match parts.user_info {
        None => (None, None),
        Some(info) => {
            let (user, pass) = info.split_once(':').unwrap_or((info, ""));
            let decoded = |s: &str| match percent_decode(s, false) {
                Some(d) if d.is_empty() => Ok(None),
                Some(d) => Ok(Some(d)),
                None => Err(problem(
                    "has user info that is not valid percent-encoded UTF-8",
                )),
            };
            (decoded(user)?, decoded(pass)?)
        }
    };
    Ok(RedisUrl {
        host: parts.name.to_owned(),
        port: parts.port,
        db,
        username,
        password,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redis_url_is_taken_apart_with_its_defaults() {
        let url = parse_url("redis://cache").unwrap();
        assert_eq!(
            (url.host.as_str(), url.port, url.db),
            ("cache", DEFAULT_PORT, 0)
        );
        assert_eq!((url.username, url.password), (None, None));
        let url = parse_url("REDIS://app:p%40ss%3Aw@[::1]:7000/3").unwrap();
        assert_eq!((url.host.as_str(), url.port, url.db), ("::1", 7000, 3));
        assert_eq!(url.username.as_deref(), Some("app"));
        assert_eq!(url.password.as_deref(), Some("p@ss:w"));
        let url = parse_url("redis://:s3cret@127.0.0.1:6380/").unwrap();
        assert_eq!(
            (url.username, url.password.as_deref()),
            (None, Some("s3cret"))
        );
        let url = parse_url("redis://app@h").unwrap();
        assert_eq!((url.username.as_deref(), url.password), (Some("app"), None));
    }

    #[test]
    fn urls_the_probe_cannot_use_are_refused_saying_why() {
        for (bad, why) in [
            ("cache:6379", "has no `redis://`"),
            ("redis://ca che", "spaces"),
            ("rediss://h:6380", "no TLS client"),
            ("http://h/", "does not start with `redis://`"),
            ("redis+unix:///tmp/r.sock", "does not start with `redis://`"),
            ("redis://h:port", "port that is not a number"),
            ("redis://h:6379/zero", "not a database number"),
            ("redis://h:6379/0/1", "not a database number"),
            ("redis://h/0?protocol=resp3", "`?query`"),
            ("redis://h/0#x", "`#fragment`"),
            ("redis://:pw@", "has no host"),
            ("redis://u:%zz@h", "percent-encoded"),
            ("redis://[::1/", "malformed `[IPv6]`"),
        ] {
            let problem = parse_url(bad).expect_err(bad);
            assert!(problem.message.contains(why), "{bad}: {}", problem.message);
        }
    }

    #[test]
    fn the_debug_form_never_shows_the_password() {
        let url = parse_url("redis://app:s3cret@h").unwrap();
        let shown = format!("{url:?}");
        assert!(
            !shown.contains("s3cret") && shown.contains("***"),
            "{shown}"
        );
    }
}
