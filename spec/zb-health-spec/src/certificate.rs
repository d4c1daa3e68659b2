//! `kind: certificate`'s warning window: the one syntax of `warn_within`,
//! read by the manifest and usable in code, and the words for the planned
//! `host:port` source.
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

/// Why `address:` is refused: the `host:port` handshake source is planned
/// but needs a TLS library the project has not taken on yet.
pub const ADDRESS_PLANNED: &str = "is the planned `host:port` handshake source of `kind: certificate`, which is not built yet (it needs a TLS library)";

/// What to write instead of `address:` until it is built.
pub const ADDRESS_HELP: &str = "mount the certificate (e.g. a Kubernetes Secret) and give its PEM file, e.g. `path: /etc/tls/tls.crt`";

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
