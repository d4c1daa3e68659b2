//! OpenTelemetry export (the `otel` feature): each probe's status and
//! duration and each tier's status as OTel metrics, and every tier and
//! probe transition as an OTel log event, sent over OTLP/gRPC
//! (`opentelemetry-otlp` on tonic; plain `http://`, no TLS).
//!
//! There is no semantic convention for health checks yet:
//! [semantic-conventions#1106](https://github.com/open-telemetry/semantic-conventions/issues/1106),
//! "Semantic Conventions for Health Check events", is open. The probes'
//! instruments take the de-facto names of Xabaril's `AspNetCore.HealthChecks`
//! OpenTelemetry publisher (`HealthChecks.Publisher.OpenTelemetry`), so a
//! dashboard made for it reads these; the tiers' gauge and the
//! transitions' attributes are zb-health's own, in the same family:
//!
//! | Instrument | Kind | Unit | Attribute | Value |
//! |---|---|---|---|---|
//! | [`STATUS`] `health_check.status` | gauge | — | [`NAME`] `health_check.name`: the probe | every run: 1 `Healthy`, 0.5 `Degraded`, 0 `Unhealthy` |
//! | [`DURATION`] `health_check.duration` | histogram | `s` | [`NAME`] `health_check.name` | every run's duration, timeouts included |
//! | [`TIER_STATUS`] `health_check.tier.status` | gauge | — | [`TIER`] `health_check.tier`: `ready`, `active`, `live` | every plain answer of the tier, as the status gauge |
//!
//! The status values are the `zb_health_*` gauges' ([`status_value`]:
//! 2 / 1 / 0) scaled to Xabaril's 1 / 0.5 / 0. The duration is a
//! histogram, not Xabaril's gauge of the last run: a gauge read once per
//! export interval would miss the slow runs in between; its buckets are
//! the Prometheus exporter's, 1 ms to 60 s.
//!
//! Each transition the library publishes ([`crate::publish`]: after
//! hysteresis, grouped per window, none while the service starts or
//! drains) is one log record with the event name [`TRANSITION_EVENT`]
//! `health_check.transition`, the time of the change, severity `WARN`
//! when it went to failing (a tier to 503, a probe to anything but
//! `Healthy`) and `INFO` otherwise, a one-line body
//! (`probe db: Healthy -> Unhealthy (timedOut)`), and these attributes:
//! `health_check.kind` (`tier` or `probe`), [`TIER`] or [`NAME`] (the
//! tier's or the probe's name), [`FROM`] `health_check.status.from`
//! (absent for a first state), [`TO`] `health_check.status.to`
//! (`Healthy`, `Degraded`, `Unhealthy`), `health_check.reason` and
//! `health_check.count` (the changes the window grouped).
//!
//! # Configuration
//!
//! [`OtelSettings`]: the standard variables, read by
//! [`ZbHealthServer::bind`](crate::server::ZbHealthServer::bind) over
//! what the code set with
//! [`ZbHealthServer::otel`](crate::server::ZbHealthServer::otel) (the
//! deployment's environment wins, as for `HEALTH_WEBHOOK_URL`).
//! **Nothing is exported while no endpoint is configured**: without one
//! there is no exporter, no thread, no task and no connection attempt,
//! so the feature costs one atomic load per probe run and tier answer.
//!
//! The pipeline is the process's, as the `metrics` recorder is: the first
//! server bound with an endpoint installs it; the metrics cover every
//! registry's probes; the transitions are those of the registries whose
//! servers were bound with it. The library keeps its own meter and logger
//! providers and never touches OpenTelemetry's global ones. At the end of
//! the drain, [`BoundZbHealthServer::run`](crate::server::BoundZbHealthServer::run)
//! flushes both, so the last values and transitions go out before the
//! process exits.

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::logs::{AnyValue, LogRecord, Logger, LoggerProvider, Severity};
use opentelemetry::metrics::{Gauge, Histogram, MeterProvider};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use zb_health_spec::{HealthStatus, Tag};

