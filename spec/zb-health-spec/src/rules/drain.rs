//! R18: the shutdown drain fits the orchestrator's termination grace
//! period (BE-HLTH-005).

use std::time::Duration;

use super::rule::Rule;
use super::sink::Violations;

/// R18: the shutdown drain fits the orchestrator's termination grace period
/// (BE-HLTH-005). After SIGTERM the orchestrator kills the process when
/// the grace period ends, so the drain delay plus the graceful stop of
/// in-flight requests must end first:
///
/// * with a stated `shutdown_timeout`: `drain_delay` + the timeout (in whole
///   seconds, rounded up, as actix applies it) ≤ the grace period;
/// * without: the graceful stop gets what remains of the grace period
///   ([`crate::drain::graceful_stop`]), which must be at least 1 s, so a
///   drain delay as long as the grace period is refused.
///
/// Each value comes with where it was written; `drain_delay` is `None` when
/// the default ([`crate::drain::DEFAULT_DRAIN_DELAY`]) applies, and a
/// violation about it is then reported at the grace period. Nothing is
/// checked without a grace period; a zero one is R5.
pub fn check_drain<L: Clone>(
    drain_delay: Option<(Duration, L)>,
    shutdown_timeout: Option<(Duration, L)>,
    grace_period: Option<(Duration, L)>,
    sink: &mut Violations<L>,
) {
    let Some((grace, grace_at)) = grace_period else {
        return;
    };
    if grace.is_zero() {
        sink.push(
            Rule::Duration,
            grace_at,
            "the termination grace period is zero",
            "state the orchestrator's grace period, Kubernetes' `terminationGracePeriodSeconds` (default `30s`)",
        );
        return;
    }
    let (delay, delay_at) =
        drain_delay.unwrap_or((crate::drain::DEFAULT_DRAIN_DELAY, grace_at.clone()));
    let ms = |d: Duration| d.as_millis();
    match shutdown_timeout {
        Some((stop, stop_at)) => {
            let stop_secs = crate::drain::whole_seconds(stop);
            if delay.saturating_add(stop_secs) > grace {
                sink.push(
                    Rule::DrainFitsGrace,
                    stop_at,
                    format!(
                        "the drain delay ({} ms) and the shutdown timeout ({} s) add up to more than the termination grace period ({} ms)",
                        ms(delay),
                        stop_secs.as_secs(),
                        ms(grace)
                    ),
                    "the orchestrator kills the process when the grace period ends, cutting in-flight requests; shorten one of them, or leave `shutdown_timeout` out to give the graceful stop what remains of the grace period",
                );
            }
        }
        None => {
            if crate::drain::graceful_stop(delay, None, Some(grace)).is_zero() {
                sink.push(
                    Rule::DrainFitsGrace,
                    delay_at,
                    format!(
                        "the drain delay ({} ms) leaves less than 1 s of the termination grace period ({} ms) for in-flight requests",
                        ms(delay),
                        ms(grace)
                    ),
                    "the orchestrator kills the process when the grace period ends; make the drain delay shorter than the grace period by at least the time your slowest request needs",
                );
            }
        }
    }
}
