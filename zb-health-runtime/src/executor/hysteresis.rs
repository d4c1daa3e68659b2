//! A probe's hysteresis (`failure_threshold`, `failing_for`,
//! `success_threshold`; R20 bounds it): a blip is not an outage. Each
//! run's raw result passes through here before it becomes the entry, the
//! cache, the background result and the transition log, so a failure the
//! threshold holds back is no transition: it is neither logged nor
//! counted, and the status gauge keeps the reported status.
//!
//! * Reported healthy, a run fails: the entry stays `Healthy` with the
//!   description `1 of 3 failures` (or `failing for 1200 ms of 3000 ms`)
//!   until `failure_threshold` counted failed runs in a row, or failing for
//!   `failing_for` since the first of them, whichever comes first. A run
//!   that is not `Healthy` counts as failed.
//! * Reported failing, a run is healthy: the entry keeps the failure
//!   status with the description `1 of 2 successes` until
//!   `success_threshold` counted healthy runs in a row.
//! * **A threshold counts run periods, not runs**: a run
//!   advances its streak only when at least the probe's period, less a
//!   tenth, has passed since the streak's last counted run
//!   ([`run_counts`]); the runs in between still belong to the streak
//!   (held, with the counted number) and a run the other way still ends
//!   it. The period is `refresh` for a background probe, else the
//!   readiness period behind the registry's detection time (R20's
//!   [`run_period`](zb_health_spec::detection::run_period)); without a
//!   detection time a request-driven probe has no known period and every
//!   run counts. So what a threshold holds back does not depend on who
//!   else asks (a gRPC health check, a second client, a cache).
//!
//! A held entry keeps the run's duration and outcome (how the run really
//! ended) but not its `data` or description, which belong to the other
//! status. A held `Healthy` entry is never cached, so the cache cannot
//! stretch the hold past the threshold (R20 bounds the hold itself).
//! Answers that never came from a run (a lost execution, a stale
//! background result, a request that gave up waiting for an abandoned
//! run to be dropped) are reported as they are; a waiter that reaches a
//! run's deadline first ends that run as a timeout, through here, once.

use std::borrow::Cow;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;
use zb_health_spec::HealthStatus;
use zb_health_spec::detection::{Threshold, run_counts};

use crate::report::HealthEntry;

/// The per-probe hysteresis state; the threshold is the probe's policy's,
/// passed to each [`apply`](Self::apply) rather than kept twice. Boxed,
/// and only for a probe with a threshold ([`for_threshold`](Self::for_threshold)), so the
/// others keep one `None` and their runs never enter here.
pub(super) struct Hysteresis {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Whether the entry reports the failure status now.
    failing: bool,
    /// Counted runs in a row against the reported status.
    streak: u32,
    /// When the first of those runs finished (for `failing_for`).
    since: Option<Instant>,
    /// When the streak's last counted run finished.
    counted: Option<Instant>,
}

impl State {
    /// No run counted against the reported status: after a run that agrees
    /// with it, or once the status flipped.
    fn restart(&mut self) {
        self.streak = 0;
        self.since = None;
        self.counted = None;
    }
}

impl Hysteresis {
    /// The state of a probe with `threshold`; none without one.
    pub(super) fn for_threshold(threshold: Threshold) -> Option<Box<Self>> {
        threshold.is_set().then(|| {
            Box::new(Self {
                state: Mutex::default(),
            })
        })
    }

    /// The entry to report for one run's `raw` result under the probe's
    /// `threshold`, runs counted `period` apart, and whether it is held
    /// back (not the run's own answer). `failed` is the probe's failure
    /// status. A run enters here only with a threshold set; a probe
    /// without one (nearly every one) pays one check in its run.
    pub(super) fn apply(
        &self,
        threshold: Threshold,
        period: Duration,
        raw: HealthEntry,
        failed: HealthStatus,
    ) -> (HealthEntry, bool) {
        let t = threshold;
        let mut s = crate::sync::lock(&self.state);
        let now = Instant::now();
        let run_failed = raw.status != HealthStatus::Healthy;
        if run_failed == s.failing {
            s.restart();
            return (raw, false);
        }
        // Only a run in a new period counts: a threshold holds back as
        // long whoever else asks.
        let since_counted = s.counted.map(|at| now.saturating_duration_since(at));
        if run_counts(since_counted, period) {
            s.streak = s.streak.saturating_add(1);
            s.counted = Some(now);
        }
        let description = if s.failing {
            let need = t.successes.unwrap_or(1);
            if s.streak >= need {
                None
            } else {
                Some((failed, format!("{} of {need} successes", s.streak)))
            }
        } else {
            let since = *s.since.get_or_insert(now);
            let by_runs = t.failures.is_some_and(|n| s.streak >= n);
            let by_time = t.failing_for.is_some_and(|d| now - since >= d);
            let unbounded = t.failures.is_none() && t.failing_for.is_none();
            if by_runs || by_time || unbounded {
                None
            } else {
                let d = match (t.failures, t.failing_for) {
                    (Some(n), _) => format!("{} of {n} failures", s.streak),
                    (None, Some(d)) => format!(
                        "failing for {} ms of {} ms",
                        (now - since).as_millis(),
                        d.as_millis()
                    ),
                    (None, None) => unreachable!("an unbounded threshold trips at once"),
                };
                Some((HealthStatus::Healthy, d))
            }
        };
        match description {
            None => {
                s.failing = !s.failing;
                s.restart();
                (raw, false)
            }
            Some((status, d)) => {
                let held = HealthEntry {
                    status,
                    description: Some(Cow::Owned(d)),
                    data: None,
                    ..raw
                };
                (held, true)
            }
        }
    }
}
