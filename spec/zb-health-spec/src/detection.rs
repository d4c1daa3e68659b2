//! How quickly the orchestrator notices a changed answer, and the bounds
//! that follow from it (BE-HLTH-006): the readiness probe's period and
//! failure threshold that `zb-health k8s` emits, the detection time they
//! give, the age a background result may reach, the deadline a probe
//! runs with when nobody wrote one, and how long a generated alert holds.
//!
//! One place, so the rule that bounds a cached result (R19), the generated
//! code, the runtime, the Kubernetes generator and the alert generator use
//! the same numbers.

use std::time::Duration;

use crate::duration::{DEFAULT_PROBE_TIMEOUT, KUBERNETES_DEFAULT_TIMEOUT};

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

/// The detection time a registry checks cached and background results
/// against (R19) while none was set: the one `zb-health k8s` emits for the
/// default drain delay, 4 s (2 s period × 2 failures). So a registry built
/// in code refuses an unbounded cache age too, not only one built from a
/// manifest.
pub const DEFAULT_DETECTION_TIME: Duration = detection_time(crate::drain::DEFAULT_DRAIN_DELAY);

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

/// A probe's hysteresis (bounded by R20): how many failed runs in a row
/// (`failures`), or how long failing (`failing_for`), before its entry
/// turns to its failure status, and how many healthy runs in a row
/// (`successes`) before it recovers; a run counts only in a new period
/// ([`run_counts`]). `None` everywhere is no hysteresis:
/// every run's result is the entry, as without the keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Threshold {
    /// Failed runs in a row before the entry fails (`failure_threshold`).
    pub failures: Option<u32>,
    /// Failing for at least this long before the entry fails
    /// (`failing_for`); with `failures`, whichever comes first.
    pub failing_for: Option<Duration>,
    /// Healthy runs in a row before a failed entry recovers
    /// (`success_threshold`).
    pub successes: Option<u32>,
}

impl Threshold {
    /// Whether any key is set: without one, runs pass straight through.
    pub const fn is_set(&self) -> bool {
        self.failures.is_some() || self.failing_for.is_some() || self.successes.is_some()
    }
}

/// The period between two runs of a probe, which a failure threshold is
/// counted in: `refresh` for a background probe; for a request-driven one
/// (cached or not) the readiness `periodSeconds` behind this detection
/// time (`detection / failureThreshold`), since the orchestrator's
/// requests drive its runs and a failure is never cached.
pub const fn run_period(refresh: Option<Duration>, detection: Duration) -> Duration {
    match refresh {
        Some(r) => r,
        None => Duration::from_nanos(
            (detection.as_nanos() / READINESS_FAILURE_THRESHOLD as u128) as u64,
        ),
    }
}

/// The share of a run period a run may come early and still count as the
/// next period's ([`run_counts`]): a tenth, so the orchestrator's own runs,
/// which jitter a little around its period, always count.
pub const PERIOD_ALLOWANCE_DIVISOR: u32 = 10;

/// Whether a run counts towards a threshold's streak, with
/// `since_counted` the time since the streak's last counted run (`None`
/// for the streak's first run, which always counts): when at least one
/// [`run_period`], less a tenth of it, has passed. So a threshold counts
/// the periods a streak lasts, not how many times something asked:
/// `failure_threshold: n` holds a failure back for `n - 1` periods (each
/// less at most the allowance), as [`hold_back`] says, whether the
/// orchestrator alone drives the runs or a gRPC health check, another
/// client, a cache or a schedule adds its own. A zero period (none known)
/// counts every run.
pub const fn run_counts(since_counted: Option<Duration>, period: Duration) -> bool {
    match since_counted {
        None => true,
        Some(since) => {
            let p = period.as_nanos();
            since.as_nanos() >= p - p / PERIOD_ALLOWANCE_DIVISOR as u128
        }
    }
}

/// How long a threshold can hold a failure back, runs `period` apart:
/// `failures - 1` periods after the first failed run (the `failures`-th
/// run reports it), or `failing_for` rounded up to the next run; with
/// both, the shorter. Zero without a failure threshold (R20).
pub const fn hold_back(threshold: Threshold, period: Duration) -> Duration {
    let p = period.as_nanos();
    let by_runs = match threshold.failures {
        Some(n) if n > 1 => Some(p.saturating_mul((n - 1) as u128)),
        _ => None,
    };
    let by_time = match threshold.failing_for {
        Some(t) if p > 0 => Some(t.as_nanos().div_ceil(p).saturating_mul(p)),
        Some(t) => Some(t.as_nanos()),
        None => None,
    };
    let nanos = match (by_runs, by_time) {
        (Some(a), Some(b)) => {
            if a < b {
                a
            } else {
                b
            }
        }
        (Some(a), None) | (None, Some(a)) => a,
        // No threshold, or one failed run is enough: nothing held back.
        (None, None) => 0,
    };
    if nanos > u64::MAX as u128 {
        Duration::from_nanos(u64::MAX)
    } else {
        Duration::from_nanos(nanos as u64)
    }
}

/// R20: whether a threshold's [`hold_back`] plus the orchestrator's own
/// detection stays within what R19 allows a cached answer (the detection
/// time on top of the orchestrator's), that is: the hold-back is not
/// longer than the detection time.
pub const fn threshold_fits_detection(
    threshold: Threshold,
    period: Duration,
    detection: Duration,
) -> bool {
    hold_back(threshold, period).as_nanos() <= detection.as_nanos()
}

