//! The README's tour, compiled: `cargo run -p tour` serves an `orders`
//! service with one probe on 127.0.0.1:8080, the tiers again on the
//! management port 8081 with `GET /metrics` (the `prometheus` feature: no
//! code) and `grpc.health.v1` on 50051 (`HOST`, `PORT`,
//! `MANAGEMENT_PORT` and `GRPC_PORT` override them). Every
//! snippet of the tour is a `region` of this crate's files, and
//! `tests/tests/readme.rs` fails when the README and the region differ.

// region: probe
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zb_health::prelude::*;

/// The order cache: the service can run without it, slower.
#[zb_health(name = "cache", tags = [ready], timeout = "750ms", failure_status = degraded)]
#[derive(Clone, Default)]
pub struct CacheProbe(Arc<AtomicBool>);

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        if self.0.load(Ordering::Relaxed) {
            Ok(ProbeResult::healthy().with_description("cache reachable"))
        } else {
            Err("cache refused the connection".into()) // to the log; the body says "check failed"
        }
    }
}
// endregion

// region: manifest-macro
manifest!(pub Health = "health.yaml");
// endregion

// region: mount
use actix_web::web;
use zb_health::database::{DatabaseProbe, connect};

#[actix_web::main]
async fn main() -> Result<(), StartError> {
    tracing_subscriber::fmt().init(); // logs, info and up, to stdout
    let url = std::env::var("DATABASE_URL").unwrap_or("sqlite://orders.db?mode=rwc".into());
    let database = DatabaseProbe::new(connect(&url).await?); // its io::Error names the URL
    let cache = CacheProbe(Arc::new(AtomicBool::new(true)));
    // Leaving out a probe's field of `HealthDeps` is a compile error.
    let installed = Health::install(HealthDeps { database, cache })?;
    // The tiers on PORT and MANAGEMENT_PORT (with /metrics), grpc.health.v1 on GRPC_PORT; a taken one is named.
    // SIGTERM: ready answers 503 at once, then the drain, then the stop.
    let orders = |routes: &mut web::ServiceConfig| {
        routes.route("/orders", web::get().to(|| async { "[]" }));
    };
    installed.server.from_env()?.app(orders).run().await
}
// endregion
