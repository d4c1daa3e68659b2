//! The `prometheus` feature when the application installed its own
//! `metrics` recorder first: the library keeps out of the way, serves no
//! second `/metrics`, says so once at `INFO`, and its series go to the
//! application's recorder. A file of its own: the global recorder is one
//! per process.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use metrics_util::{CompositeKey, MetricKind};
use support::{LogText, fixed, request, serve_both_ports, until_status};
use zb_health::lifecycle::Drain;
use zb_health::observe::prometheus::{PATH, install};
use zb_health::prelude::{HealthRegistry, HealthStatus, map_zb_health};
use zb_health::server::ZbHealthServer;

#[actix_web::test]
async fn an_application_recorder_installed_first_gets_the_series_and_no_second_metrics_is_served() {
    // The application's recorder, before the server starts.
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::set_global_recorder(recorder).unwrap();

    // The server binds on this thread, where the capture listens.
    let lines = Arc::new(Mutex::new(Vec::new()));
    let _capture = tracing::subscriber::set_default(LogText(lines.clone()));
    let registry = HealthRegistry::new();
    registry
        .add(fixed("app-recorded", HealthStatus::Healthy))
        .unwrap();
    let server = || {
        ZbHealthServer::new(
            registry.clone(),
            map_zb_health(registry.clone()),
            Drain::new(Duration::from_secs(1)),
        )
        .metrics_on_app_port(true)
    };
    let (app, management, running) = serve_both_ports(server());
    // A second server in the process finds the same recorder.
    let (_, second_management, second) = serve_both_ports(server());
    assert!(!install(), "the application's recorder stays the one");

    until_status(app, "/health/ready", 200).await;
    for port in [app, management, second_management] {
        assert_eq!(request(port, "GET", PATH).await.status, 404);
    }

    // The tier's and the probe's series went to the application's recorder.
    let snapshot = snapshotter.snapshot().into_hashmap();
    let gauge = |name: &str, label: (&'static str, &'static str)| {
        let key = CompositeKey::new(
            MetricKind::Gauge,
            metrics::Key::from_parts(name.to_owned(), vec![metrics::Label::new(label.0, label.1)]),
        );
        match snapshot.get(&key) {
            Some((_, _, DebugValue::Gauge(v))) => Some(v.into_inner()),
            _ => None,
        }
    };
    assert_eq!(
        gauge("zb_health_tier_status", ("tier", "ready")),
        Some(2.0),
        "{snapshot:?}"
    );
    assert_eq!(
        gauge("zb_health_probe_status", ("probe", "app-recorded")),
        Some(2.0),
        "{snapshot:?}"
    );

    // One line, for both servers and the call above.
    let said: Vec<String> = lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("the application installed a `metrics` recorder"))
        .cloned()
        .collect();
    assert_eq!(said.len(), 1, "{:?}", lines.lock().unwrap());
    assert!(
        said[0].starts_with("zb_health::observe::prometheus"),
        "{said:?}"
    );
    running.abort();
    second.abort();
}