use super::{DURATION_BUCKETS, status_value};
use crate::publish::{Transition, TransitionKind, TransitionPublisher};
use crate::report::HealthEntry;
use crate::setting::SettingError;

/// Gauge: the status of a probe's latest run, 1 `Healthy`, 0.5
/// `Degraded`, 0 `Unhealthy`; attribute [`NAME`].
pub const STATUS: &str = "health_check.status";
/// Histogram: how long each run of a probe took, in seconds; attribute
/// [`NAME`].
pub const DURATION: &str = "health_check.duration";
/// Gauge: the status of a tier's latest plain answer, as [`STATUS`];
/// attribute [`TIER`].
pub const TIER_STATUS: &str = "health_check.tier.status";
/// The attribute naming the probe (Xabaril's).
pub const NAME: &str = "health_check.name";
/// The attribute naming the tier: `ready`, `active` or `live`.
pub const TIER: &str = "health_check.tier";
/// The event name of a transition's log record.
pub const TRANSITION_EVENT: &str = "health_check.transition";
/// A transition's status before the change.
pub const FROM: &str = "health_check.status.from";
/// A transition's status after the change.
pub const TO: &str = "health_check.status.to";

/// The OTLP endpoint of every signal, e.g. `http://collector:4317`.
pub const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// The OTLP endpoint of the metrics alone; wins over [`ENDPOINT_VAR`].
pub const METRICS_ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
/// The OTLP endpoint of the logs (the transitions) alone; wins over
/// [`ENDPOINT_VAR`].
pub const LOGS_ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT";
/// Milliseconds between two metric exports (OTel's default 60 000).
pub const EXPORT_INTERVAL_VAR: &str = "OTEL_METRIC_EXPORT_INTERVAL";
/// The `service.name` resource attribute.
pub const SERVICE_NAME_VAR: &str = "OTEL_SERVICE_NAME";
/// `true` turns the export off whatever else is set (OTel's kill switch).
pub const SDK_DISABLED_VAR: &str = "OTEL_SDK_DISABLED";

/// The instrumentation scope of the meter and the logger.
const SCOPE: &str = "zb-health";