/// How long an alert on scraped series holds (its `for:`), so that it fires
/// only on a condition that outlasted what the orchestrator takes to act
/// on it (`acts_after`: the detection time for readiness, the liveness
/// probe's time for liveness, the grace period for a drain; never less than
/// the `detection` time): `max(acts_after, detection) + 2 × scrape`.
///
/// Prometheus keeps a sample as the series' value until the next one is
/// stored: one scrape interval later, plus that scrape's own duration (at
/// most its timeout, at most an interval). So a condition that lasted `d`
/// is seen for less than `d` plus two intervals, a single bad scrape
/// between good ones for less than two, and an alert held this long stays
/// silent on both whatever the evaluation interval. A sum of gauges from
/// pods scraped at different instants (a cluster-wide alert) is off by the
/// same two intervals at most.
pub const fn alert_hold(acts_after: Duration, detection: Duration, scrape: Duration) -> Duration {
    let acts = if acts_after.as_nanos() > detection.as_nanos() {
        acts_after
    } else {
        detection
    };
    acts.saturating_add(scrape.saturating_mul(2))
}

/// The least margin a derived deadline keeps below the orchestrator's
/// probe timeout: room for the response to travel and the tier to gather
/// its entries.
pub const DEFAULT_TIMEOUT_MARGIN: Duration = Duration::from_millis(100);

/// The deadline of a probe whose own `timeout` and `defaults.timeout` are
/// both absent: strictly below the orchestrator's probe timeout
/// (BE-HLTH-006), the stated one or else
/// [`KUBERNETES_DEFAULT_TIMEOUT`] (1 s). It is that timeout lowered by the
/// larger of [`DEFAULT_TIMEOUT_MARGIN`] and a fifth of it (`1s` → `800ms`,
/// `300ms` → `200ms`), or halved when the margin would leave nothing, and
/// never more than [`DEFAULT_PROBE_TIMEOUT`] (so `2s` → `1s`). So
/// neither stating `orchestrator.timeout` nor leaving it out makes a
/// default break R5; only a deadline the user wrote can.
pub const fn default_probe_timeout(orchestrator: Option<Duration>) -> Duration {
    let orch = match orchestrator {
        Some(orch) => orch,
        None => KUBERNETES_DEFAULT_TIMEOUT,
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
    fn a_threshold_holds_back_its_runs_but_one_or_its_time_rounded_up_to_a_run() {
        let t = |failures, failing_for| Threshold {
            failures,
            failing_for,
            successes: None,
        };
        assert_eq!(hold_back(Threshold::default(), S(2)), S(0));
        assert_eq!(hold_back(t(Some(1), None), S(2)), S(0));
        assert_eq!(hold_back(t(Some(3), None), S(2)), S(4));
        assert_eq!(hold_back(t(None, Some(MS(2500))), S(1)), S(3));
        assert_eq!(hold_back(t(None, Some(S(2))), S(1)), S(2));
        assert_eq!(hold_back(t(Some(5), Some(S(2))), S(1)), S(2));
        // The default drain: detection 4 s, period 2 s: three runs fit.
        let d = detection_time(crate::drain::DEFAULT_DRAIN_DELAY);
        assert_eq!(run_period(None, d), S(2));
        assert_eq!(run_period(Some(MS(500)), d), MS(500));
        assert!(threshold_fits_detection(t(Some(3), None), S(2), d));
        assert!(!threshold_fits_detection(t(Some(4), None), S(2), d));
        assert!(!threshold_fits_detection(t(None, Some(MS(4001))), S(2), d));
    }

    #[test]
    fn a_run_counts_once_a_period_less_a_tenth_has_passed_since_the_last_counted_one() {
        assert!(run_counts(None, S(2)), "a streak's first run");
        assert!(!run_counts(Some(MS(100)), S(2)));
        assert!(!run_counts(Some(MS(1799)), S(2)));
        assert!(run_counts(Some(MS(1800)), S(2)), "a run a little early");
        assert!(run_counts(Some(S(2)), S(2)));
        assert!(run_counts(Some(S(7)), S(2)));
        assert!(run_counts(Some(MS(0)), S(0)), "no period: every run");
    }

    #[test]
    fn an_alert_holds_what_the_orchestrator_takes_to_act_and_two_scrapes() {
        let d = detection_time(crate::drain::DEFAULT_DRAIN_DELAY);
        // Not ready, the default drain: 4 s detection.
        assert_eq!(alert_hold(d, d, S(30)), S(64));
        assert_eq!(alert_hold(d, d, S(10)), S(24));
        // A liveness restart or a grace period longer than the detection.
        assert_eq!(alert_hold(S(30), d, S(30)), S(90));
        // Never shorter than the detection time plus two scrapes.
        assert_eq!(alert_hold(S(1), S(20), S(10)), S(40));
        assert_eq!(alert_hold(S(0), d, MS(500)), S(5));
    }

    #[test]
    fn the_default_deadline_fits_any_stated_orchestrator_timeout() {
        // None stated: strictly below Kubernetes' default 1 s.
        assert_eq!(default_probe_timeout(None), MS(800));
        assert!(default_probe_timeout(None) < KUBERNETES_DEFAULT_TIMEOUT);
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
