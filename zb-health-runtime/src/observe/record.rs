//! What a run of a probe and an answer of a tier record, in one place:
//! each probe's transition log state machine, and its gauge, counter and
//! histogram; each tier's gauge, and its last HTTP verdict with the one
//! log line per change of it.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::sync::atomic::{AtomicU8, Ordering};

use metrics::{Key, Label, counter, with_recorder};
use tokio::time::Instant;

use super::{
    METADATA, PROBE_DURATION, PROBE_FAILURES, PROBE_STATUS, PROBE_TARGET, TIER_FAILURES,
    TIER_STATUS, TIER_TARGET, status_value,
};
use crate::probe::ProbeError;
use crate::report::{HealthEntry, HealthReport};
use zb_health_spec::{HealthStatus, Tag};

/// Why a run failed, kept (not formatted) until a log line needs it.
pub(crate) enum RunError {
    /// The run completed; a failing status is the probe's own verdict.
    None,
    /// The probe returned `Err`.
    Error(ProbeError),
    /// The probe panicked with this payload.
    Panic(Box<dyn std::any::Any + Send>),
    /// The probe missed its deadline.
    Timeout(Duration),
}

/// The real error of a failed run, as the log shows it.
struct Cause<'a> {
    error: &'a RunError,
    entry: &'a HealthEntry,
}

impl fmt::Display for Cause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.error {
            RunError::Error(error) => {
                write!(f, "{error}")?;
                // A driver's error often says little without its sources.
                let mut source = error.source();
                while let Some(s) = source {
                    write!(f, ": {s}")?;
                    source = s.source();
                }
                Ok(())
            }
            RunError::Panic(panic) => {
                write!(f, "panicked: {}", panic_message(&**panic))
            }
            RunError::Timeout(after) => f.write_str(&crate::report::timeout_description(*after)),
            RunError::None => f.write_str(
                self.entry
                    .description
                    .as_deref()
                    .unwrap_or("the probe reported it with no description"),
            ),
        }
    }
}

/// The log state of one registered probe, and its metrics' keys.
pub(crate) struct ProbeLog {
    state: Mutex<LogState>,
    /// Built (and hashed) once at registration, not on every run: the
    /// `probe` label is the same for every run.
    keys: ProbeKeys,
}

struct ProbeKeys {
    status: Key,
    duration: Key,
    failures: Key,
}

#[derive(Default)]
struct LogState {
    /// The status of the latest run; `None` before the first.
    last: Option<HealthStatus>,
    /// Set while the probe fails; boxed, since most probes of a registry
    /// are healthy and then carry one pointer.
    failure: Option<Box<Failure>>,
}

struct Failure {
    since: Instant,
    logged_at: Instant,
    /// Failing runs not logged since `logged_at`.
    suppressed: u64,
}

/// The log line one run calls for.
#[derive(Debug, PartialEq)]
enum Line {
    Quiet,
    Failing {
        previous: Option<HealthStatus>,
        suppressed: u64,
    },
    StillFailing {
        failing_for: Duration,
        suppressed: u64,
    },
    Recovered {
        failing_for: Duration,
        suppressed: u64,
    },
}

impl LogState {
    /// Advances the state by one run; returns the line to log and whether
    /// the run is a transition from healthy (or nothing) to failing.
    /// `now` is read only when the probe fails or recovers: a healthy run
    /// after a healthy one (nearly every run) reads no clock.
    fn step(
        &mut self,
        status: HealthStatus,
        now: impl FnOnce() -> Instant,
        interval: Duration,
    ) -> (Line, bool) {
        let previous = self.last.replace(status);
        let healthy = status == HealthStatus::Healthy;
        if healthy && self.failure.is_none() {
            return (Line::Quiet, false);
        }
        let now = now();
        match (&mut self.failure, healthy) {
            (None, true) => (Line::Quiet, false),
            (None, false) => {
                self.failure = Some(Box::new(Failure {
                    since: now,
                    logged_at: now,
                    suppressed: 0,
                }));
                let line = Line::Failing {
                    previous,
                    suppressed: 0,
                };
                (line, true)
            }
            (Some(failure), true) => {
                let line = Line::Recovered {
                    failing_for: now.saturating_duration_since(failure.since),
                    suppressed: failure.suppressed,
                };
                self.failure = None;
                (line, false)
            }
            (Some(failure), false) if previous != Some(status) => {
                let suppressed = std::mem::take(&mut failure.suppressed);
                failure.logged_at = now;
                (
                    Line::Failing {
                        previous,
                        suppressed,
                    },
                    false,
                )
            }
            (Some(failure), false) => {
                if now.saturating_duration_since(failure.logged_at) >= interval {
                    failure.logged_at = now;
                    let line = Line::StillFailing {
                        failing_for: now.saturating_duration_since(failure.since),
                        suppressed: std::mem::take(&mut failure.suppressed),
                    };
                    (line, false)
                } else {
                    failure.suppressed += 1;
                    (Line::Quiet, false)
                }
            }
        }
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&'static str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload")
}

/// A probe's label set, found by the probe's name.
#[derive(Clone, Copy)]
struct ByName(&'static [Label]);

impl ByName {
    fn name(&self) -> &str {
        self.0.first().map_or("", Label::value)
    }
}

impl PartialEq for ByName {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for ByName {}

impl std::hash::Hash for ByName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // As `str` hashes, so the set is searched by name (`Borrow`).
        self.name().hash(state);
    }
}

impl std::borrow::Borrow<str> for ByName {
    fn borrow(&self) -> &str {
        self.name()
    }
}

/// The `probe` label set of the probe `name`, made once per name for the
/// life of the process and shared by the probe's three metric keys and by
/// every later registration of the same name. A metrics recorder keeps
/// every key it has seen for as long, so this keeps nothing a recorder
/// would not, where a label vector per key would be three copies of it.
fn probe_labels(name: &Arc<str>) -> &'static [Label] {
    static LABELS: std::sync::LazyLock<Mutex<std::collections::HashSet<ByName>>> =
        std::sync::LazyLock::new(Mutex::default);
    // Never left half-changed by a panic: a lookup, then one insert.
    let mut labels = crate::sync::lock(&LABELS);
    if let Some(found) = labels.get(&**name) {
        return found.0;
    }
    let made: &'static [Label] = Box::leak(Box::new([Label::new("probe", name.clone())]));
    labels.insert(ByName(made));
    made
}