/// Where and how the OpenTelemetry export goes: every field optional,
/// none set means no export. Set in code with
/// [`ZbHealthServer::otel`](crate::server::ZbHealthServer::otel); the
/// variables of [`from_lookup`](Self::from_lookup), read at bind, win.
///
/// ```
/// use std::time::Duration;
/// use zb_health::observe::otel::OtelSettings;
///
/// let settings = OtelSettings::new()
///     .endpoint("http://127.0.0.1:4317")
///     .export_interval(Duration::from_secs(15));
/// assert!(settings.is_configured());
/// assert!(!OtelSettings::new().service_name("orders").is_configured());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct OtelSettings {
    /// Each endpoint with where it came from (a variable, or the setter),
    /// which an error names.
    endpoint: Option<(String, &'static str)>,
    metrics_endpoint: Option<(String, &'static str)>,
    logs_endpoint: Option<(String, &'static str)>,
    export_interval: Option<Duration>,
    service_name: Option<String>,
    disabled: bool,
}

impl OtelSettings {
    /// No endpoint: nothing is exported.
    pub fn new() -> Self {
        Self::default()
    }

    /// The OTLP/gRPC endpoint of both signals, `http://host:port`.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some((url.into(), "OtelSettings::endpoint"));
        self
    }

    /// The endpoint of the metrics alone (with no other endpoint, the
    /// transitions are not exported).
    pub fn metrics_endpoint(mut self, url: impl Into<String>) -> Self {
        self.metrics_endpoint = Some((url.into(), "OtelSettings::metrics_endpoint"));
        self
    }

    /// The endpoint of the transitions' log events alone (with no other
    /// endpoint, the metrics are not exported).
    pub fn logs_endpoint(mut self, url: impl Into<String>) -> Self {
        self.logs_endpoint = Some((url.into(), "OtelSettings::logs_endpoint"));
        self
    }

    /// How often the metrics are exported (OTel's default: 60 s).
    pub fn export_interval(mut self, interval: Duration) -> Self {
        self.export_interval = Some(interval);
        self
    }

    /// The `service.name` of the exported resource; a manifest's install
    /// sets its `service`.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// Whether an endpoint is set (and the export not disabled): whether
    /// anything will be exported.
    pub fn is_configured(&self) -> bool {
        !self.disabled && (self.metrics_target().is_some() || self.logs_target().is_some())
    }

    /// These settings with the standard OpenTelemetry variables of
    /// `lookup` over them, each optional (an empty value is unset):
    ///
    /// | Variable | Sets |
    /// |---|---|
    /// | `OTEL_EXPORTER_OTLP_ENDPOINT` | [`endpoint`](Self::endpoint) |
    /// | `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` | [`metrics_endpoint`](Self::metrics_endpoint) |
    /// | `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` | [`logs_endpoint`](Self::logs_endpoint) |
    /// | `OTEL_METRIC_EXPORT_INTERVAL` | [`export_interval`](Self::export_interval), in milliseconds |
    /// | `OTEL_SERVICE_NAME` | [`service_name`](Self::service_name) |
    /// | `OTEL_SDK_DISABLED` | `true`: no export at all |
    ///
    /// The OTLP exporter reads its other variables itself
    /// (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`, `…_COMPRESSION`).
    ///
    /// # Errors
    ///
    /// The first variable that cannot be used, by name: an endpoint (or
    /// one set in code, by its setter) that is not `http://host[:port]`
    /// (the exporter has no TLS: `https://` is refused, not sent in the
    /// clear), an interval that is not a positive whole number of
    /// milliseconds, an `OTEL_SDK_DISABLED` that is not `true` or `false`.
    pub fn from_lookup(
        mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, SettingError> {
        let var = |name: &str| crate::setting::non_blank(&lookup, name);
        let refused = |variable: &'static str, value: String, reason: &str| SettingError {
            variable,
            value,
            reason: reason.to_owned(),
        };
        for (variable, slot) in [
            (ENDPOINT_VAR, &mut self.endpoint),
            (METRICS_ENDPOINT_VAR, &mut self.metrics_endpoint),
            (LOGS_ENDPOINT_VAR, &mut self.logs_endpoint),
        ] {
            if let Some(url) = var(variable) {
                *slot = Some((url, variable));
            }
        }
        if let Some(ms) = var(EXPORT_INTERVAL_VAR) {
            match ms.trim().parse::<u64>() {
                Ok(ms) if ms > 0 => self.export_interval = Some(Duration::from_millis(ms)),
                _ => {
                    return Err(refused(
                        EXPORT_INTERVAL_VAR,
                        ms,
                        "a positive whole number of milliseconds, e.g. 60000",
                    ));
                }
            }
        }
        if let Some(name) = var(SERVICE_NAME_VAR) {
            self.service_name = Some(name);
        }
        if let Some(disabled) = var(SDK_DISABLED_VAR) {
            self.disabled = match disabled.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(refused(SDK_DISABLED_VAR, disabled, "`true` or `false`")),
            };
        }
        self.check()?;
        Ok(self)
    }

    /// These settings where `other` sets nothing: a service name given
    /// before (the manifest's) stays unless `other` names one.
    pub(crate) fn or(self, other: Self) -> Self {
        Self {
            endpoint: other.endpoint.or(self.endpoint),
            metrics_endpoint: other.metrics_endpoint.or(self.metrics_endpoint),
            logs_endpoint: other.logs_endpoint.or(self.logs_endpoint),
            export_interval: other.export_interval.or(self.export_interval),
            service_name: other.service_name.or(self.service_name),
            disabled: other.disabled || self.disabled,
        }
    }

    /// The metrics' endpoint and where it came from.
    fn metrics_target(&self) -> Option<(&str, &'static str)> {
        self.target(&self.metrics_endpoint)
    }

    /// The logs' endpoint and where it came from.
    fn logs_target(&self) -> Option<(&str, &'static str)> {
        self.target(&self.logs_endpoint)
    }

    /// A signal's own endpoint, else the shared one.
    fn target<'a>(
        &'a self,
        own: &'a Option<(String, &'static str)>,
    ) -> Option<(&'a str, &'static str)> {
        let (url, origin) = own.as_ref().or(self.endpoint.as_ref())?;
        Some((url, origin))
    }

    /// Refuses an endpoint this build cannot reach, naming the variable or
    /// the setter it came from.
    fn check(&self) -> Result<(), SettingError> {
        for (url, origin) in [&self.endpoint, &self.metrics_endpoint, &self.logs_endpoint]
            .into_iter()
            .flatten()
        {
            check_endpoint(url).map_err(|reason| SettingError {
                variable: origin,
                value: url.clone(),
                reason,
            })?;
        }
        Ok(())
    }
}

