//! `GET /metrics` without code (the `prometheus` feature): the library's
//! own Prometheus recorder, from `metrics-exporter-prometheus`, and the
//! route that renders it in the Prometheus text format.
//!
//! [`ZbHealthServer`](crate::server::ZbHealthServer) uses it at
//! [`bind`](crate::server::ZbHealthServer::bind): it [`install`]s the
//! recorder and serves [`PATH`] on the management port (and on the
//! application port when asked, or when there is no management port),
//! unless the application gave its own
//! [`metrics`](crate::server::ZbHealthServer::metrics) routes. An
//! application with its own `HttpServer` mounts [`configure`].
//!
//! The series are the ones the [module](super) records, under the same
//! names and labels, so `zb-health alerts` and the dashboard read them
//! unchanged; [`PROBE_DURATION`] is a histogram with buckets from 1 ms to
//! the longest probe deadline, 60 s.
//!
//! **An application's recorder comes first.** The `metrics` facade has one
//! global recorder per process. When the application installed one before
//! the server starts, installing the library's fails, and the library
//! keeps out of the way: the `zb_health_*` series go to the application's
//! recorder, zb-health serves no `/metrics` of its own (the application's
//! exporter does), and one `INFO` line says so.

use std::sync::OnceLock;
use std::time::Duration;

use actix_web::{HttpResponse, web};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use super::{DURATION_BUCKETS, PROBE_DURATION, describe_metrics};

/// Where the exporter is served.
pub const PATH: &str = "/metrics";

/// The Prometheus text exposition format, version 0.0.4: what Prometheus
/// scrapes and `promtool check metrics` reads.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How often the histogram samples are folded in between scrapes (a
/// scrape folds them in too), so they do not pile up.
const UPKEEP: Duration = Duration::from_secs(5);

/// Installs the library's recorder as the process's global `metrics`
/// recorder, once per process, unless one is installed already. Returns
/// whether the library's recorder is the one installed: `false` means the
/// application's is, which then gets every `zb_health_*` series, and
/// zb-health serves no `/metrics` (logged once, at `INFO`).
///
/// Cheap after the first call.
pub fn install() -> bool {
    exporter().is_some()
}

/// Mounts `GET /metrics` ([`PATH`], [`CONTENT_TYPE`]), which renders every
/// series of the library's recorder, the application's own `metrics`
/// values included. [`install`]s the recorder first; mounts nothing when
/// the application's recorder is installed.
pub fn configure(config: &mut web::ServiceConfig) {
    if let Some(handle) = exporter() {
        config.route(
            PATH,
            web::get().to(move || async move {
                HttpResponse::Ok()
                    .content_type(CONTENT_TYPE)
                    .body(handle.render())
            }),
        );
    }
}

/// The library's exporter, installed on first use; `None` when another
/// recorder was installed first.
fn exporter() -> Option<&'static PrometheusHandle> {
    static EXPORTER: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    EXPORTER
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full(PROBE_DURATION.to_owned()), &DURATION_BUCKETS)
                .expect("the bucket list is not empty")
                .build_recorder();
            let handle = recorder.handle();
            // Fails only when a global recorder is set: the application's.
            if metrics::set_global_recorder(recorder).is_err() {
                tracing::info!(
                    "the application installed a `metrics` recorder: the zb_health_* series go to it, and zb-health serves no /metrics of its own"
                );
                return None;
            }
            describe_metrics();
            let upkeep = handle.clone();
            let started = std::thread::Builder::new()
                .name("zb-health-metrics".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(UPKEEP);
                        upkeep.run_upkeep();
                    }
                });
            if let Err(e) = started {
                // Scrapes still fold the samples in; only the memory
                // between two scrapes grows.
                tracing::warn!(error = %e, "the metrics upkeep thread did not start");
            }
            Some(handle)
        })
        .as_ref()
}
