//! The management port (isolation): the tiers on their own `HttpServer`
//! answer while every worker of the application's server is blocked; the
//! same route on the application's port does not. Real sockets on
//! 127.0.0.1. The drain over both servers is `drain.rs`
//! (`with_a_management_server_…`).

mod support;

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{HttpResponse, web};
use support::{request, serve, serve_with};
use zb_health::{HealthStatus, map_zb_health};

/// Generous: only a broken server gets near it.
const DEADLINE: Duration = Duration::from_secs(30);

#[actix_web::test]
async fn a_saturated_application_cannot_delay_the_management_port() {
    let registry = support::registry(HealthStatus::Healthy, HealthStatus::Healthy);
    let endpoints = map_zb_health(registry.clone());

    // The application: one worker, the tiers, and a handler that blocks
    // the worker's thread (a synchronous call done wrong) until released.
    let (started_tx, started_rx) = channel::<()>();
    let (release_tx, release_rx) = channel::<()>();
    let started = Arc::new(Mutex::new(started_tx));
    let release: Arc<Mutex<Receiver<()>>> = Arc::new(Mutex::new(release_rx));
    let app = serve_with({
        let endpoints = endpoints.clone();
        move |c| {
            let (started, release) = (started.clone(), release.clone());
            c.service(endpoints.clone()).route(
                "/work",
                web::get().to(move || {
                    block(&started, &release);
                    async { HttpResponse::Ok().body("done") }
                }),
            );
        }
    });
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

/// Signals that the handler runs, then blocks this thread until released.
fn block(started: &Mutex<Sender<()>>, release: &Mutex<Receiver<()>>) {
    let _ = started.lock().unwrap().send(());
    let _ = release.lock().unwrap().recv_timeout(DEADLINE);
}

#[test]
fn the_manifest_declares_the_management_port() {
    zb_health::manifest!(Health, yaml = "service: s\nmanagement: { port: 8081 }\n");
    zb_health::manifest!(Plain, yaml = "service: s\n");
    assert_eq!(Health::MANAGEMENT_PORT, Some(8081));
    assert_eq!(Plain::MANAGEMENT_PORT, None);
}