/// An OTLP/gRPC endpoint this build can reach: an `http://host:port` URL,
/// read as every URL zb-health calls
/// ([`zb_health_spec::upstream::parse_url`]).
fn check_endpoint(url: &str) -> Result<(), String> {
    if url
        .get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
    {
        return Err(
            "zb-health's OTLP export carries no TLS: use `http://` to a collector beside the service"
                .to_owned(),
        );
    }
    zb_health_spec::upstream::parse_url(url)
        .map(drop)
        .map_err(|p| {
            format!(
                "{}: write the endpoint as `http://host:port`, e.g. http://127.0.0.1:4317",
                p.message
            )
        })
}

/// The process's export, once one is configured.
struct Pipeline {
    /// The settings it was made with, to tell a later bind that differs.
    settings: OtelSettings,
    metrics: Option<(SdkMeterProvider, Instruments)>,
    logs: Option<(SdkLoggerProvider, SdkLogger)>,
}

struct Instruments {
    status: Gauge<f64>,
    duration: Histogram<f64>,
    tier_status: Gauge<f64>,
}

static PIPELINE: OnceLock<Pipeline> = OnceLock::new();

/// Whether this process exports OpenTelemetry: a server was bound with an
/// endpoint configured.
pub fn is_exporting() -> bool {
    PIPELINE.get().is_some()
}

/// What a server bound with an export configured holds: the transition
/// publisher for its registry, and the flush at the end of its drain.
pub(crate) struct Exporting {
    pipeline: &'static Pipeline,
}

impl Exporting {
    /// The transitions' publisher, when the logs are exported.
    pub(crate) fn publisher(&self) -> Option<OtelPublisher> {
        self.pipeline
            .logs
            .as_ref()
            .map(|(_, logger)| OtelPublisher {
                logger: logger.clone(),
            })
    }

    /// Exports what is pending, metrics and logs, and waits for it (each
    /// bounded by the exporter's timeout). The pipeline stays usable.
    pub(crate) fn flush(&self) {
        let pipeline = self.pipeline;
        if let Some((provider, _)) = &pipeline.metrics
            && let Err(error) = provider.force_flush()
        {
            tracing::warn!(%error, "the OpenTelemetry metrics were not flushed");
        }
        if let Some((provider, _)) = &pipeline.logs
            && let Err(error) = provider.force_flush()
        {
            tracing::warn!(%error, "the OpenTelemetry transitions were not flushed");
        }
    }
}

