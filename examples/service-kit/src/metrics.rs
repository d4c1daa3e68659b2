//! `GET /metrics`: every `metrics` value of the process, zb-health's
//! included, in Prometheus text (see `spec/observability.md`).

use std::sync::OnceLock;
use std::time::Duration;

use actix_web::{HttpResponse, web};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// The process's Prometheus recorder, installed as the global `metrics`
/// recorder on first use; panics if another one is installed already.
pub fn prometheus() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        // Buckets make the duration a Prometheus histogram (a summary
        // otherwise); from 1 ms to the longest allowed deadline, 60 s.
        let buckets = [
            0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0,
        ];
        let matcher = Matcher::Full(zb_health::observe::PROBE_DURATION.to_owned());
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(matcher, &buckets)
            .expect("the bucket list is not empty")
            .install_recorder()
            .expect("no other metrics recorder is installed");
        zb_health::observe::describe_metrics();
        // Rendering folds the histogram samples in; between scrapes this
        // keeps them from piling up.
        let upkeep = handle.clone();
        std::thread::Builder::new()
            .name("metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(Duration::from_secs(5));
                    upkeep.run_upkeep();
                }
            })
            .expect("the upkeep thread starts");
        handle
    })
}

/// Mounts `GET /metrics`. Installs the recorder ([`prometheus`]) if it is
/// not yet installed.
pub fn configure_metrics(config: &mut web::ServiceConfig) {
    let handle = prometheus();
    config.route(
        "/metrics",
        web::get().to(move || async move {
            HttpResponse::Ok()
                .content_type("text/plain; version=0.0.4; charset=utf-8")
                .body(handle.render())
        }),
    );
}