impl ProbeLog {
    /// The log of the probe `name`, before its first run.
    pub(crate) fn new(name: &Arc<str>) -> Self {
        let labels = probe_labels(name);
        let key = |metric: &'static str| Key::from_static_labels(metric, labels);
        Self {
            state: Mutex::default(),
            keys: ProbeKeys {
                status: key(PROBE_STATUS),
                duration: key(PROBE_DURATION),
                failures: key(PROBE_FAILURES),
            },
        }
    }

    /// Logs and records one finished run of the probe this log belongs to;
    /// the entry carries its name.
    ///
    /// While the service is `starting` (its startup gates pending, so the
    /// ready tier answers 503 whatever the probes say), a run is measured
    /// but is no transition: a dependency that is not there yet during a
    /// normal start is not a failure to log or count, and the first run
    /// after the gates open is compared with nothing.
    ///
    /// Returns the status it changed from when the run is a transition
    /// (its status differs from the last run's; a first run only when it
    /// is not `Healthy`), for the transition publishers.
    pub(crate) fn ran(
        &self,
        entry: &HealthEntry,
        error: &RunError,
        interval: Duration,
        starting: bool,
    ) -> Option<Option<HealthStatus>> {
        let (line, to_failure, previous) = if starting {
            (Line::Quiet, false, Some(entry.status))
        } else {
            let mut state = crate::sync::lock(&self.state);
            let previous = state.last;
            let (line, to_failure) = state.step(entry.status, Instant::now, interval);
            (line, to_failure, previous)
        };
        record(entry, error, line, to_failure, &self.keys);
        match previous {
            Some(p) if p == entry.status => None,
            None if entry.status == HealthStatus::Healthy => None,
            from => Some(from),
        }
    }
}

/// The log line and the metrics of one run, outside the log state's lock:
/// a slow subscriber must not hold up the probe's next run.
fn record(entry: &HealthEntry, error: &RunError, line: Line, to_failure: bool, keys: &ProbeKeys) {
    let name = &*entry.name;
    let status = entry.status.as_str();
    let outcome = entry.outcome.as_str();
    let cause = Cause { error, entry };
    match line {
        Line::Quiet => {}
        Line::Failing {
            previous,
            suppressed,
        } => tracing::warn!(
            target: PROBE_TARGET,
            probe = %name,
            status = %status,
            outcome = %outcome,
            error = %cause,
            previous = %previous.map_or("none", HealthStatus::as_str),
            suppressed,
            "health probe failing"
        ),
        Line::StillFailing {
            failing_for,
            suppressed,
        } => tracing::warn!(
            target: PROBE_TARGET,
            probe = %name,
            status = %status,
            outcome = %outcome,
            error = %cause,
            failing_for_ms = ms(failing_for),
            suppressed,
            "health probe still failing"
        ),
        Line::Recovered {
            failing_for,
            suppressed,
        } => tracing::info!(
            target: PROBE_TARGET,
            probe = %name,
            failing_for_ms = ms(failing_for),
            suppressed,
            "health probe recovered"
        ),
    }
    with_recorder(|recorder| {
        recorder
            .register_gauge(&keys.status, &METADATA)
            .set(status_value(entry.status));
        recorder
            .register_histogram(&keys.duration, &METADATA)
            .record(entry.duration.as_secs_f64());
        // Every run touches the counter, so it exists (at 0) from the first
        // run and a dashboard's `increase()` sees the first failure.
        recorder
            .register_counter(&keys.failures, &METADATA)
            .increment(u64::from(to_failure));
    });
    #[cfg(feature = "otel")]
    super::otel::probe_ran(entry);
}

