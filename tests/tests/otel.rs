//! OpenTelemetry export (issue 41 §7, the `otel` feature): the probes'
//! statuses and durations, the tiers' statuses and the transitions reach
//! a real OTLP/gRPC receiver (a tonic server built on the OTLP protobuf
//! definitions), which decodes and checks them, the last transition at
//! the drain's end included. One process, one export
//! pipeline (the process's, as the `metrics` recorder is): the case of no
//! endpoint is `otel_unconfigured.rs`.

#[path = "support/otlp.rs"]
mod otlp;
mod support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::metrics::v1::metric;
use support::{fixed, request, switchable};
use zb_health::observe::otel::{
    DURATION, EXPORT_INTERVAL_VAR, FROM, METRICS_ENDPOINT_VAR, NAME, OtelSettings,
    SDK_DISABLED_VAR, STATUS, TIER, TIER_STATUS, TO, TRANSITION_EVENT, is_exporting,
};
use zb_health::prelude::{HealthRegistry, HealthStatus};

/// How long a test waits for a condition before it fails.
const PATIENCE: Duration = Duration::from_secs(30);

async fn until<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(found) = found() {
            return found;
        }
        assert!(started.elapsed() < PATIENCE, "{what} within {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The transition record of the probe or tier `name` (by `key`) to `to`.
fn transition<'a>(
    records: &'a [LogRecord],
    key: &str,
    name: &str,
    to: &str,
) -> Option<&'a LogRecord> {
    records.iter().find(|r| {
        r.event_name == TRANSITION_EVENT
            && otlp::text(&r.attributes, key) == Some(name)
            && otlp::text(&r.attributes, TO) == Some(to)
    })
}

#[actix_web::test]
async fn statuses_durations_and_transitions_reach_an_otlp_receiver_and_the_drain_flushes_the_last()
{
    let (collector, received) = otlp::receiver();
    let (flip, healthy) = switchable("otel-flip");
    let registry = HealthRegistry::new();
    registry
        .add(fixed("otel-up", HealthStatus::Healthy))
        .unwrap();
    registry
        .add(fixed("otel-down", HealthStatus::Unhealthy))
        .unwrap();
    registry.add(flip).unwrap();
    registry.set_transition_window(Duration::from_millis(50));
    let (app, running) = otlp::serve_exporting(
        registry,
        Duration::from_secs(1),
        OtelSettings::new()
            .endpoint(format!("http://{collector}"))
            .export_interval(Duration::from_millis(100))
            .service_name("otel-test"),
    );
    assert!(is_exporting(), "an endpoint installs the export at bind");
    // A thread names itself once it runs.
    until(
        "the metric reader's and the log processor's threads",
        || (otlp::sdk_threads() == 2).then_some(()),
    )
    .await;

    // One answer of `ready` runs the three probes: 503, as `otel-down` fails.
    assert_eq!(request(app, "GET", "/health/ready").await.status, 503);
    let up = until("otel-up's status", || {
        received.gauge(STATUS, NAME, "otel-up")
    })
    .await;
    assert_eq!(up, 1.0, "Healthy is 1");
    let down = until("otel-down's status", || {
        received.gauge(STATUS, NAME, "otel-down")
    })
    .await;
    assert_eq!(down, 0.0, "Unhealthy is 0");
    let ready = until("the ready tier's status", || {
        received.gauge(TIER_STATUS, TIER, "ready")
    })
    .await;
    assert_eq!(ready, 0.0, "a 503 tier is 0");

    // The duration: a histogram in seconds, per probe, with the buckets
    // up to the longest deadline, from the service named in code.
    let (service, duration) = received
        .metrics_named(DURATION)
        .into_iter()
        .next()
        .expect("the duration came with the statuses");
    assert_eq!(service.as_deref(), Some("otel-test"));
    assert_eq!(duration.unit, "s");
    let Some(metric::Data::Histogram(histogram)) = duration.data else {
        panic!("{DURATION} is a histogram: {duration:?}");
    };
    let point = histogram
        .data_points
        .iter()
        .find(|p| otlp::text(&p.attributes, NAME) == Some("otel-up"))
        .expect("otel-up's duration");
    assert!(point.count >= 1, "{point:?}");
    assert_eq!(point.explicit_bounds.last(), Some(&60.0), "{point:?}");

    // Transitions as log events: the first answers' (a probe's first
    // failing run, the tier's first 503), then a probe going down.
    let records = until("the first transitions", || {
        let records = received.log_records();
        (transition(&records, NAME, "otel-down", "Unhealthy").is_some()
            && transition(&records, TIER, "ready", "Unhealthy").is_some())
        .then_some(records)
    })
    .await;
    let tier = transition(&records, TIER, "ready", "Unhealthy").unwrap();
    assert_eq!(
        otlp::text(&tier.attributes, "health_check.kind"),
        Some("tier")
    );
    assert_eq!(otlp::text(&tier.attributes, FROM), None, "a first answer");
    healthy.store(false, Ordering::SeqCst);
    assert_eq!(request(app, "GET", "/health/ready").await.status, 503);
    let records = until("otel-flip's transition", || {
        let records = received.log_records();
        transition(&records, NAME, "otel-flip", "Unhealthy").map(|_| records.clone())
    })
    .await;
    let flip = transition(&records, NAME, "otel-flip", "Unhealthy").unwrap();
    assert_eq!(
        otlp::text(&flip.attributes, "health_check.kind"),
        Some("probe")
    );
    assert_eq!(otlp::text(&flip.attributes, FROM), Some("Healthy"));
    assert_eq!(
        otlp::text(&flip.attributes, "health_check.reason"),
        Some("unhealthy")
    );
    assert_eq!(flip.severity_text, "WARN");
    assert!(flip.time_unix_nano > 0, "{flip:?}");
    // And its gauge follows.
    until("otel-flip at 0", || {
        (received.gauge(STATUS, NAME, "otel-flip") == Some(0.0)).then_some(())
    })
    .await;
    running.abort();

    // The drain's end: a transition held in an hour-long window goes out
    // when the server's run ends (a real SIGTERM), before it returns.
    let (last, healthy) = switchable("otel-last");
    let registry = HealthRegistry::new();
    registry.add(last).unwrap();
    registry.set_transition_window(Duration::from_secs(3600));
    let (app, running) = otlp::serve_exporting(
        registry,
        Duration::from_millis(100),
        OtelSettings::new().endpoint(format!("http://{collector}")),
    );
    assert_eq!(request(app, "GET", "/health/ready").await.status, 200);
    healthy.store(false, Ordering::SeqCst);
    assert_eq!(request(app, "GET", "/health/ready").await.status, 503);
    assert!(
        transition(&received.log_records(), NAME, "otel-last", "Unhealthy").is_none(),
        "the window holds it"
    );
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    until("the drained server's end", || {
        running.is_finished().then_some(())
    })
    .await;
    running.await.unwrap().unwrap();
    let records = received.log_records();
    let last = transition(&records, NAME, "otel-last", "Unhealthy")
        .expect("the drain's end published and flushed the last transition");
    assert_eq!(otlp::text(&last.attributes, FROM), Some("Healthy"));
}

