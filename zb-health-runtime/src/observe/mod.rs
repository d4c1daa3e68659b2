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
//! Events have the target [`PROBE_TARGET`], `zb_health::observe`. No log
//! line ever reaches a response body (BE-HLTH-007).
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
//! Recorded through whatever `metrics` recorder the process has (none:
//! they cost next to nothing): the application's, or, with the
//! `prometheus` feature, the library's own, which the server installs and
//! serves at `GET /metrics` (`observe::prometheus`). Names and labels follow
//! Prometheus conventions; [`describe_metrics`] registers their help
//! texts and units.
//!
//! | Metric | Kind | Labels | Updated |
//! |---|---|---|---|
//! | [`TIER_STATUS`] | gauge | `tier` | every answer of the tier |
//! | [`TIER_FAILURES`] | counter | `tier` | by 1 on each transition of the tier's verdict to 503 |
//! | [`PROBE_STATUS`] | gauge | `probe` | every run of the probe |
//! | [`PROBE_FAILURES`] | counter | `probe` | every run (by 1 on a transition to failure) |
//! | [`PROBE_DURATION`] | histogram | `probe` | every run |
//! | [`crate::publish::DROPPED_TRANSITIONS`] | counter | — | by 1 for each transition the publishers' queue had no room for |
//! | [`MAINTENANCE`] | gauge | — | when maintenance begins and ends |
//! | [`STEPPED_DOWN`] | gauge | — | when this node steps down and stands again |
//! | [`RESTART_REQUESTED`] | gauge | — | when a `restart_after` restart is requested and withdrawn |
//! | [`STARTING`] | gauge | — | when the first startup gate is declared and when gates open or fail |
//! | [`DRAINING`] | gauge | — | when the drain begins |
//! | [`CLUSTER_ACTIVE`] | gauge | — | each run of the active-node probe, on a change |
//! | [`CLUSTER_MEMBERS_UP`] | gauge | — | each rebuild of a chitchat view's snapshot, on a change |
//! | [`SHARED_FAILING`] | gauge | `probe` | when a shared probe's published verdict changes |
//! | `zb_health_certificate_expires_in_seconds` (`CERTIFICATE_EXPIRES_IN`, feature `certificate`) | gauge | `probe` | each run of a certificate probe that reads its files |
//!
//! With the `otel` feature, the probes' and tiers' statuses and durations
//! also go out as OpenTelemetry metrics, and the transitions as log
//! events, under Xabaril's names (`health_check.status`, …): see
//! `observe::otel`.
//!
//! Statuses are encoded by [`status_value`]: `Healthy` 2, `Degraded` 1,
//! `Unhealthy` 0, so "higher is better", `== 0` is a 503 and `< 2` is
//! anything short of healthy.

use std::time::Duration;

