//! R5 for a single duration (BE-HLTH-006): a duration's text, a probe's
//! deadline, a watchdog's deadline.

use std::time::Duration;

use super::rule::Rule;
use super::sink::Violations;
use crate::duration::{MAX_PROBE_TIMEOUT, parse_duration};

/// R5: a probe deadline is non-zero, at most [`MAX_PROBE_TIMEOUT`], and
/// shorter than the orchestrator's probe timeout when one is declared
/// (BE-HLTH-006), so the endpoint always answers before the orchestrator
/// gives up on it.
pub fn check_timeout<L>(
    name: &str,
    timeout: Duration,
    orchestrator: Option<Duration>,
    location: L,
    sink: &mut Violations<L>,
) {
    let ms = timeout.as_millis();
    if timeout.is_zero() {
        sink.push(
            Rule::Duration,
            location,
            format!("probe `{name}` has a zero timeout, so it could never succeed"),
            "give it a deadline such as `800ms`",
        );
    } else if timeout > MAX_PROBE_TIMEOUT {
        sink.push(
            Rule::Duration,
            location,
            format!("probe `{name}` has a timeout of {ms} ms, longer than the {} s the spec allows", MAX_PROBE_TIMEOUT.as_secs()),
            "a health probe must answer within the orchestrator's probe timeout (Kubernetes' default is 1s); use a deadline below it",
        );
    } else if let Some(orch) = orchestrator
        && !crate::facts::fits_orchestrator(timeout, orch)
    {
        sink.push(
                Rule::Duration,
                location,
                format!(
                    "probe `{name}` has a timeout of {ms} ms, not below the orchestrator's probe timeout of {} ms",
                    orch.as_millis()
                ),
                crate::facts::ORCHESTRATOR_HELP,
            );
    }
}

/// R5: parses a duration written by the user, reporting a malformed one at
/// its location. Returns `None` after reporting.
pub fn check_duration_text<L>(
    text: &str,
    location: L,
    sink: &mut Violations<L>,
) -> Option<Duration> {
    match parse_duration(text) {
        Ok(d) => Some(d),
        Err(e) => {
            sink.push(Rule::Duration, location, e.message(), e.help());
            None
        }
    }
}

/// R5: a watchdog's deadline is at least 1 ms (BE-HLTH-002): the longest
/// one iteration of the watched loop may take.
pub fn check_watchdog_deadline<L>(
    name: &str,
    deadline: Duration,
    location: L,
    sink: &mut Violations<L>,
) {
    if deadline.as_millis() == 0 {
        sink.push(
            Rule::Duration,
            location,
            format!("watchdog `{name}` has a deadline under 1 ms"),
            "give the loop the longest time one iteration may take, e.g. `30s`",
        );
    }
}
