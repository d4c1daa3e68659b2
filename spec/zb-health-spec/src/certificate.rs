//! `kind: certificate`'s rules, read by the manifest (a located error) and
//! the runtime's `CertificateProbe` (a refused construction): the one
//! syntax of `warn_within`, and the `host:port` of the handshake source
//! with the server name it sends.
//!
//! A window is a whole number of **days** or **hours**: `14d`, `36h`.
//! Certificates live for months, so the probe deadlines' `ms`/`s`/`m`
//! ([`crate::duration`]) would be the wrong scale here, and a window in
//! minutes is a typo rather than a plan.

use std::time::Duration;

/// The window when the manifest or the code gives none: 14 days, long
/// enough to renew by hand after the first `Degraded`.
pub const DEFAULT_WARN_WITHIN: Duration = Duration::from_secs(14 * DAY);

/// How a window is written, for the help of a malformed one.
pub const WINDOW_SYNTAX: &str =
    "write a whole number of days or hours, e.g. `warn_within: 14d` or `warn_within: 36h`";

/// How an address is written, for the help of a malformed one.
pub const ADDRESS_SYNTAX: &str = "write the TLS server as `host:port`, e.g. `address: shop.example.com:443` or `address: 10.0.0.7:8443` (`[::1]:443` for IPv6)";

/// How a server name is written, for the help of a malformed one.
pub const SERVER_NAME_SYNTAX: &str =
    "write a DNS name, e.g. `server_name: shop.example.com`, or an IP address";

/// The port of an address that names none: HTTPS's.
pub const DEFAULT_PORT: u16 = 443;

/// A handshake source's address taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsAddress {
    /// Where to connect: `host:port`, an IPv6 literal bracketed.
    pub connect: String,
    /// The name the handshake sends (SNI) unless a server name is given:
    /// the host, an IPv6 literal without brackets. An IP address sends no
    /// SNI, as a browser does.
    pub server_name: String,
}

/// Parses a handshake source's `host[:port]` ([`DEFAULT_PORT`] when it
/// names none); the error says what is wrong, and [`ADDRESS_SYNTAX`] how to
/// write it. A URL or user info is refused: the source is a socket, not a
/// request.
pub fn parse_address(text: &str) -> Result<TlsAddress, String> {
    if text.contains("://") {
        return Err(format!("`{text}` is a URL, not a `host:port`"));
    }
    if text.contains(['@', '/', '?', '#']) || text.chars().any(char::is_whitespace) {
        return Err(format!("`{text}` is not a `host:port`"));
    }
    let parts = crate::upstream::split_authority(text, DEFAULT_PORT)
        .map_err(|why| format!("`{text}` {why}"))?;
    if parts.port == 0 {
        return Err(format!("`{text}` has port 0, which no server listens on"));
    }
    check_server_name(parts.name)
        .map_err(|_| format!("`{text}` has a host that is neither a DNS name nor an IP address"))?;
    Ok(TlsAddress {
        connect: parts.connect(),
        server_name: parts.name.to_owned(),
    })
}

/// Checks a server name: an IP address, or a DNS name of labels of
/// letters, digits, `-` and `_` (no label empty, over 63 bytes, or at
/// either end `-`; the last not a number), at most 253 bytes. At least as
/// strict as the TLS client (a runtime test holds them together), so a
/// name the manifest lets through is one the handshake can send.
pub fn check_server_name(name: &str) -> Result<(), String> {
    if name.parse::<std::net::IpAddr>().is_ok() {
        return Ok(());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    // The last label is never a number, decimal or `0x` hex: `1.2.3` or
    // `host.0x7f` is an address written wrong, not a name.
    let numeric = |l: &str| {
        let hex = l.strip_prefix("0x").or_else(|| l.strip_prefix("0X"));
        match hex {
            Some(digits) => digits.bytes().all(|b| b.is_ascii_hexdigit()),
            None => l.bytes().all(|b| b.is_ascii_digit()),
        }
    };
    let last = name.rsplit('.').next().unwrap_or_default();
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) || numeric(last) {
        return Err(format!("`{name}` is neither a DNS name nor an IP address"));
    }
    Ok(())
}

