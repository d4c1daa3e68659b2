//! How quickly the orchestrator notices a changed answer, and the bounds
//! that follow from it (BE-HLTH-006): the readiness probe's period and
//! failure threshold that `zb-health k8s` emits, the detection time they
//! give, the age a background result may reach, and the deadline a probe
//! runs with when nobody wrote one.
//!
//! One place, so the rule that bounds a cached result (R19), the generated
//! code, the runtime and the Kubernetes generator use the same numbers.

use std::time::Duration;

use crate::DEFAULT_PROBE_TIMEOUT;

/// Readiness `failureThreshold`: how many failed probes in a row take the
/// pod out of the endpoints. Two, so one lost packet does not.
pub const READINESS_FAILURE_THRESHOLD: u64 = 2;

/// The longest readiness `periodSeconds` the generator emits.
pub const MAX_READINESS_PERIOD_SECONDS: u64 = 10;

/// Readiness `periodSeconds` for a drain delay: half of it in whole
/// seconds, from 1 to [`MAX_READINESS_PERIOD_SECONDS`], so that
/// `periodSeconds × failureThreshold ≤ drain_delay` where it can be and
/// the orchestrator sees the drain's 503 before the drain ends.
pub const fn readiness_period_seconds(drain_delay: Duration) -> u64 {
    let half = drain_delay.as_secs() / 2;
    if half < 1 {
        1
    } else if half > MAX_READINESS_PERIOD_SECONDS {
        MAX_READINESS_PERIOD_SECONDS
    } else {
        half
    }
}

/// The detection time: how long a changed readiness answer may go unseen
/// by the orchestrator, readiness `periodSeconds × failureThreshold` as
/// `zb-health k8s` emits them for this drain delay. A cached or background
/// result must be younger than this (R19), or the cache, not the
/// orchestrator, decides how long an outage stays hidden.
pub const fn detection_time(drain_delay: Duration) -> Duration {
    Duration::from_secs(readiness_period_seconds(drain_delay) * READINESS_FAILURE_THRESHOLD)
}

/// The oldest result a background probe serves: its `max_staleness`, else
/// twice `refresh` plus the deadline (one missed run and the next one's
/// full deadline). Past it the probe reports its failure status as stale.
pub const fn background_max_age(
    refresh: Duration,
    max_staleness: Option<Duration>,
    timeout: Duration,
) -> Duration {
    match max_staleness {
        Some(stated) => stated,
        None => refresh.saturating_mul(2).saturating_add(timeout),
    }
}

/// The least margin a derived deadline keeps below the orchestrator's
/// probe timeout: room for the response to travel and the tier to gather
/// its entries.
pub const DEFAULT_TIMEOUT_MARGIN: Duration = Duration::from_millis(100);

/// The deadline of a probe whose own `timeout` and `defaults.timeout` are
/// both absent: [`DEFAULT_PROBE_TIMEOUT`], lowered below a stated
/// orchestrator timeout by the larger of [`DEFAULT_TIMEOUT_MARGIN`] and a
/// fifth of it (`1s` → `800ms`, `2s` → `1s`, `300ms` → `200ms`), and by
/// half of it when the margin would leave nothing. So stating
/// `orchestrator.timeout` never makes a default break R5; only a deadline
/// the user wrote can.
pub const fn default_probe_timeout(orchestrator: Option<Duration>) -> Duration {
    let Some(orch) = orchestrator else {
        return DEFAULT_PROBE_TIMEOUT;
    };
    let fifth = orch.as_nanos() / 5;
    let margin = if fifth > DEFAULT_TIMEOUT_MARGIN.as_nanos() {
        Duration::from_nanos(fifth as u64)
    } else {
        DEFAULT_TIMEOUT_MARGIN
    };
    let derived = match orch.checked_sub(margin) {
        Some(d) if !d.is_zero() => d,
        _ => Duration::from_nanos((orch.as_nanos() / 2) as u64),
    };
    if derived.as_nanos() < DEFAULT_PROBE_TIMEOUT.as_nanos() {
        derived
    } else {
        DEFAULT_PROBE_TIMEOUT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;
    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn the_period_is_half_the_drain_from_1_to_10_s() {
        assert_eq!(readiness_period_seconds(S(0)), 1);
        assert_eq!(readiness_period_seconds(S(3)), 1);
        assert_eq!(readiness_period_seconds(S(5)), 2);
        assert_eq!(readiness_period_seconds(S(60)), 10);
        assert_eq!(detection_time(crate::drain::DEFAULT_DRAIN_DELAY), S(4));
        assert_eq!(detection_time(S(0)), S(2));
        assert_eq!(detection_time(S(600)), S(20));
    }

    #[test]
    fn a_background_result_is_bounded_by_max_staleness_else_two_periods_and_a_deadline() {
        assert_eq!(background_max_age(S(1), Some(MS(1500)), S(1)), MS(1500));
        assert_eq!(background_max_age(S(1), None, MS(800)), MS(2800));
    }

    #[test]
    fn the_default_deadline_fits_any_stated_orchestrator_timeout() {
        assert_eq!(default_probe_timeout(None), DEFAULT_PROBE_TIMEOUT);
        assert_eq!(default_probe_timeout(Some(S(1))), MS(800));
        assert_eq!(default_probe_timeout(Some(MS(300))), MS(200));
        assert_eq!(default_probe_timeout(Some(MS(100))), MS(50));
        assert_eq!(default_probe_timeout(Some(S(2))), DEFAULT_PROBE_TIMEOUT);
        assert_eq!(default_probe_timeout(Some(S(30))), DEFAULT_PROBE_TIMEOUT);
        for ms in [1, 2, 99, 100, 101, 500, 999, 1000, 1001, 1250, 60_000] {
            let orch = MS(ms);
            let d = default_probe_timeout(Some(orch));
            assert!(
                !d.is_zero() && crate::facts::fits_orchestrator(d, orch),
                "{ms} ms"
            );
        }
    }
}
