//! OpenTelemetry export with no endpoint (issue 41 §7, the `otel`
//! feature): nothing is exported and nothing is started, even with the
//! service name and the interval set. Its own process: the export is the
//! process's, so `otel.rs`'s would be seen here.

#[path = "support/otlp.rs"]
mod otlp;
mod support;

use std::time::Duration;

use support::{fixed, request};
use zb_health::observe::otel::{OtelSettings, is_exporting};
use zb_health::prelude::{HealthRegistry, HealthStatus};

#[actix_web::test]
async fn without_an_endpoint_nothing_is_exported_and_nothing_is_started() {
    // Where an exporter left at its default would send: OTLP/gRPC's
    // 127.0.0.1:4317. Some other process may hold it; then the thread
    // and pipeline checks below still stand.
    let default = otlp::receiver_on("127.0.0.1:4317");
    let registry = HealthRegistry::new();
    registry
        .add(fixed("quiet-down", HealthStatus::Unhealthy))
        .unwrap();
    registry.set_transition_window(Duration::from_millis(20));
    let (app, running) = otlp::serve_exporting(
        registry,
        Duration::from_secs(1),
        OtelSettings::new()
            .service_name("quiet")
            .export_interval(Duration::from_millis(20)),
    );
    // Runs, a failing probe and a 503 tier: values and transitions that
    // an installed export would send within a few of its intervals.
    for _ in 0..5 {
        assert_eq!(request(app, "GET", "/health/ready").await.status, 503);
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    assert!(!is_exporting(), "no endpoint, no export");
    assert_eq!(
        otlp::sdk_threads(),
        0,
        "no OpenTelemetry thread runs: {:?}",
        otlp::thread_names()
    );
    if let Some((_, received)) = default {
        assert!(
            received.is_empty(),
            "nothing connected to the default endpoint"
        );
    }
    running.abort();
}
