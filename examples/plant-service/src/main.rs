//! `cargo run -p plant-service`: serves the application and the three
//! health tiers on 127.0.0.1:8080 (`PORT` overrides the port), and the tiers
//! again on the management server, 127.0.0.1:8081 (the manifest's
//! `management.port`; `MANAGEMENT_PORT` overrides it), one worker of its own
//! that busy application workers cannot hold up. The shutdown drain is on:
//! on SIGTERM or Ctrl-C, `ready` and `active` answer 503 at once, the
//! server keeps serving for the manifest's `drain_delay` (5 s;
//! `DRAIN_DELAY_MS` overrides it; a second signal cuts it short), then
//! in-flight requests finish and it exits 0. `GET /metrics` serves the
//! health metrics in Prometheus text, on both ports.
//!
//! `grpc.health.v1` is served on 127.0.0.1:50051 (`GRPC_PORT` overrides
//! it), from the manifest's `grpc` section: `""` is `ready`,
//! `plant.v1.Writes` is `active`, `plant.db` is the database probe. It
//! turns `NOT_SERVING` at the first signal and stops with the HTTP server.

use std::time::Duration;

use actix_web::{App, HttpServer};
use plant_service::{Health, PlantHealth, configure_metrics};
use zb_health::lifecycle::{Drain, serve_with_management};

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let failing = std::env::var("PLANT_FAIL_DATABASE").is_ok_and(|v| v == "1" || v == "true");
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let management_port: u16 = std::env::var("MANAGEMENT_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .or(Health::MANAGEMENT_PORT)
        .unwrap_or(8081);
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
    let management = HttpServer::new({
        let health = health.clone();
        move || {
            let health = health.clone();
            App::new()
                .configure(move |c| health.configure_management(c))
                .configure(configure_metrics)
        }
    })
    .workers(1)
    .bind(("127.0.0.1", management_port))?;
    let grpc_port: u16 = std::env::var("GRPC_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(50051);
    let grpc = Health::grpc(&registry).expect("the manifest's probes are installed");
    let grpc_incoming =
        tonic::transport::server::TcpIncoming::bind(([127, 0, 0, 1], grpc_port).into())?;
    let grpc_stopped = grpc.shutdown_after_drain(drain.delay());
    let grpc_server = tonic::transport::Server::builder()
        .add_service(grpc.server())
        .serve_with_incoming_shutdown(grpc_incoming, grpc_stopped);
    // On this (main) runtime; the HTTP workers have their own threads.
    let grpc_task = tokio::spawn(grpc_server);
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
        "plant-service on http://127.0.0.1:{port}  (/health/ready, /health/active, /healthz, /metrics); management on http://127.0.0.1:{management_port}; grpc.health.v1 on 127.0.0.1:{grpc_port}; drain delay {} ms",
        drain.delay().as_millis()
    );
    let served = serve_with_management(server, management, &registry, drain).await;
    // Ends Watch streams if the HTTP servers stopped without a drain.
    grpc.stop();
    grpc_task.abort();
    served
}