/// Installs the process's export for `settings`, unless it is installed
/// already (then a different configuration is logged and ignored): `None`,
/// with nothing started, when no endpoint is configured. The exporters'
/// connections live on `runtime` (the library's probe thread), which
/// outlives any request.
///
/// # Errors
///
/// The exporter refuses the configuration (named as the variable or the
/// setting that made it).
pub(crate) fn install(
    settings: OtelSettings,
    runtime: Option<&tokio::runtime::Handle>,
) -> Result<Option<Exporting>, SettingError> {
    // The endpoints were checked by `from_lookup`, which every bind runs.
    if !settings.is_configured() {
        return Ok(None);
    }
    if let Some(pipeline) = PIPELINE.get() {
        if pipeline.settings != settings {
            tracing::warn!(
                "OpenTelemetry export is installed already, with other settings; this server's transitions go to it as it is"
            );
        }
        return Ok(Some(Exporting { pipeline }));
    }
    // tonic's channel spawns its connection task where it is made.
    let _entered = runtime.map(tokio::runtime::Handle::enter);
    let pipeline = build(settings)?;
    // A concurrent bind may have won the race: its pipeline serves both,
    // and this one (never used) is dropped.
    let pipeline = PIPELINE.get_or_init(|| pipeline);
    tracing::info!(
        metrics = ?pipeline.settings.metrics_target().map(|(url, _)| url),
        logs = ?pipeline.settings.logs_target().map(|(url, _)| url),
        "zb-health exports OpenTelemetry over OTLP/gRPC"
    );
    Ok(Some(Exporting { pipeline }))
}

fn build(settings: OtelSettings) -> Result<Pipeline, SettingError> {
    let service = settings
        .service_name
        .clone()
        .unwrap_or_else(|| "zb-health".to_owned());
    let resource = Resource::builder().with_service_name(service).build();
    let refused =
        |(url, origin): (&str, &'static str), error: &dyn std::fmt::Display| SettingError {
            variable: origin,
            value: url.to_owned(),
            reason: format!("the OTLP exporter refused it: {error}"),
        };
    let metrics = match settings.metrics_target() {
        None => None,
        Some(endpoint) => {
            let exporter = opentelemetry_otlp::MetricExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint.0)
                .build()
                .map_err(|e| refused(endpoint, &e))?;
            let mut reader = PeriodicReader::builder(exporter);
            if let Some(interval) = settings.export_interval {
                reader = reader.with_interval(interval);
            }
            let provider = SdkMeterProvider::builder()
                .with_reader(reader.build())
                .with_resource(resource.clone())
                .build();
            let meter = provider.meter(SCOPE);
            let instruments = Instruments {
                status: meter
                    .f64_gauge(STATUS)
                    .with_description(
                        "Status of the probe's latest run: 1 Healthy, 0.5 Degraded, 0 Unhealthy.",
                    )
                    .build(),
                duration: meter
                    .f64_histogram(DURATION)
                    .with_unit("s")
                    .with_description("Duration of each run of the probe, timeouts included.")
                    .with_boundaries(DURATION_BUCKETS.to_vec())
                    .build(),
                tier_status: meter
                    .f64_gauge(TIER_STATUS)
                    .with_description(
                        "Status of the tier's latest answer: 1 Healthy, 0.5 Degraded, 0 Unhealthy (503).",
                    )
                    .build(),
            };
            Some((provider, instruments))
        }
    };
    let logs = match settings.logs_target() {
        None => None,
        Some(endpoint) => {
            let exporter = opentelemetry_otlp::LogExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint.0)
                .build()
                .map_err(|e| refused(endpoint, &e))?;
            // Batched on the SDK's own thread: emitting never waits on
            // the network, which the probe thread must not.
            let provider = SdkLoggerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource)
                .build();
            let logger = provider.logger(SCOPE);
            Some((provider, logger))
        }
    };
    Ok(Pipeline {
        settings,
        metrics,
        logs,
    })
}

/// A status as the OTel gauges carry it: the `zb_health_*` gauges'
/// [`status_value`] scaled to Xabaril's 1 `Healthy`, 0.5 `Degraded`, 0
/// `Unhealthy`.
fn otel_value(status: HealthStatus) -> f64 {
    status_value(status) / status_value(HealthStatus::Healthy)
}

/// The instruments, while the metrics are exported.
#[inline]
fn instruments() -> Option<&'static Instruments> {
    PIPELINE
        .get()?
        .metrics
        .as_ref()
        .map(|(_, instruments)| instruments)
}