#[test]
fn the_standard_variables_configure_the_export_and_win_over_code() {
    let table = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let code = OtelSettings::new()
        .endpoint("http://127.0.0.1:1")
        .service_name("from-code");
    assert!(code.is_configured());
    // No endpoint anywhere: not configured, whatever else is set.
    let quiet = OtelSettings::new()
        .from_lookup(table(&[
            ("OTEL_SERVICE_NAME", "orders"),
            (EXPORT_INTERVAL_VAR, "1000"),
        ]))
        .unwrap();
    assert!(!quiet.is_configured());
    // One signal's endpoint configures the export.
    let metrics = OtelSettings::new()
        .from_lookup(table(&[(METRICS_ENDPOINT_VAR, "http://collector:4317")]))
        .unwrap();
    assert!(metrics.is_configured(), "{METRICS_ENDPOINT_VAR} alone");
    // OTEL_SDK_DISABLED turns off an endpoint set in code.
    let off = code
        .clone()
        .from_lookup(table(&[(SDK_DISABLED_VAR, "true")]))
        .unwrap();
    assert!(!off.is_configured());
    // Bad values are refused by name.
    for (pairs, variable) in [
        (&[(EXPORT_INTERVAL_VAR, "soon")][..], EXPORT_INTERVAL_VAR),
        (&[(EXPORT_INTERVAL_VAR, "0")][..], EXPORT_INTERVAL_VAR),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4317")][..],
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ),
        (
            &[(METRICS_ENDPOINT_VAR, "collector:4317")][..],
            METRICS_ENDPOINT_VAR,
        ),
        (&[(SDK_DISABLED_VAR, "yes")][..], SDK_DISABLED_VAR),
    ] {
        let pairs: &'static [(&'static str, &'static str)] = pairs;
        let error = code.clone().from_lookup(table(pairs)).unwrap_err();
        assert_eq!(error.variable, variable, "{error}");
    }
}

#[actix_web::test]
async fn an_endpoint_this_build_cannot_reach_stops_the_bind_by_name() {
    let registry = HealthRegistry::new();
    let endpoints = zb_health::prelude::map_zb_health(registry.clone());
    let error = zb_health::server::ZbHealthServer::new(
        registry,
        endpoints,
        zb_health::lifecycle::Drain::new(Duration::from_secs(1)),
    )
    .port(0)
    .otel(OtelSettings::new().endpoint("https://collector:4317"))
    .bind()
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("OtelSettings::endpoint=\"https://collector:4317\": ")
            && message.contains("no TLS"),
        "{message}"
    );
}
