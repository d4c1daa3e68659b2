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
//! Lifecycle, also from `health.yaml`: the startup gate `warm-up` (ready and
//! active answer 503 until `main` signals it), the watchdog `plc-poller` (a
//! polling loop on its own thread; `POST /admin/poller/stall` stops its
//! heartbeat, so `/healthz` answers 503 within 3 s, and
//! `POST /admin/poller/resume` restarts it), and the drain.
//!
//! The library half exists so tests and the benchmark start exactly the
//! service that `cargo run -p plant-service` starts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use actix_web::{HttpResponse, web};
use zb_health::{
    HealthRegistry, Heartbeat, Probe, ProbeOutcome, ProbeResult, ZbHealthEndpoints, zb_health,
};

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

/// The service's health state: the registry, the database switch and the
/// poller's switch.
#[derive(Clone)]
pub struct PlantHealth {
    /// Every probe of the service: the process registry, unless built by
    /// [`PlantHealth::with_registry`].
    pub registry: HealthRegistry,
    /// The switch behind the `database` probe.
    pub database: DatabaseProbe,
    /// The three tier endpoints.
    pub endpoints: ZbHealthEndpoints,
    /// Set to stop the poller's heartbeat (a simulated stall).
    poller_stalled: Arc<AtomicBool>,
    /// Keeps the `plc-poller` watchdog registered while the service lives.
    _poller: Arc<Heartbeat>,
}

impl PlantHealth {
    /// Installs the manifest into the process registry (AT-1), as a
    /// service does once at start, and starts the poller. Returns the
    /// startup gates to signal when warm-up is done. Panics if called twice
    /// in a process: the second install would register every name again
    /// (R3).
    pub fn new(database_failing: bool) -> (Self, HealthStartup) {
        Self::with_registry(HealthRegistry::process(), database_failing)
    }

    /// [`new`](Self::new) into `registry`; for a test that needs a registry
    /// of its own (AT-9).
    pub fn with_registry(
        registry: &HealthRegistry,
        database_failing: bool,
    ) -> (Self, HealthStartup) {
        let database = DatabaseProbe::default();
        database.set_failing(database_failing);
        let installed = Health::install_into(
            registry,
            HealthDeps {
                database_probe: database.clone(),
                disk_space_probe: DiskSpaceProbe,
                primary_probe: PrimaryProbe,
            },
        )
        .expect("the plant probes are installed once per registry");
        let poller = Arc::new(installed.watchdogs.plc_poller);
        let poller_stalled = Arc::new(AtomicBool::new(false));
        spawn_poller(Arc::downgrade(&poller), poller_stalled.clone());
        let health = Self {
            registry: registry.clone(),
            database,
            endpoints: installed.endpoints,
            poller_stalled,
            _poller: poller,
        };
        (health, installed.startup)
    }

    /// Mounts what the management server serves: the health tiers, on a
    /// server of their own (`management.port` in `health.yaml`).
    pub fn configure_management(&self, config: &mut web::ServiceConfig) {
        config.service(self.endpoints.clone());
    }

    /// Mounts the health tiers and the admin toggles on an `App`.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        config.service(self.endpoints.clone());
        let database = &self.database;
        toggle(config, "/admin/database/fail", database.clone(), |d| {
            d.set_failing(true)
        });
        toggle(config, "/admin/database/recover", database.clone(), |d| {
            d.set_failing(false)
        });
        let stalled = &self.poller_stalled;
        toggle(config, "/admin/poller/stall", stalled.clone(), |s| {
            s.store(true, Ordering::Relaxed)
        });
        toggle(config, "/admin/poller/resume", stalled.clone(), |s| {
            s.store(false, Ordering::Relaxed)
        });
    }
}

/// `POST path` applies `set` to `target` and answers 204.
fn toggle<T: Clone + 'static>(config: &mut web::ServiceConfig, path: &str, target: T, set: fn(&T)) {
    config.route(
        path,
        web::post().to(move || {
            set(&target);
            async { HttpResponse::NoContent().finish() }
        }),
    );
}

/// The plant-floor polling loop, simulated: one "poll" every 250 ms, each
/// followed by a heartbeat, until the service is gone. While `stalled` is
/// set it polls without beating, as a loop stuck on a dead PLC would.
fn spawn_poller(heartbeat: Weak<Heartbeat>, stalled: Arc<AtomicBool>) {
    std::thread::Builder::new()
        .name("plc-poller".into())
        .spawn(move || {
            while let Some(heartbeat) = heartbeat.upgrade() {
                if !stalled.load(Ordering::Relaxed) {
                    heartbeat.beat();
                }
                drop(heartbeat);
                std::thread::sleep(Duration::from_millis(250));
            }
        })
        .expect("the poller thread starts");
}
