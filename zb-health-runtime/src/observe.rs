//! What operators see of the probes besides the endpoints (BE-HLTH-008):
//! transition logs through `tracing` and metrics through the `metrics`
//! facade. `spec/observability.md` documents both for operators.
//!
//! # Logs
//!
//! Every *run* of a probe (not a cached or background read of its result)
//! goes through a small state machine kept with the probe's registration,
//! so a replaced or removed probe takes its state with it:
//!
//! * a healthy run after a healthy run (or as the first run) logs nothing;
//! * a failing run (`Degraded` or `Unhealthy`) after a healthy run, or as
//!   the first run, logs once at `WARN`: `health probe failing`, with the
//!   probe's name and the real error (the error's text and its sources, the
//!   panic message, the deadline, or the probe's own description);
//! * a change between `Degraded` and `Unhealthy` logs the same way;
//! * an unchanged failing state is logged again (`health probe still
//!   failing`) at most once per [failure log
//!   interval](crate::registry::HealthRegistryBuilder::failure_log_interval), with
//!   `suppressed`, the number of runs not logged since the last line;
//! * a healthy run after a failure logs once at `INFO`: `health probe
//!   recovered`, with how long it failed and the runs suppressed.
//!
//! Events have the target `zb_health::observe`. No log line ever reaches a
//! response body (BE-HLTH-007).
//!
//! Each **tier** of a registry also keeps its last HTTP verdict (200 or
//! 503, [`HealthStatus::is_serving`]), and logs once per change of it, with
//! the target [`TIER_TARGET`]: `health tier failing` at `WARN` when it
//! turns 503 (with the names of the `Unhealthy` entries, e.g. `startup`,
//! `shutdown` or a probe), `health tier recovered` at `INFO` when it turns
//! 200 again. An unchanged verdict logs nothing, and a tier whose first
//! answer is 200 logs nothing either.
//!
//! # Metrics
//!
//! Recorded through whatever `metrics` recorder the application installs
//! (none: they cost next to nothing). Names and labels follow Prometheus
//! conventions; [`describe_metrics`] registers their help texts and units.
//!
//! | Metric | Kind | Labels | Updated |
//! |---|---|---|---|
//! | [`TIER_STATUS`] | gauge | `tier` | every answer of the tier |
//! | [`TIER_FAILURES`] | counter | `tier` | by 1 on each transition of the tier's verdict to 503 |
//! | [`PROBE_STATUS`] | gauge | `probe` | every run of the probe |
//! | [`PROBE_FAILURES`] | counter | `probe` | every run (by 1 on a transition to failure) |
//! | [`PROBE_DURATION`] | histogram | `probe` | every run |
//!
//! Statuses are encoded by [`status_value`]: `Healthy` 2, `Degraded` 1,
//! `Unhealthy` 0, so "higher is better", `== 0` is a 503 and `< 2` is
//! anything short of healthy.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics::{
    Key, Label, Level, Metadata, Unit, counter, describe_counter, describe_gauge,
    describe_histogram, with_recorder,
};
use tokio::time::Instant;

use crate::probe::ProbeError;
use crate::report::{HealthEntry, HealthReport};
use zb_health_spec::{HealthStatus, Tag};

/// How often an unchanged failing state is logged again, unless the
/// registry is told otherwise: 5 minutes, a few lines an hour per broken
/// dependency.
pub const DEFAULT_FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(300);

/// Gauge: the status of a tier's latest answer, as [`status_value`];
/// label `tier` (`ready`, `active`, `live`). Includes the startup and
/// shutdown entries and stale background results, exactly what was served.
pub const TIER_STATUS: &str = "zb_health_tier_status";
/// Counter: how often a tier's HTTP verdict went to 503 (BE-HLTH-008: the
/// number of transitions to failure); label `tier`. Counts what was
/// served, the startup gate and the drain included: a first answer of 503
/// (a tier still starting) is a transition from "not yet answered", then
/// each 200 → 503. A tier that stays 503 counts once; a `Degraded` tier
/// (an optional dependency down) answers 200 and counts nothing. Apart
/// from [`PROBE_FAILURES`], which counts each probe's own transitions.
pub const TIER_FAILURES: &str = "zb_health_tier_failures_total";
/// The `tracing` target of the tier transition lines.
pub const TIER_TARGET: &str = "zb_health::observe::tier";
/// Gauge: the status of a probe's latest run, as [`status_value`]; label
/// `probe` (the registered name).
pub const PROBE_STATUS: &str = "zb_health_probe_status";
/// Counter: how often a probe went from healthy (or never run) to failing;
/// label `probe`. A failure that persists counts once.
pub const PROBE_FAILURES: &str = "zb_health_probe_failures_total";
/// Histogram: how long each run of a probe took, in seconds, timeouts
/// included (at about the deadline); label `probe`.
pub const PROBE_DURATION: &str = "zb_health_probe_duration_seconds";

