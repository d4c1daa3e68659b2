//! A small plant-floor service with zb-health's three tiers.
//!
//! Its probes are declared by `health.yaml` and the `#[zb_health]`
//! attributes below; the compiler checks both against the health spec.
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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use actix_web::{HttpResponse, web};
use zb_health::{HealthRegistry, Probe, ProbeOutcome, ProbeResult, ZbHealthEndpoints, zb_health};

zb_health::manifest!(pub Health = "health.yaml");

/// Simulated database: healthy until told to fail.
#[zb_health(name = "database", tags = [ready], timeout = "800ms")]
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
#[zb_health(name = "disk-space", tags = [ready], timeout = "300ms")]
pub struct DiskSpaceProbe;

impl Probe for DiskSpaceProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy().with_description("disk space above threshold"))
    }
}

/// A single node is trivially the active one.
#[zb_health(name = "primary", tags = [active], timeout = "200ms")]
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
    /// Every probe of the service: the process registry, unless built by
    /// [`PlantHealth::with_registry`].
    pub registry: HealthRegistry,
    /// The switch behind the `database` probe.
    pub database: DatabaseProbe,
    /// The three tier endpoints.
    pub endpoints: ZbHealthEndpoints,
}

impl PlantHealth {
    /// Installs the manifest's probes into the process registry (AT-1), as
    /// a service does once at start. Panics if called twice in a process:
    /// the second install would register every name again (R3).
    pub fn new(database_failing: bool) -> Self {
        Self::with_registry(HealthRegistry::process(), database_failing)
    }

    /// Installs the manifest's probes into `registry`; for a test that
    /// needs a registry of its own (AT-9).
    pub fn with_registry(registry: &HealthRegistry, database_failing: bool) -> Self {
        let database = DatabaseProbe::default();
        database.set_failing(database_failing);
        let endpoints = Health::install_into(
            registry,
            HealthDeps {
                database_probe: database.clone(),
                disk_space_probe: DiskSpaceProbe,
                primary_probe: PrimaryProbe,
            },
        )
        .expect("the plant probes are installed once per registry");
        Self {
            registry: registry.clone(),
            database,
            endpoints,
        }
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
