//! Durations as the spec writes them (`800ms`, `2s`, `5m`): the parser
//! every manifest key, attribute and environment setting uses, and the
//! bounds the timeout rules (R5) start from: Kubernetes' default timeout,
//! the default probe deadline below it, and the largest deadline.

use std::fmt;
use std::time::Duration;

/// The orchestrator probe timeout assumed when the manifest states none:
/// Kubernetes' default `timeoutSeconds`, 1 s.
pub const KUBERNETES_DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// The longest deadline a probe gets by default, whatever the stated
/// orchestrator timeout: a probe that has not answered in a second is
/// treated as failing rather than held open.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The longest deadline the spec accepts for one probe. A health probe that
/// may take longer than a minute cannot answer an orchestrator's probe in
/// time on any real deployment (BE-HLTH-006), so such a value is a typo.
pub const MAX_PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Parses the duration syntax shared by the attribute and the manifest:
/// an integer followed by `ms`, `s` or `m`, e.g. `750ms`, `2s`, `1m`.
///
/// Integers only, so `1.5s` must be written `1500ms`: the value a user reads
/// is the value that runs, with no rounding.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    if digits.is_empty() {
        return Err(DurationError::Malformed(text.to_owned()));
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| DurationError::Malformed(text.to_owned()))?;
    let d = match unit.trim() {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" | "min" => n
            .checked_mul(60)
            .map(Duration::from_secs)
            .ok_or_else(|| DurationError::Malformed(text.to_owned()))?,
        "" => return Err(DurationError::MissingUnit(text.to_owned())),
        _ => return Err(DurationError::Malformed(text.to_owned())),
    };
    Ok(d)
}

/// Why a duration string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// Not `<integer><unit>`.
    Malformed(String),
    /// A bare number: the unit is required so that `1000` cannot be read as
    /// seconds by one reader and milliseconds by another.
    MissingUnit(String),
}

impl DurationError {
    /// What is wrong, quoting the input.
    pub fn message(&self) -> String {
        match self {
            DurationError::Malformed(s) => format!("malformed duration `{s}`"),
            DurationError::MissingUnit(s) => format!("duration `{s}` has no unit"),
        }
    }

    /// How to write it instead.
    pub fn help(&self) -> String {
        match self {
            DurationError::Malformed(_) => {
                "write a whole number with a unit: `750ms`, `2s` or `1m` (fractions such as `1.5s` are written `1500ms`)".into()
            }
            DurationError::MissingUnit(s) => format!("write `{s}ms` or `{s}s`"),
        }
    }
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message(), self.help())
    }
}

impl std::error::Error for DurationError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_units() {
        assert_eq!(parse_duration("750ms"), Ok(Duration::from_millis(750)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
    }

    #[test]
    fn rejects_fractions_bare_numbers_and_junk() {
        assert!(matches!(
            parse_duration("1.5s"),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            parse_duration("1000"),
            Err(DurationError::MissingUnit(_))
        ));
        assert!(matches!(
            parse_duration("soon"),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            parse_duration(""),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            parse_duration("99999999999999999999s"),
            Err(DurationError::Malformed(_))
        ));
    }
}
