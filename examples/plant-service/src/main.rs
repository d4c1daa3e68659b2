//! `cargo run -p plant-service`: serves the three health tiers on
//! 127.0.0.1:8080 (`PORT` overrides the port), with the shutdown drain on:
//! on SIGTERM or Ctrl-C, `ready` and `active` answer 503 at once, the
//! server keeps serving for `DRAIN_DELAY_MS` (default 5000; a second signal
//! cuts it short), then in-flight requests finish and it exits 0.

use std::time::Duration;

use actix_web::{App, HttpServer};
use plant_service::PlantHealth;
use zb_health::lifecycle::{Drain, serve};

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let failing = std::env::var("PLANT_FAIL_DATABASE").is_ok_and(|v| v == "1" || v == "true");
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let drain_ms: u64 = std::env::var("DRAIN_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    // Probe failures are logged here, at warn level, with their real error.
    tracing_subscriber::fmt().with_target(false).init();
    let health = PlantHealth::new(failing);
    // Startup work: until `ready()`, ready and active answer 503 "starting".
    // A real service signals it after its migrations and cache warm-up.
    let started = health.registry.startup_gate();
    let registry = health.registry.clone();
    let server = HttpServer::new(move || {
        let health = health.clone();
        App::new().configure(move |c| health.configure(c))
    })
    .bind(("127.0.0.1", port))?;
    started.ready();
    println!(
        "plant-service on http://127.0.0.1:{port}  (/health/ready, /health/active, /healthz); drain delay {drain_ms} ms"
    );
    serve(
        server,
        &registry,
        Drain::new(Duration::from_millis(drain_ms)),
    )
    .await
}
