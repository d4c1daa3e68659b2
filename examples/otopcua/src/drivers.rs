//! Per-driver probes, registered and removed at run time as drivers come
//! and go (AT-1's dynamic registration).
//!
//! OtOpcUa runs one driver per field device; which drivers exist is
//! deployment data, not code, so their probes cannot be in `health.yaml`.
//! Each driver gets a probe `driver-<name>` on the `ready` tier that opens a
//! TCP connection to the driver's device endpoint (an OPC UA server or a
//! PLC gateway, e.g. `127.0.0.1:4840`).
//!
//! A driver whose device is unreachable is **Degraded**, never Unhealthy:
//! OtOpcUa keeps serving the source's last-known-good values while it is
//! down, so it does not gate readiness on its sources (ZB §2.4). The
//! probe is registered with `FailureStatus::Degraded` (an optional
//! dependency, BE-HLTH-003), so an error, a panic or a hung connect is
//! Degraded too, and `ready` stays 200: one unreachable device must not
//! take every replica out of service. The entry still shows the outage
//! ([`LAST_KNOWN_GOOD_DESCRIPTION`]). Adding goes through
//! [`HealthRegistry::add`], which applies the very rules the manifest is
//! held to at compile time (R9 names, R3 duplicates, R5 deadlines against
//! the orchestrator's `timeout`), so `POST /admin/drivers/{name}` answers
//! a rule's own message with 400 (409 for a taken name). Removing uses the
//! registration's handle, on teardown of the driver only, never to hide a
//! failing one (AT-1).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use zb_health::prelude::{
    FailureStatus, HealthRegistry, Probe, ProbeOutcome, ProbeRegistration, ProbeResult,
};
use zb_health::registry::RegistrationHandle;
use zb_health::spec::{Rule, TagSet};

/// The deadline of every driver probe: a connect on loopback or a plant
/// LAN answers in milliseconds; well below the manifest's 3 s
/// `orchestrator.timeout` (R5).
pub const DRIVER_PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// The probe name of driver `name`.
pub fn probe_name(name: &str) -> String {
    format!("driver-{name}")
}

/// The description of a driver probe whose device is reachable.
pub const REACHABLE_DESCRIPTION: &str = "device endpoint reachable";
/// The description of a driver probe whose device is not: the node serves
/// the last-known-good values meanwhile.
pub const LAST_KNOWN_GOOD_DESCRIPTION: &str =
    "device endpoint unreachable: serving last-known-good values";

/// A driver's device is reachable: one TCP connect, closed at once.
pub struct DriverProbe {
    endpoint: SocketAddr,
}

impl Probe for DriverProbe {
    async fn check(&self) -> ProbeOutcome {
        match tokio::net::TcpStream::connect(self.endpoint).await {
            Ok(_) => Ok(ProbeResult::healthy().with_description(REACHABLE_DESCRIPTION)),
            Err(error) => {
                // The error text names the address: the log only
                // (BE-HLTH-007); the registry logs the transition.
                tracing::debug!(%error, "driver device unreachable");
                Ok(ProbeResult::degraded(LAST_KNOWN_GOOD_DESCRIPTION))
            }
        }
    }
}

/// The running drivers and their probes' undo handles.
#[derive(Clone)]
pub struct Drivers {
    registry: HealthRegistry,
    running: Arc<Mutex<HashMap<String, RegistrationHandle>>>,
}

/// Why a driver could not be added.
#[derive(Debug)]
pub enum AddError {
    /// A driver of that name runs already (R3).
    Exists,
    /// The probe breaks a spec rule; the registry's message.
    Rules(String),
}

impl Drivers {
    /// No drivers yet, probes going into `registry`.
    pub fn new(registry: HealthRegistry) -> Self {
        Self {
            registry,
            running: Arc::default(),
        }
    }

    /// Starts driver `name` against `endpoint` and registers its probe.
    ///
    /// # Errors
    ///
    /// [`AddError::Exists`] for a running driver's name; [`AddError::Rules`]
    /// when the probe name breaks a rule (e.g. R9: more than 64 characters,
    /// or a character outside letters, digits, `-`, `_`, `.`).
    pub fn add(&self, name: &str, endpoint: SocketAddr) -> Result<(), AddError> {
        let mut running = lock(&self.running);
        let registration = ProbeRegistration::new(probe_name(name), DriverProbe { endpoint })
            .tags(TagSet::READY)
            .timeout(DRIVER_PROBE_TIMEOUT)
            // Last-known-good: a source that is down never gates readiness
            // (ZB §2.4), even when its connect hangs or errors.
            .failure_status(FailureStatus::Degraded);
        match self.registry.add(registration) {
            Ok(handle) => {
                running.insert(name.to_owned(), handle);
                Ok(())
            }
            Err(e) if e.rules() == [Rule::DuplicateName] => Err(AddError::Exists),
            Err(e) => Err(AddError::Rules(e.to_string())),
        }
    }

    /// Stops driver `name` and removes its probe; `false` if it was not
    /// running.
    pub fn remove(&self, name: &str) -> bool {
        let handle = lock(&self.running).remove(name);
        handle.is_some_and(RegistrationHandle::remove)
    }

    /// The running drivers' names, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = lock(&self.running).keys().cloned().collect();
        names.sort();
        names
    }

    /// `POST /admin/drivers/{name}` (body `{"endpoint": "127.0.0.1:4840"}`),
    /// `DELETE /admin/drivers/{name}` and `GET /admin/drivers`.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        config
            .app_data(web::Data::new(self.clone()))
            .route("/admin/drivers", web::get().to(list))
            .route("/admin/drivers/{name}", web::post().to(add))
            .route("/admin/drivers/{name}", web::delete().to(remove));
    }
}

/// The body of `POST /admin/drivers/{name}`.
#[derive(Debug, Deserialize)]
pub struct DriverConfig {
    /// The device's address.
    pub endpoint: SocketAddr,
}

async fn add(
    drivers: web::Data<Drivers>,
    name: web::Path<String>,
    config: web::Json<DriverConfig>,
) -> HttpResponse {
    match drivers.add(&name, config.endpoint) {
        Ok(()) => HttpResponse::Created().json(serde_json::json!({ "probe": probe_name(&name) })),
        Err(AddError::Exists) => HttpResponse::Conflict()
            .json(serde_json::json!({ "error": format!("driver `{name}` is running") })),
        Err(AddError::Rules(message)) => {
            HttpResponse::BadRequest().json(serde_json::json!({ "error": message }))
        }
    }
}

async fn remove(drivers: web::Data<Drivers>, name: web::Path<String>) -> HttpResponse {
    if drivers.remove(&name) {
        HttpResponse::NoContent().finish()
    } else {
        HttpResponse::NotFound().finish()
    }
}

async fn list(drivers: web::Data<Drivers>) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "drivers": drivers.names() }))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every change is one insert or remove, never left half-done.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
