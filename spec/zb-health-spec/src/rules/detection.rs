//! What the orchestrator's detection time bounds (BE-HLTH-006): R19, the
//! age of a cached or background result, and R20, what a failure threshold
//! holds back.

use std::time::Duration;

use super::rule::Rule;
use super::sink::Violations;

/// R19 (BE-HLTH-006): a cached or background result is younger than the
/// orchestrator's detection time ([`crate::detection::detection_time`]),
/// strictly, as the seed allows one "only if its maximum age is below the
/// allowed detection time".
///
/// The maximum age is `cache` for a cached probe, and for a background one
/// [`crate::detection::background_max_age`] (its `max_staleness`, else
/// twice `refresh` plus `timeout`, the probe's deadline), reported at
/// `max_staleness` when written, else at `refresh`. The comparison is
/// [`crate::facts::policy_fits_detection`], the one the generated code
/// runs for a custom probe's attribute.
pub fn check_max_age<L>(
    name: &str,
    timeout: Duration,
    cache: Option<(Duration, L)>,
    refresh: Option<(Duration, L)>,
    max_staleness: Option<(Duration, L)>,
    detection: Duration,
    sink: &mut Violations<L>,
) {
    let staleness = max_staleness.as_ref().map(|(d, _)| *d);
    if let Some((c, at)) = cache
        && !crate::facts::policy_fits_detection(Some(c), None, None, timeout, detection)
    {
        sink.push(
            Rule::MaxAgeFitsDetection,
            at,
            format!(
                "probe `{name}` caches its result for {} ms, not below the orchestrator's detection time of {} ms",
                c.as_millis(),
                detection.as_millis()
            ),
            crate::facts::DETECTION_HELP,
        );
    }
    if let Some((r, refresh_at)) = refresh
        && !crate::facts::policy_fits_detection(None, Some(r), staleness, timeout, detection)
    {
        let age = crate::detection::background_max_age(r, staleness, timeout);
        let (how, at) = match max_staleness {
            Some((_, at)) => ("its `max_staleness`", at),
            None => ("the default: twice `refresh` plus the timeout", refresh_at),
        };
        sink.push(
            Rule::MaxAgeFitsDetection,
            at,
            format!(
                "probe `{name}` may serve a background result {} ms old ({how}), not below the orchestrator's detection time of {} ms",
                age.as_millis(),
                detection.as_millis()
            ),
            crate::facts::DETECTION_HELP,
        );
    }
}

/// R20 (BE-HLTH-006): a probe's failure threshold holds a
/// failure back ([`crate::detection::hold_back`], counted in
/// [`crate::detection::run_period`]: `refresh`, else the readiness
/// period) no longer than the orchestrator's detection time, so the
/// outage is seen within what R19 allows a cached answer: the detection
/// time on top of the orchestrator's own. A threshold of zero runs means
/// nothing and is refused too. Reported at the threshold's own key
/// (`failures` at `failure_threshold`, else `failing_for`). The
/// comparison is [`crate::detection::threshold_fits_detection`], the one
/// the generated code runs for a custom probe's attribute.
pub fn check_threshold<L: Clone>(
    name: &str,
    failures: Option<(u32, L)>,
    failing_for: Option<(Duration, L)>,
    successes: Option<(u32, L)>,
    refresh: Option<Duration>,
    detection: Option<Duration>,
    sink: &mut Violations<L>,
) {
    for (key, value) in [
        ("failure_threshold", &failures),
        ("success_threshold", &successes),
    ] {
        if let Some((0, at)) = value {
            sink.push(
                Rule::ThresholdFitsDetection,
                at.clone(),
                format!("probe `{name}` has `{key}: 0`"),
                THRESHOLD_ZERO_HELP,
            );
        }
    }
    let Some(detection) = detection else {
        return;
    };
    let threshold = crate::detection::Threshold {
        failures: failures.as_ref().map(|(n, _)| *n),
        failing_for: failing_for.as_ref().map(|(d, _)| *d),
        successes: None,
    };
    if crate::facts::threshold_fits(threshold, refresh, detection) {
        return;
    }
    let period = crate::detection::run_period(refresh, detection);
    let at = match (&failures, &failing_for) {
        (Some((_, at)), _) | (None, Some((_, at))) => at.clone(),
        (None, None) => return,
    };
    sink.push(
        Rule::ThresholdFitsDetection,
        at,
        format!(
            "probe `{name}`'s failure threshold can hold a failure back for {} ms (runs {} ms apart), longer than the orchestrator's detection time of {} ms",
            crate::detection::hold_back(threshold, period).as_millis(),
            period.as_millis(),
            detection.as_millis()
        ),
        THRESHOLD_HELP,
    );
}

/// Help for R20, a threshold that hides an outage too long.
pub const THRESHOLD_HELP: &str = "while the threshold holds a failure back the entry says Healthy, and the orchestrator only starts its own detection after it; lower `failure_threshold` or `failing_for`, run the probe more often with `refresh`, or lengthen `lifecycle.drain_delay` (in code, `HealthRegistryBuilder::detection_time`)";

/// Help for R20, a threshold of zero runs.
pub const THRESHOLD_ZERO_HELP: &str = "a threshold counts runs in a row and starts at 1 (the same as no threshold); remove the key or give it 1 or more";
