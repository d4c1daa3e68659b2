//! A small plant-floor service with zb-health's three tiers.
//!
//! Probes:
//! * `database` (ready): a simulated database that can be made to fail,
//!   through `PLANT_FAIL_DATABASE=1` at start or `POST /admin/database/fail`
//!   and `POST /admin/database/recover` at run time;
//! * `disk-space` (ready): always healthy;
//! * `primary` (active): this single node is always the active one.
//!
//! The library half exists so tests and the benchmark start exactly the
//! service that `cargo run -p plant-service` starts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, HttpResponse};
use zb_health::{
    HealthRegistry, Probe, ProbeOutcome, ProbeRegistration, ProbeResult, TagSet, ZbHealth,
    ZbHealthEndpoints,
};

/// Simulated database: healthy until told to fail.
#[derive(Clone, Default)]
pub struct DatabaseProbe {
    failing: Arc<AtomicBool>,
}

impl DatabaseProbe {
    /// Makes the next checks fail (`true`) or pass (`false`).
    pub fn set_failing(&self, failing: bool) {
        self.failing.store(failing, Ordering::Relaxed);
    }
}

impl Probe for DatabaseProbe {
    async fn check(&self) -> ProbeOutcome {
        if self.failing.load(Ordering::Relaxed) {
            // The text is for the log; the body says only "check failed".
            Err("simulated: connection to postgres://plant:secret@10.1.2.3/plant refused".into())
        } else {
            Ok(ProbeResult::healthy().with_description("database reachable"))
        }
    }
}

/// Always-healthy local check.
pub struct DiskSpaceProbe;

impl Probe for DiskSpaceProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy().with_description("disk space above threshold"))
    }
}

/// A single node is trivially the active one.
pub struct PrimaryProbe;

impl Probe for PrimaryProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy()
            .with_description("single node is active")
            .with_data("activeNode", "self"))
    }
}

/// The service's health state: the registry and the database switch.
#[derive(Clone)]
pub struct PlantHealth {
    /// Every probe of the service.
    pub registry: HealthRegistry,
    /// The switch behind the `database` probe.
    pub database: DatabaseProbe,
    /// The three tier endpoints.
    pub endpoints: ZbHealthEndpoints,
}

impl PlantHealth {
    /// Builds the registry with the service's three probes.
    pub fn new(database_failing: bool) -> Self {
        let registry = HealthRegistry::new();
        let database = DatabaseProbe::default();
        database.set_failing(database_failing);
        registry
            .add_all([
                ProbeRegistration::new("database", database.clone())
                    .timeout(Duration::from_millis(800)),
                ProbeRegistration::new("disk-space", DiskSpaceProbe),
                ProbeRegistration::new("primary", PrimaryProbe).tags(TagSet::ACTIVE),
            ])
            .expect("the plant service's probes follow the spec");
        let endpoints = ZbHealth::new(registry.clone())
            .build()
            .expect("the ZB default paths are valid");
        Self { registry, database, endpoints }
    }

    /// Mounts the health tiers and the admin toggles on an `App`.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        let fail = self.database.clone();
        let recover = self.database.clone();
        config
            .service(self.endpoints.clone())
            .route(
                "/admin/database/fail",
                web::post().to(move || {
                    fail.set_failing(true);
                    async { HttpResponse::NoContent().finish() }
                }),
            )
            .route(
                "/admin/database/recover",
                web::post().to(move || {
                    recover.set_failing(false);
                    async { HttpResponse::NoContent().finish() }
                }),
            );
    }
}