use metrics::{Level, Metadata, Unit, describe_counter, describe_gauge, describe_histogram};
use zb_health_spec::HealthStatus;

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
/// The `tracing` target of the tier transition lines: a name kept for log
/// filters, not a module (they are written in `record.rs`).
pub const TIER_TARGET: &str = "zb_health::observe::tier";
/// The target of the probes' transition lines: the module's own path,
/// stated so that it stays put whichever file writes them.
pub const PROBE_TARGET: &str = "zb_health::observe";
/// Gauge: the status of a probe's latest run, as [`status_value`]; label
/// `probe` (the registered name).
pub const PROBE_STATUS: &str = "zb_health_probe_status";
/// Counter: how often a probe went from healthy (or never run) to failing;
/// label `probe`. A failure that persists counts once.
pub const PROBE_FAILURES: &str = "zb_health_probe_failures_total";
/// Histogram: how long each run of a probe took, in seconds, timeouts
/// included (at about the deadline); label `probe`.
pub const PROBE_DURATION: &str = "zb_health_probe_duration_seconds";
/// Gauge: 1 while the pod is in maintenance
/// ([`Lifecycle::begin_maintenance`](crate::lifecycle::Lifecycle::begin_maintenance)),
/// 0 after; no labels. Unset until the first maintenance.
pub const MAINTENANCE: &str = "zb_health_maintenance";
/// Gauge: 1 while this node has stepped down from the active role
/// ([`StepDown`](crate::cluster::StepDown), with the `cluster` feature), 0
/// after; no labels. Unset until the first step-down.
pub const STEPPED_DOWN: &str = "zb_health_stepped_down";
/// Gauge: 1 while this node asks the orchestrator to restart it (a
/// probe's `restart_after`: `live` answers 503), 0 after; no labels.
/// Unset until the first request.
pub const RESTART_REQUESTED: &str = "zb_health_restart_requested";
/// Gauge: 1 while the service starts (a startup gate is pending and none
/// failed), 0 once every gate opened or one failed; no labels. Unset
/// without startup gates. Alerts on `ready` leave a starting pod out.
pub const STARTING: &str = "zb_health_starting";
/// Gauge: seconds until the first of a certificate probe's certificates
/// expires, negative once expired; labelled `probe`. Set by each run of
/// the certificate probe that reads its files.
#[cfg(feature = "certificate")]
pub const CERTIFICATE_EXPIRES_IN: &str = "zb_health_certificate_expires_in_seconds";
/// Gauge: 1 from the moment the drain begins (the pod is going away); no
/// labels. Unset before. Alerts on `ready` leave a draining pod out.
pub const DRAINING: &str = "zb_health_draining";
/// Gauge: 1 while this node's active-node rule makes it the active node,
/// 0 otherwise (standby, handing over, a minority, no cluster yet); no
/// labels. Set by each run of the active-node probe, on a change. Summed
/// over the fleet it is the number of active nodes: exactly 1 (ZB-1).
pub const CLUSTER_ACTIVE: &str = "zb_health_cluster_active";
/// Gauge: how many members this node sees `Up` and reachable, itself
/// included; no labels. Set by a chitchat view at each rebuild of its
/// snapshot, on a change.
pub const CLUSTER_MEMBERS_UP: &str = "zb_health_cluster_members_up";
/// Gauge: this node's published verdict of a shared probe, 1 failing, 0
/// not; labelled `probe`. Set when it changes. Summed by `probe` over the
/// fleet it is how many nodes fail the shared dependency.
pub const SHARED_FAILING: &str = "zb_health_shared_failing";

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
    describe_gauge!(
        MAINTENANCE,
        "1 while an operator holds the pod in maintenance (ready answers 503), 0 after."
    );
    describe_gauge!(
        STEPPED_DOWN,
        "1 while this node has stepped down from the active role, 0 after."
    );
    describe_gauge!(
        STARTING,
        "1 while a startup gate is pending (and none failed), 0 once started or failed."
    );
    describe_gauge!(DRAINING, "1 once the drain has begun.");
    describe_gauge!(
        CLUSTER_ACTIVE,
        "1 while this node is the cluster's active node by its active-node rule, 0 otherwise."
    );
    describe_gauge!(
        CLUSTER_MEMBERS_UP,
        "Members this node sees Up and reachable, itself included."
    );
    describe_gauge!(
        SHARED_FAILING,
        "This node's published verdict of the shared probe: 1 failing, 0 not."
    );
    #[cfg(feature = "certificate")]
    describe_gauge!(
        CERTIFICATE_EXPIRES_IN,
        Unit::Seconds,
        "Seconds until the first of the certificate probe's certificates expires; negative once expired."
    );
    describe_counter!(
        crate::publish::DROPPED_TRANSITIONS,
        Unit::Count,
        "Transitions the publishers' queue had no room for."
    );
    describe_gauge!(
        RESTART_REQUESTED,
        "1 while this node asks for a restart (live answers 503: a restart_after probe fails here alone), 0 after."
    );
}

/// The buckets of the probes' duration histograms, in seconds: from 1 ms
/// to the longest deadline a probe may have. Prometheus's
/// [`PROBE_DURATION`] and OpenTelemetry's `health_check.duration` share
/// them.
#[cfg(any(feature = "prometheus", feature = "otel"))]
const DURATION_BUCKETS: [f64; 14] = [
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    zb_health_spec::duration::MAX_PROBE_TIMEOUT.as_secs_f64(),
];

/// What the `gauge!` family would declare at each call site; one for the
/// probes', the tiers' and the batteries' metrics, whose module path is
/// this one.
pub(crate) static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

#[cfg(feature = "otel")]
pub mod otel;
#[cfg(feature = "prometheus")]
pub mod prometheus;
mod record;

pub(crate) use record::{ProbeLog, RunError, TierLog, unhealthy_entries};