/// The numeric encoding of a status in the gauges: `Healthy` 2, `Degraded`
/// 1, `Unhealthy` 0. Higher is better; a tier at 0 answers 503.
pub const fn status_value(status: HealthStatus) -> f64 {
    (2 - status.severity()) as f64
}

/// Registers the help text and unit of every zb-health metric with the
/// installed recorder. Call it once after installing the recorder (an
/// exporter prints the help as `# HELP`); the metrics work without it.
pub fn describe_metrics() {
    describe_gauge!(
        TIER_STATUS,
        "Status of the tier's latest answer: 2 Healthy, 1 Degraded, 0 Unhealthy (503)."
    );
    describe_counter!(
        TIER_FAILURES,
        Unit::Count,
        "Transitions of the tier's HTTP verdict to 503 (startup and drain included)."
    );
    describe_gauge!(
        PROBE_STATUS,
        "Status of the probe's latest run: 2 Healthy, 1 Degraded, 0 Unhealthy."
    );
    describe_counter!(
        PROBE_FAILURES,
        Unit::Count,
        "Transitions of the probe from healthy to failing."
    );
    describe_histogram!(
        PROBE_DURATION,
        Unit::Seconds,
        "Duration of each run of the probe, timeouts included."
    );
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
    pub(crate) fn answered(
        &self,
        tier: Tag,
        status: HealthStatus,
        failing: impl FnOnce() -> String,
    ) {
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
            return;
        }
        let previous = slot.swap(verdict, Ordering::AcqRel);
        if previous == verdict {
            return;
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

/// What the `gauge!` family would declare at each call site.
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

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
    fn step(&mut self, status: HealthStatus, now: Instant, interval: Duration) -> (Line, bool) {
        let previous = self.last.replace(status);
        let healthy = status == HealthStatus::Healthy;
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
    let mut labels = LABELS.lock().unwrap_or_else(|e| e.into_inner());
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
    pub(crate) fn ran(
        &self,
        entry: &HealthEntry,
        error: &RunError,
        interval: Duration,
        starting: bool,
    ) {
        let (line, to_failure) = if starting {
            (Line::Quiet, false)
        } else {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.step(entry.status, Instant::now(), interval)
        };
        record(entry, error, line, to_failure, &self.keys);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use HealthStatus::{Degraded, Healthy, Unhealthy};

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn the_state_machine_logs_transitions_and_rate_limits_the_rest() {
        let t0 = Instant::now();
        let at = |s| t0 + secs(s);
        let interval = secs(60);
        let mut s = LogState::default();
        assert_eq!(s.step(Healthy, at(0), interval), (Line::Quiet, false));
        assert_eq!(
            s.step(Unhealthy, at(10), interval),
            (
                Line::Failing {
                    previous: Some(Healthy),
                    suppressed: 0
                },
                true
            )
        );
        for t in [20, 30, 69] {
            assert_eq!(s.step(Unhealthy, at(t), interval), (Line::Quiet, false));
        }
        assert_eq!(
            s.step(Unhealthy, at(70), interval),
            (
                Line::StillFailing {
                    failing_for: secs(60),
                    suppressed: 3
                },
                false
            )
        );
        assert_eq!(s.step(Unhealthy, at(80), interval), (Line::Quiet, false));
        assert_eq!(
            s.step(Degraded, at(90), interval),
            (
                Line::Failing {
                    previous: Some(Unhealthy),
                    suppressed: 1
                },
                false
            ),
            "a change of failing status is logged, not counted"
        );
        assert_eq!(s.step(Degraded, at(95), interval), (Line::Quiet, false));
        assert_eq!(
            s.step(Healthy, at(100), interval),
            (
                Line::Recovered {
                    failing_for: secs(90),
                    suppressed: 1
                },
                false
            )
        );
        assert_eq!(s.step(Healthy, at(110), interval), (Line::Quiet, false));
    }

    #[test]
    fn a_first_run_that_fails_is_a_transition() {
        let mut s = LogState::default();
        let (line, counted) = s.step(Degraded, Instant::now(), secs(1));
        assert_eq!(
            line,
            Line::Failing {
                previous: None,
                suppressed: 0
            }
        );
        assert!(counted);
    }

    #[test]
    fn a_zero_interval_logs_every_failing_run() {
        let now = Instant::now();
        let mut s = LogState::default();
        s.step(Unhealthy, now, Duration::ZERO);
        assert_eq!(
            s.step(Unhealthy, now, Duration::ZERO).0,
            Line::StillFailing {
                failing_for: Duration::ZERO,
                suppressed: 0
            }
        );
    }

    #[test]
    fn the_status_encoding_is_higher_is_better() {
        assert_eq!(HealthStatus::ALL.map(status_value), [2.0, 1.0, 0.0]);
    }
}
