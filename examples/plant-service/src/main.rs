//! `cargo run -p plant-service`: serves the three health tiers on
//! 127.0.0.1:8080 (`PORT` overrides the port), with the shutdown drain on:
//! on SIGTERM or Ctrl-C, `ready` and `active` answer 503 at once, the
//! server keeps serving for the manifest's `drain_delay` (5 s;
//! `DRAIN_DELAY_MS` overrides it; a second signal cuts it short), then
//! in-flight requests finish and it exits 0. `GET /metrics` serves the
//! health metrics in Prometheus text.

use std::time::Duration;

use actix_web::{App, HttpServer};
use plant_service::{Health, PlantHealth, configure_metrics};
use zb_health::lifecycle::{Drain, serve};

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let failing = std::env::var("PLANT_FAIL_DATABASE").is_ok_and(|v| v == "1" || v == "true");
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let drain = match std::env::var("DRAIN_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(ms) => Drain::new(Duration::from_millis(ms)),
        None => Health::DRAIN,
    };
    // A probe's transition to failure is logged here once, at warn level,
    // with its real error; its recovery at info.
    tracing_subscriber::fmt().with_target(false).init();
    let (health, startup) = PlantHealth::new(failing);
    let registry = health.registry.clone();
    let server = HttpServer::new(move || {
        let health = health.clone();
        App::new()
            .configure(move |c| health.configure(c))
            .configure(configure_metrics)
    })
    .bind(("127.0.0.1", port))?;
    // Startup work: until `ready()`, ready and active answer 503 "starting".
    // A real service signals it after its migrations and cache warm-up.
    startup.warm_up.ready();
    println!(
        "plant-service on http://127.0.0.1:{port}  (/health/ready, /health/active, /healthz, /metrics); drain delay {} ms",
        drain.delay().as_millis()
    );
    serve(server, &registry, drain).await
}
