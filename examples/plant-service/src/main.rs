//! `cargo run -p plant-service`: serves the three health tiers on
//! 127.0.0.1:8080 (`PORT` overrides the port).

use actix_web::{App, HttpServer};
use plant_service::PlantHealth;

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let failing = std::env::var("PLANT_FAIL_DATABASE").is_ok_and(|v| v == "1" || v == "true");
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    // Probe failures are logged here, at warn level, with their real error.
    tracing_subscriber::fmt().with_target(false).init();
    let health = PlantHealth::new(failing);
    println!("plant-service on http://127.0.0.1:{port}  (/health/ready, /health/active, /healthz)");
    HttpServer::new(move || {
        let health = health.clone();
        App::new().configure(move |c| health.configure(c))
    })
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
