//! `GET /metrics` without code (issue 41 §1, the `prometheus` feature):
//! the installed server puts the library's Prometheus recorder in place
//! and serves it on the management port, on the application port only
//! when asked or when there is no management port. Real sockets; one
//! process, one global recorder, shared by the tests of this file (the
//! case of an application's own recorder is `prometheus_app_recorder.rs`).

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use support::{Wire, fixed, request, serve_both_ports, until_status};
use zb_health::lifecycle::Drain;
use zb_health::observe::prometheus::{CONTENT_TYPE, PATH};
use zb_health::prelude::{HealthRegistry, HealthStatus, map_zb_health};
use zb_health::server::ZbHealthServer;

/// A server of one ready probe named `probe`, not yet bound.
fn server(probe: &'static str) -> ZbHealthServer {
    let registry = HealthRegistry::new();
    registry.add(fixed(probe, HealthStatus::Healthy)).unwrap();
    let endpoints = map_zb_health(registry.clone());
    ZbHealthServer::new(registry, endpoints, Drain::new(Duration::from_secs(1)))
}

/// Asks `ready` on `app` (which runs the probe and sets the tier's gauge),
/// then scrapes `scraped`: the scrape, checked to be the library's
/// exporter in the text format with the tier's and the probe's series,
/// and clean by `promtool check metrics`.
async fn ready_then_scrape(app: SocketAddr, scraped: SocketAddr, probe: &str) -> String {
    until_status(app, "/health/ready", 200).await;
    let scrape: Wire = request(scraped, "GET", PATH).await;
    assert_eq!(scrape.status, 200, "{}", scrape.text());
    assert_eq!(scrape.header("content-type"), Some(CONTENT_TYPE));
    assert!(CONTENT_TYPE.starts_with("text/plain; version=0.0.4"));
    let text = scrape.text();
    for line in [
        "zb_health_tier_status{tier=\"ready\"} 2".to_owned(),
        format!("zb_health_probe_status{{probe=\"{probe}\"}} 2"),
        format!("zb_health_probe_failures_total{{probe=\"{probe}\"}} 0"),
        "# TYPE zb_health_probe_duration_seconds histogram".to_owned(),
        "# HELP zb_health_tier_status Status of the tier's latest answer: 2 Healthy, 1 Degraded, 0 Unhealthy (503).".to_owned(),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line `{line}` in\n{text}"
        );
    }
    assert!(
        text.lines().any(|l| l.starts_with(&format!(
            "zb_health_probe_duration_seconds_bucket{{probe=\"{probe}\",le=\"60\"}}"
        ))),
        "the duration's buckets reach the longest deadline:\n{text}"
    );
    if let Err(said) = zb_health_testkit::promtool::check_metrics(&text) {
        panic!("promtool check metrics:\n{said}\non\n{text}");
    }
    text
}

#[actix_web::test]
async fn the_management_port_serves_the_library_metrics_and_the_application_port_does_not() {
    let (app, management, running) = serve_both_ports(server("prom-management"));
    ready_then_scrape(app, management, "prom-management").await;
    // Not asked for it: the application port has no /metrics.
    assert_eq!(request(app, "GET", PATH).await.status, 404);
    running.abort();
}

#[actix_web::test]
async fn asked_for_it_the_application_port_serves_the_metrics_too() {
    let (app, management, running) =
        serve_both_ports(server("prom-both").metrics_on_app_port(true));
    ready_then_scrape(app, management, "prom-both").await;
    ready_then_scrape(app, app, "prom-both").await;
    running.abort();
}

#[actix_web::test]
async fn without_a_management_port_the_application_port_serves_the_metrics() {
    let bound = server("prom-alone")
        .port(0)
        .management_port(None)
        .bind()
        .unwrap();
    let app = bound.addresses().application[0];
    let running = actix_web::rt::spawn(bound.run());
    ready_then_scrape(app, app, "prom-alone").await;
    running.abort();
}

/// The application's own `metrics` routes replace the library's exporter
/// on both ports, as before the feature.
#[actix_web::test]
async fn the_application_metrics_routes_replace_the_library_exporter() {
    let own = |routes: &mut actix_web::web::ServiceConfig| {
        routes.route(
            PATH,
            actix_web::web::get().to(|| async { "own_metric 1\n" }),
        );
    };
    let (app, management, running) = serve_both_ports(server("prom-own").metrics(own));
    for port in [app, management] {
        let scrape = request(port, "GET", PATH).await;
        assert_eq!(
            (scrape.status, scrape.text().as_str()),
            (200, "own_metric 1\n")
        );
    }
    running.abort();
}