const HOUR: u64 = 3600;
const DAY: u64 = 24 * HOUR;

/// Parses a warning window (see the [module docs](self)); the error says
/// what is wrong, and [`WINDOW_SYNTAX`] how to write it.
pub fn parse_window(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    if digits.is_empty() {
        return Err(format!("`{text}` is not a number of days or hours"));
    }
    let scale = match unit {
        "d" => DAY,
        "h" => HOUR,
        "" => return Err(format!("`{text}` has no unit")),
        other => return Err(format!("`{text}` has an unknown unit `{other}`")),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{text}` is too long a window"))
}

/// A window in the syntax it parses from: `14d` when it is whole days,
/// else hours (rounded down).
pub fn window_text(window: Duration) -> String {
    let secs = window.as_secs();
    if secs.is_multiple_of(DAY) {
        format!("{}d", secs / DAY)
    } else {
        format!("{}h", secs / HOUR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_hours_parse_and_print_back() {
        for (text, secs) in [("14d", 14 * DAY), ("36h", 36 * HOUR), ("0d", 0)] {
            assert_eq!(parse_window(text), Ok(Duration::from_secs(secs)), "{text}");
            assert_eq!(window_text(Duration::from_secs(secs)), text);
        }
        assert_eq!(window_text(DEFAULT_WARN_WITHIN), "14d");
    }

    #[test]
    fn addresses_take_their_port_or_443_and_send_their_host() {
        for (text, connect, name) in [
            (
                "shop.example.com:8443",
                "shop.example.com:8443",
                "shop.example.com",
            ),
            (
                "shop.example.com",
                "shop.example.com:443",
                "shop.example.com",
            ),
            ("10.0.0.7:443", "10.0.0.7:443", "10.0.0.7"),
            ("[::1]:8443", "[::1]:8443", "::1"),
            ("[::1]", "[::1]:443", "::1"),
            (
                "ingress_nginx.svc:443",
                "ingress_nginx.svc:443",
                "ingress_nginx.svc",
            ),
        ] {
            let parsed = parse_address(text).expect(text);
            assert_eq!(parsed.connect, connect, "{text}");
            assert_eq!(parsed.server_name, name, "{text}");
        }
    }

    #[test]
    fn malformed_addresses_and_names_are_refused_with_the_reason() {
        for (text, reason) in [
            ("https://shop:443", "is a URL"),
            ("user@shop:443", "not a `host:port`"),
            ("shop:443/path", "not a `host:port`"),
            ("shop :443", "not a `host:port`"),
            (":443", "has no host"),
            ("shop:https", "port that is not a number"),
            ("shop:0", "port 0"),
            ("[::1:443", "malformed `[IPv6]`"),
            ("-shop:443", "neither a DNS name nor an IP"),
            ("1.2.3:443", "neither a DNS name nor an IP"),
        ] {
            let err = parse_address(text).expect_err(text);
            assert!(err.contains(reason), "{text}: {err}");
        }
        for bad in [
            "",
            "a..b",
            "shop.",
            "sh op",
            &"a".repeat(64),
            "shop.1",
            "h.0x7f",
            "0",
        ] {
            assert!(check_server_name(bad).is_err(), "{bad}");
        }
        for good in [
            "shop",
            "shop.example.com",
            "127.0.0.1",
            "::1",
            "x_y.z",
            "1.2.3.4.com",
            "h.0xz",
        ] {
            assert_eq!(check_server_name(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn malformed_windows_are_refused_with_the_reason() {
        for (text, reason) in [
            ("14", "has no unit"),
            ("2w", "unknown unit `w`"),
            ("14 d", "unknown unit ` d`"),
            ("1.5d", "unknown unit `.5d`"),
            ("soon", "not a number of days or hours"),
            ("-1d", "not a number"),
            ("99999999999999999999d", "too long a window"),
        ] {
            let err = parse_window(text).expect_err(text);
            assert!(err.contains(reason), "{text}: {err}");
        }
    }
}
