//! The README's tour, compiled: `cargo run -p tour` serves an `orders`
//! service with one probe on 127.0.0.1:8080 (`PORT` overrides it). Every
//! snippet of the tour is a `region` of this crate's files, and
//! `tests/tests/readme.rs` fails when the README and the region differ.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

// region: probe
use zb_health::prelude::*;

/// The order cache: the service can run without it, slower.
#[zb_health(name = "cache", tags = [ready], timeout = "750ms", failure_status = degraded)]
#[derive(Clone, Default)]
pub struct CacheProbe {
    reachable: Arc<AtomicBool>,
}

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        if self.reachable.load(Ordering::Relaxed) {
            Ok(ProbeResult::healthy().with_description("cache reachable"))
        } else {
            Err("cache refused the connection".into()) // to the log; the body says "check failed"
        }
    }
}
// endregion

// region: manifest-macro
zb_health::manifest!(pub Health = "health.yaml");
// endregion

// region: mount
use actix_web::{App, HttpServer};
use zb_health::lifecycle;

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let cache = CacheProbe::default();
    cache.reachable.store(true, Ordering::Relaxed);
    // Registers the manifest's probes in the process registry; a missing
    // field of `HealthDeps` is a compile error.
    let installed =
        Health::install(HealthDeps { cache_probe: cache }).expect("installed once, at start");
    let endpoints = installed.endpoints;
    let port = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let server =
        HttpServer::new(move || App::new().service(endpoints.clone())).bind(("127.0.0.1", port))?;
    // SIGTERM: ready 503 at once, serve on for the drain delay, then stop.
    lifecycle::serve(server, HealthRegistry::process(), Health::DRAIN).await
}
// endregion