/// Records one run of a probe; nothing while no metrics are exported.
#[inline]
pub(super) fn probe_ran(entry: &HealthEntry) {
    if let Some(instruments) = instruments() {
        let name = [KeyValue::new(NAME, entry.name.clone())];
        instruments.status.record(otel_value(entry.status), &name);
        instruments
            .duration
            .record(entry.duration.as_secs_f64(), &name);
    }
}

/// Records one plain answer of a tier; nothing while no metrics are
/// exported.
#[inline]
pub(super) fn tier_answered(tier: Tag, status: HealthStatus) {
    if let Some(instruments) = instruments() {
        instruments
            .tier_status
            .record(otel_value(status), &[KeyValue::new(TIER, tier.as_str())]);
    }
}

/// The transitions as OTel log events (see the [module](self)): a
/// [`TransitionPublisher`] the server adds to its registry at bind when
/// the logs are exported.
pub(crate) struct OtelPublisher {
    logger: SdkLogger,
}

impl OtelPublisher {
    fn emit(&self, t: &Transition) {
        let failing = match t.kind {
            TransitionKind::Tier => !t.to.is_serving(),
            TransitionKind::Probe => t.to != HealthStatus::Healthy,
        };
        let mut record = self.logger.create_log_record();
        record.set_event_name(TRANSITION_EVENT);
        record.set_timestamp(t.at);
        record.set_severity_number(if failing {
            Severity::Warn
        } else {
            Severity::Info
        });
        record.set_severity_text(if failing { "WARN" } else { "INFO" });
        let from = t.from.map_or("none", HealthStatus::as_str);
        record.set_body(AnyValue::from(format!(
            "{} {}: {from} -> {} ({})",
            t.kind.as_str(),
            t.name,
            t.to.as_str(),
            t.reason
        )));
        let named = match t.kind {
            TransitionKind::Tier => TIER,
            TransitionKind::Probe => NAME,
        };
        record.add_attribute("health_check.kind", t.kind.as_str());
        record.add_attribute(named, AnyValue::String(t.name.clone().into()));
        if let Some(from) = t.from {
            record.add_attribute(FROM, from.as_str());
        }
        record.add_attribute(TO, t.to.as_str());
        record.add_attribute("health_check.reason", t.reason);
        record.add_attribute("health_check.count", i64::from(t.count));
        self.logger.emit(record);
    }
}

impl TransitionPublisher for OtelPublisher {
    fn publish<'a>(
        &'a self,
        batch: &'a [Transition],
    ) -> futures_util::future::BoxFuture<'a, Result<(), String>> {
        // Emitting queues the record for the SDK's batch thread.
        batch.iter().for_each(|t| self.emit(t));
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error of `OTEL_EXPORTER_OTLP_ENDPOINT=url`, if any.
    fn refused(url: &str) -> Option<SettingError> {
        OtelSettings::default()
            .from_lookup(|name| (name == ENDPOINT_VAR).then(|| url.to_owned()))
            .err()
    }

    #[test]
    fn an_endpoint_is_refused_unless_it_is_an_http_url_naming_its_variable() {
        for (url, says) in [
            ("https://collector:4317", "carries no TLS"),
            ("HTTPS://collector:4317", "carries no TLS"),
            ("grpc://collector:4317", "does not start with `http://`"),
            ("collector:4317", "is not a URL"),
            ("http://", "has no host"),
            ("http://collector:otlp", "port that is not a number"),
        ] {
            let error = refused(url).unwrap_or_else(|| panic!("{url} accepted"));
            assert_eq!(error.variable, ENDPOINT_VAR, "{url}");
            assert!(error.reason.contains(says), "{url}: {}", error.reason);
        }
        for url in [
            "http://127.0.0.1:4317",
            "http://[::1]:4317",
            "http://collector",
        ] {
            assert!(refused(url).is_none(), "{url} refused");
        }
    }
}
