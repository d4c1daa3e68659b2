//! The operator's requests: maintenance mode (an operator takes a pod out
//! of rotation without killing it: `ready` answers 503 with a first entry
//! [`MAINTENANCE_ENTRY`]) and a step-down (the active node hands its role
//! over), each for a bounded time with a reason. The limits of a request,
//! one place for the management endpoints that take them and the CLI that
//! sends them.

use std::time::Duration;

use crate::duration::parse_duration;

/// The name of the entry that turns `ready` 503 while the pod is in
/// maintenance. Reserved for it (R9).
pub const MAINTENANCE_ENTRY: &str = "maintenance";

/// The longest reason, in characters. The reason is shown in the entry's
/// description, the history and one log line: a short, fixed phrase
/// ("kernel patch"), never a ticket's text.
pub const MAX_REASON_CHARS: usize = 80;

/// The longest maintenance or step-down: a day. A pod left out of
/// rotation by a forgotten command comes back by itself; a longer window
/// is a new request.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 3600);

/// A field of an operator's request that is missing or wrong: the field's
/// name and what is wrong with it, for a 400 and for the CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field: `reason` or `ttl`.
    pub field: &'static str,
    /// What is wrong, and how to write it.
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

/// Checks a reason: 1 to [`MAX_REASON_CHARS`] characters of text, no
/// control characters (it goes into a log line and a JSON string). Returns
/// it trimmed.
pub fn check_reason(reason: Option<&str>) -> Result<&str, FieldError> {
    let error = |message: String| FieldError {
        field: "reason",
        message,
    };
    let reason = reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| error("required: say why, in a few words (e.g. \"kernel patch\")".into()))?;
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(error(format!(
            "{chars} characters, at most {MAX_REASON_CHARS}: a short fixed phrase, not a ticket's text"
        )));
    }
    if reason.chars().any(char::is_control) {
        return Err(error("no control characters (line breaks, tabs)".into()));
    }
    Ok(reason)
}

/// Checks a time to live: written as the manifest's durations (`90s`,
/// `10m`), above zero and at most [`MAX_TTL`].
pub fn check_ttl(ttl: Option<&str>) -> Result<Duration, FieldError> {
    let error = |message: String| FieldError {
        field: "ttl",
        message,
    };
    let text = ttl
        .ok_or_else(|| error("required: how long, e.g. \"10m\"; it ends by itself then".into()))?;
    let ttl = parse_duration(text).map_err(|e| error(format!("{}; {}", e.message(), e.help())))?;
    check_ttl_value(ttl).map_err(|_| {
        error(format!(
            "`{text}` is not above 0 and at most {}m (a day)",
            MAX_TTL.as_secs() / 60
        ))
    })
}

/// Checks a time to live given as a value (the code form of a request):
/// above zero and at most [`MAX_TTL`].
pub fn check_ttl_value(ttl: Duration) -> Result<Duration, FieldError> {
    if ttl.is_zero() || ttl > MAX_TTL {
        return Err(FieldError {
            field: "ttl",
            message: format!(
                "{} ms is not above 0 and at most {}m (a day)",
                ttl.as_millis(),
                MAX_TTL.as_secs() / 60
            ),
        });
    }
    Ok(ttl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_short_text() {
        assert_eq!(check_reason(Some("  kernel patch ")), Ok("kernel patch"));
        for bad in [
            None,
            Some(""),
            Some("   "),
            Some("a\nb"),
            Some(&*"x".repeat(81)),
        ] {
            assert_eq!(check_reason(bad).unwrap_err().field, "reason", "{bad:?}");
        }
        assert!(check_reason(Some(&"é".repeat(80))).is_ok());
    }

    #[test]
    fn a_ttl_is_above_zero_and_at_most_a_day() {
        assert_eq!(check_ttl(Some("10m")), Ok(Duration::from_secs(600)));
        assert_eq!(check_ttl(Some("1440m")), Ok(MAX_TTL));
        for bad in [None, Some("0s"), Some("1441m"), Some("10"), Some("soon")] {
            assert_eq!(check_ttl(bad).unwrap_err().field, "ttl", "{bad:?}");
        }
    }
}
