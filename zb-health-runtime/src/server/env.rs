//! The settings read from the environment at start (`PORT`, `HOST`,
//! `DRAIN_DELAY_MS`, the bearer token…): a bad value is refused naming
//! the variable.

use std::fmt;
use std::io;
use std::time::Duration;

use crate::lifecycle::Drain;
use crate::token::{BearerToken, TOKEN_FILE_VAR, TOKEN_VAR};

use crate::setting::SettingError;

pub(super) const PORT_REASON: &str = "a port number, 0 to 65535";

/// `drain` with a `DRAIN_DELAY_MS` of `ms`, held to the grace period by the
/// same rule R18 as the manifest ([`Drain::with_delay`]); the refusal says
/// which grace period, and where it comes from.
pub(super) fn drain_override(drain: Drain, ms: u64) -> Result<Drain, String> {
    drain.with_delay(Duration::from_millis(ms)).map_err(|e| {
        let grace = drain.grace_period_or_default();
        let source = if drain.grace_period().is_some() {
            "the manifest's `orchestrator.termination_grace_period`"
        } else {
            "Kubernetes' default; the manifest states no `orchestrator.termination_grace_period`"
        };
        let violations: Vec<String> = e
            .violations()
            .iter()
            .map(|v| format!("{} (rule {}); {}", v.message, v.rule, v.help))
            .collect();
        format!(
            "does not fit the termination grace period of {} ms ({source}): {}",
            grace.as_millis(),
            violations.join("; ")
        )
    })
}

/// The bearer token from `HEALTH_TOKEN` or the file `HEALTH_TOKEN_FILE`
/// names. Unlike the other variables an empty value is refused, not
/// unset: an empty secret is a secret that failed to mount.
pub(super) fn bearer_token(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<Option<BearerToken>, SettingError> {
    match (lookup(TOKEN_VAR), lookup(TOKEN_FILE_VAR)) {
        (None, None) => Ok(None),
        (Some(_), Some(path)) => Err(SettingError {
            variable: TOKEN_FILE_VAR,
            value: path,
            reason: format!("{TOKEN_VAR} is set too; set one of them"),
        }),
        (Some(token), None) => BearerToken::new(token).map(Some).map_err(|e| SettingError {
            variable: TOKEN_VAR,
            // The token's own value is never shown.
            value: "<redacted>".to_owned(),
            reason: e.to_string(),
        }),
        (None, Some(path)) => {
            let refused = |reason: String| SettingError {
                variable: TOKEN_FILE_VAR,
                value: path.clone(),
                reason,
            };
            let text = std::fs::read_to_string(path.trim())
                .map_err(|e| refused(format!("the file cannot be read: {e}")))?;
            BearerToken::new(text)
                .map(Some)
                .map_err(|e| refused(format!("the file's content: {e}")))
        }
    }
}

pub(super) fn setting<T: std::str::FromStr>(
    var: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
    expected: &str,
) -> Result<Option<T>, SettingError>
where
    T::Err: fmt::Display,
{
    var(variable)
        .map(|value| {
            value.trim().parse().map_err(|e| SettingError {
                variable,
                reason: format!("{e}; expected {expected}"),
                value,
            })
        })
        .transpose()
}

impl From<SettingError> for io::Error {
    fn from(e: SettingError) -> Self {
        io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
    }
}