/// Sets the tier gauge: called with every answer a server is given.
fn tier_gauge(tier: Tag, status: HealthStatus) {
    // Built and hashed at compile time: an answer costs the recorder's
    // lookup and one store, and builds no key.
    static READY_LABEL: [Label; 1] = [Label::from_static_parts("tier", "ready")];
    static ACTIVE_LABEL: [Label; 1] = [Label::from_static_parts("tier", "active")];
    static LIVE_LABEL: [Label; 1] = [Label::from_static_parts("tier", "live")];
    static READY: Key = Key::from_static_parts(TIER_STATUS, &READY_LABEL);
    static ACTIVE: Key = Key::from_static_parts(TIER_STATUS, &ACTIVE_LABEL);
    static LIVE: Key = Key::from_static_parts(TIER_STATUS, &LIVE_LABEL);
    let key = match tier {
        Tag::Ready => &READY,
        Tag::Active => &ACTIVE,
        Tag::Live => &LIVE,
    };
    with_recorder(|recorder| {
        recorder
            .register_gauge(key, &METADATA)
            .set(status_value(status));
    });
    #[cfg(feature = "otel")]
    super::otel::tier_answered(tier, status);
}

/// A tier's verdict as [`TierLog`] keeps it; `UNANSWERED` is 0, so a
/// default (zeroed) slot has not answered yet.
const UNANSWERED: u8 = 0;
const SERVING: u8 = 1;
const FAILING: u8 = 2;

/// The last HTTP verdict of each tier of one registry: what
/// [`TIER_FAILURES`] and the tier transition lines are counted from.
#[derive(Default)]
pub(crate) struct TierLog {
    /// Indexed by `Tag as usize`: [`UNANSWERED`], [`SERVING`] or
    /// [`FAILING`].
    verdicts: [AtomicU8; 3],
}

impl TierLog {
    /// Records one answer of `tier`: its gauge, and, when the verdict
    /// changed, the counter and the log line. `failing` names the
    /// `Unhealthy` entries; it is called only on a change to 503.
    ///
    /// Returns the verdict it changed from, when it changed: `None` for a
    /// first answer, `Some(true)` from serving, `Some(false)` from failing;
    /// a first answer that serves is no change.
    pub(crate) fn answered(
        &self,
        tier: Tag,
        status: HealthStatus,
        failing: impl FnOnce() -> String,
    ) -> Option<Option<bool>> {
        tier_gauge(tier, status);
        let verdict = if status.is_serving() {
            SERVING
        } else {
            FAILING
        };
        let slot = &self.verdicts[tier as usize];
        // The steady state is one load; only a change writes, and of two
        // concurrent answers with the same change only one sees it.
        if slot.load(Ordering::Relaxed) == verdict {
            return None;
        }
        let previous = slot.swap(verdict, Ordering::AcqRel);
        if previous == verdict {
            return None;
        }
        let to_failure = verdict == FAILING;
        let counter = match tier {
            Tag::Ready => counter!(TIER_FAILURES, "tier" => "ready"),
            Tag::Active => counter!(TIER_FAILURES, "tier" => "active"),
            Tag::Live => counter!(TIER_FAILURES, "tier" => "live"),
        };
        // The first answer registers the counter at 0, so a dashboard's
        // `increase()` sees the first failure.
        counter.increment(u64::from(to_failure));
        if to_failure {
            tracing::warn!(
                target: TIER_TARGET,
                tier = %tier,
                status = %status.as_str(),
                unhealthy = %failing(),
                previous = %if previous == UNANSWERED { "none" } else { "serving" },
                "health tier failing"
            );
        } else if previous == FAILING {
            tracing::info!(target: TIER_TARGET, tier = %tier, "health tier recovered");
        }
        match previous {
            UNANSWERED if !to_failure => None,
            UNANSWERED => Some(None),
            previous => Some(Some(previous == SERVING)),
        }
    }
}

/// The names of `report`'s `Unhealthy` entries, comma-separated, for the
/// tier's failing line.
pub(crate) fn unhealthy_entries(report: &HealthReport) -> String {
    let mut names = String::new();
    for e in report
        .entries
        .iter()
        .filter(|e| e.status == HealthStatus::Unhealthy)
    {
        if !names.is_empty() {
            names.push(',');
        }
        names.push_str(&e.name);
    }
    names
}

#[cfg(test)]
mod tests;
