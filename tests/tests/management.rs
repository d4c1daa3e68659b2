//! The management port (isolation): the tiers on their own `HttpServer`
//! answer while every worker of the application's server is blocked; the
//! same route on the application's port does not; and a probe run that an
//! application worker started finishes, for the management port, while that
//! worker's thread is blocked. Real sockets on 127.0.0.1. The drain over
//! both servers is `drain.rs` (`with_a_management_server_…`).

mod support;

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{HttpResponse, web};
use support::{Server, request, serve, serve_with};
use zb_health::http::ZbHealthEndpoints;
use zb_health::prelude::{
    HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, from_fn, map_zb_health,
};

/// Generous: only a broken server gets near it.
const DEADLINE: Duration = Duration::from_secs(30);

#[actix_web::test]
async fn a_saturated_application_cannot_delay_the_management_port() {
    let registry = support::registry(HealthStatus::Healthy, HealthStatus::Healthy);
    let endpoints = map_zb_health(registry.clone());

    let (app, started_rx, release_tx) = blocking_app(&endpoints);
    // The management server: the same endpoints, one worker of its own.
    let management = serve(endpoints);

    let (app_addr, management_addr) = (app.addr, management.addr);
    let work = tokio::spawn(async move { request(app_addr, "GET", "/work").await });
    tokio::task::spawn_blocking(move || started_rx.recv_timeout(DEADLINE))
        .await
        .unwrap()
        .expect("the blocking handler runs");
    // The application's only worker is blocked: its /healthz waits.
    let app_health = tokio::spawn(async move { request(app_addr, "GET", "/healthz").await });

    for path in ["/healthz", "/health/ready", "/health/active"] {
        let wire = tokio::time::timeout(DEADLINE, request(management_addr, "GET", path))
            .await
            .expect("the management port answers while the application is blocked");
        assert_eq!(wire.status, 200, "{path}");
    }
    assert!(
        !app_health.is_finished(),
        "the application port cannot answer while its worker is blocked"
    );

    release_tx.send(()).unwrap();
    let wire = tokio::time::timeout(DEADLINE, app_health)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wire.status, 200, "the application port answers once freed");
    assert_eq!(work.await.unwrap().status, 200);
}

/// The probe's own time: a timer, the kind of wait that belongs to a
/// runtime's driver, so it is what a blocked worker would hold up.
const PROBE_TIME: Duration = Duration::from_millis(400);

#[actix_web::test]
async fn a_run_started_by_a_blocked_application_worker_still_answers_the_management_port() {
    // One ready probe that takes PROBE_TIME, with a deadline well above
    // it: an answer at the deadline would be `timed out`, 503.
    let registry = HealthRegistry::new();
    registry
        .add(
            ProbeRegistration::new(
                "slow-dependency",
                from_fn(|| async {
                    tokio::time::sleep(PROBE_TIME).await;
                    Ok(ProbeResult::healthy())
                }),
            )
            .timeout(Duration::from_millis(1500)),
        )
        .unwrap();
    let endpoints = map_zb_health(registry.clone());
    let (app, started_rx, release_tx) = blocking_app(&endpoints);
    let management = serve(endpoints);
    let (app_addr, management_addr) = (app.addr, management.addr);

    // The application's only worker starts the run…
    let app_ready = tokio::spawn(async move { request(app_addr, "GET", "/health/ready").await });
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while registry.in_flight().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the application's request never started the run"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // …then blocks its thread in a synchronous handler.
    let work = tokio::spawn(async move { request(app_addr, "GET", "/work").await });
    tokio::task::spawn_blocking(move || started_rx.recv_timeout(DEADLINE))
        .await
        .unwrap()
        .expect("the blocking handler runs");

    let wire = tokio::time::timeout(DEADLINE, request(management_addr, "GET", "/health/ready"))
        .await
        .expect("the management port answers");
    assert_eq!(
        (
            wire.status,
            &wire.json()["entries"]["slow-dependency"]["status"]
        ),
        (200, &serde_json::json!("Healthy")),
        "the run finished on its own time, not at its deadline: {}",
        wire.text()
    );
    assert!(
        !work.is_finished(),
        "the application's worker was blocked all along"
    );

    release_tx.send(()).unwrap();
    assert_eq!(work.await.unwrap().status, 200);
    assert_eq!(app_ready.await.unwrap().status, 200);
}

/// The application: one worker, the tiers, and a `/work` handler that
/// blocks the worker's thread (a synchronous call done wrong) until
/// released. Returns the server, the "handler runs" signal and the release.
fn blocking_app(endpoints: &ZbHealthEndpoints) -> (Server, Receiver<()>, Sender<()>) {
    let (started_tx, started_rx) = channel::<()>();
    let (release_tx, release_rx) = channel::<()>();
    let started = Arc::new(Mutex::new(started_tx));
    let release: Arc<Mutex<Receiver<()>>> = Arc::new(Mutex::new(release_rx));
    let endpoints = endpoints.clone();
    let app = serve_with(move |c| {
        let (started, release) = (started.clone(), release.clone());
        c.service(endpoints.clone()).route(
            "/work",
            web::get().to(move || {
                block(&started, &release);
                async { HttpResponse::Ok().body("done") }
            }),
        );
    });
    (app, started_rx, release_tx)
}

/// Signals that the handler runs, then blocks this thread until released.
fn block(started: &Mutex<Sender<()>>, release: &Mutex<Receiver<()>>) {
    let _ = started.lock().unwrap().send(());
    let _ = release.lock().unwrap().recv_timeout(DEADLINE);
}

#[test]
fn the_manifest_declares_the_management_port() {
    zb_health::prelude::manifest!(Health, yaml = "service: s\nmanagement: { port: 8081 }\n");
    zb_health::prelude::manifest!(Plain, yaml = "service: s\n");
    assert_eq!(Health::MANAGEMENT_PORT, Some(8081));
    assert_eq!(Plain::MANAGEMENT_PORT, None);
}
