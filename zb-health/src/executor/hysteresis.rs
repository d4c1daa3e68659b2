//! A probe's hysteresis (issue 18 §1): a blip is not an outage. Each
//! run's raw result passes through here before it becomes the entry, the
//! cache, the background result and the transition log, so a failure the
//! threshold holds back is no transition: it is neither logged nor
//! counted, and the status gauge keeps the reported status.
//!
//! * Reported healthy, a run fails: the entry stays `Healthy` with the
//!   description `1 of 3 failures` (or `failing for 1200 ms of 3000 ms`)
//!   until `failure_threshold` failed runs in a row, or failing for
//!   `failing_for` since the first of them, whichever comes first. A run
//!   that is not `Healthy` counts as failed.
//! * Reported failing, a run is healthy: the entry keeps the failure
//!   status with the description `1 of 2 successes` until
//!   `success_threshold` healthy runs in a row.
//!
//! A held entry keeps the run's duration and outcome (how the run really
//! ended) but not its `data` or description, which belong to the other
//! status. A held `Healthy` entry is never cached, so the cache cannot
//! stretch the hold past the threshold (R20 bounds the hold itself).
//! Answers that never came from a run (a waiter's own deadline, a lost
//! execution, a stale background result) are reported as they are.

use std::borrow::Cow;
use std::sync::Mutex;

use tokio::time::Instant;
use zb_health_spec::HealthStatus;
use zb_health_spec::detection::Threshold;

use crate::report::HealthEntry;

/// The per-probe hysteresis state; the threshold is the probe's policy's,
/// passed to each [`apply`](Self::apply) rather than kept twice.
#[derive(Default)]
pub(super) struct Hysteresis {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Whether the entry reports the failure status now.
    failing: bool,
    /// Runs in a row against the reported status.
    streak: u32,
    /// When the first of those runs finished (for `failing_for`).
    since: Option<Instant>,
}

impl Hysteresis {
    /// The entry to report for one run's `raw` result under the probe's
    /// `threshold`, and whether it is held back (not the run's own
    /// answer). `failed` is the probe's failure status.
    pub(super) fn apply(
        &self,
        threshold: Threshold,
        raw: HealthEntry,
        failed: HealthStatus,
    ) -> (HealthEntry, bool) {
        if !threshold.is_set() {
            return (raw, false);
        }
        let t = threshold;
        let mut s = super::lock(&self.state);
        let run_failed = raw.status != HealthStatus::Healthy;
        if run_failed != s.failing {
            s.streak = s.streak.saturating_add(1);
        } else {
            s.streak = 0;
            s.since = None;
            return (raw, false);
        }
        let description = if s.failing {
            let need = t.successes.unwrap_or(1);
            if s.streak >= need {
                None
            } else {
                Some((failed, format!("{} of {need} successes", s.streak)))
            }
        } else {
            let now = Instant::now();
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
                s.streak = 0;
                s.since = None;
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
