//! OtOpcUa converged on zb-health.
//!
//! Before (ZB §6), OtOpcUa served all three tiers with inline probes: its
//! own `DatabaseHealthCheck`, an `AkkaClusterHealthCheck` with its own
//! status mapping, and an `AdminRoleLeaderHealthCheck`. Converged, every
//! probe is declared by `health.yaml` and built by zb-health:
//!
//! * `database`: [`DatabaseProbe::with_query`] running [`DEPLOYMENTS_QUERY`]
//!   on the `deployments` table the service cannot work without (ZB-2.1's
//!   custom query), on a connection of the probe's own;
//! * `cluster`: the membership probe with the **`default` policy**, the
//!   convergence target (ZB §7 (b)); `health.compat.yaml` keeps the legacy
//!   `ot-opc-ua-compat` policy, selected with
//!   `MEMBERSHIP_POLICY=ot-opc-ua-compat` ([`MembershipPolicy`]);
//! * `transport`: fails only when this node is cut off from every peer
//!   (AT-5);
//! * `active-node`: the oldest `Up` member holding `admin`, else `driver`
//!   (`scope: role`, `roles: [admin, driver]`, ZB-2.3a). A node with neither
//!   role answers `Unhealthy` (`no_active_role_status`);
//! * `driver-<name>`: one per running driver, added and removed at run
//!   time ([`drivers`]).
//!
//! The gate of `POST /deployments` is the manifest's
//! `active_node_gate(view)`: the active-node probe's own rule, so the
//! gated route and `/health/active` cannot disagree (ZB-4).

#![warn(missing_docs)]

pub mod drivers;

use std::sync::Arc;

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use zb_health::cluster::{ClusterActiveNodeGate, ClusterView};
use zb_health::database::DatabaseProbe;
use zb_health::database::sea_orm::{ConnectionTrait, DatabaseConnection, Statement, Value};
use zb_health::prelude::{HealthRegistry, RegistryError, RequireActiveNode, StartupGate, manifest};
use zb_health::server::ZbHealthServer;

use crate::drivers::Drivers;

manifest!(pub Health = "health.yaml");
manifest!(pub HealthCompat = "health.compat.yaml");

/// The database probe's query: one row of `deployments`. The default
/// check (`DatabaseProbe::new`) would pass on an empty or wrongly migrated
/// database; this fails when the table is
/// missing or unreadable, which is when OtOpcUa cannot serve.
pub const DEPLOYMENTS_QUERY: &str = "SELECT name FROM deployments LIMIT 1";

/// The schema the service needs, created at start if missing; SQLite and
/// PostgreSQL alike.
pub const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS deployments (name TEXT PRIMARY KEY)";

/// Which membership policy the `cluster` probe uses: which manifest is
/// installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MembershipPolicy {
    /// `health.yaml`, `policy: default`: Up/Joining → Healthy,
    /// Leaving/Exiting → Degraded, anything else (WeaklyUp, Down, Removed,
    /// not in the view) → Unhealthy, a 503 that takes the node out of
    /// rotation.
    Default,
    /// `health.compat.yaml`, `policy: ot-opc-ua-compat`: Healthy only while
    /// this node is Up and reachable; every other state Degraded, a 200
    /// that keeps the node in rotation.
    OtOpcUaCompat,
}

impl MembershipPolicy {
    /// `MEMBERSHIP_POLICY`: `default` (or unset) or `ot-opc-ua-compat`, the
    /// manifest's own spellings.
    ///
    /// # Errors
    ///
    /// Any other value.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("MEMBERSHIP_POLICY").as_deref() {
            Err(_) | Ok("default") => Ok(Self::Default),
            Ok("ot-opc-ua-compat") => Ok(Self::OtOpcUaCompat),
            Ok(other) => Err(format!(
                "MEMBERSHIP_POLICY must be `default` or `ot-opc-ua-compat`, not `{other}`"
            )),
        }
    }
}

/// The service's health wiring and its routes.
#[derive(Clone)]
pub struct OtOpcUa {
    /// Every probe of the service.
    pub registry: HealthRegistry,
    /// The running drivers and their probes.
    pub drivers: Drivers,
    gate: Arc<ClusterActiveNodeGate>,
    db: DatabaseConnection,
}

impl OtOpcUa {
    /// Installs the manifest of `policy` into `registry`, the database
    /// probe over `db` and the cluster probes and gate over `view`.
    /// Returns the service, the server of the manifest's tiers, management
    /// port, gRPC and drain, and its `schema` startup gate: until it is
    /// signalled, `ready` and `active` answer 503 `starting`.
    ///
    /// # Errors
    ///
    /// The registry's, e.g. a second install into one registry (R3).
    pub fn install_into(
        registry: &HealthRegistry,
        policy: MembershipPolicy,
        db: DatabaseConnection,
        view: Arc<dyn ClusterView>,
    ) -> Result<(Self, ZbHealthServer, StartupGate), RegistryError> {
        let database = DatabaseProbe::with_query(db.clone(), DEPLOYMENTS_QUERY);
        // The two manifests differ only in the `cluster` probe's policy,
        // so their gates are the same rule.
        let (server, schema, gate) = match policy {
            MembershipPolicy::Default => {
                let deps = HealthDeps {
                    database,
                    cluster_view: view.clone(),
                };
                let installed = Health::install_into(registry, deps)?;
                let gate = Health::active_node_gate(view);
                (installed.server, installed.startup.schema, gate)
            }
            MembershipPolicy::OtOpcUaCompat => {
                let deps = HealthCompatDeps {
                    database,
                    cluster_view: view.clone(),
                };
                let installed = HealthCompat::install_into(registry, deps)?;
                let gate = HealthCompat::active_node_gate(view);
                (installed.server, installed.startup.schema, gate)
            }
        };
        let service = Self {
            registry: registry.clone(),
            drivers: Drivers::new(registry.clone()),
            gate: Arc::new(gate),
            db,
        };
        Ok((service, server, schema))
    }

    /// The application routes beside the tiers: the gated
    /// `POST /deployments`, `GET /deployments` and the drivers' admin
    /// routes.
    pub fn configure_app(&self, config: &mut web::ServiceConfig) {
        config.app_data(web::Data::new(self.db.clone())).service(
            web::resource("/deployments")
                .route(web::get().to(list_deployments))
                // Deployments are written on the active node only.
                .route(web::post().to(add_deployment).wrap(
                    // Closed during the drain of the registry the
                    // servers drain, as well as on a standby.
                    RequireActiveNode::shared(self.gate.clone()).registry(&self.registry),
                )),
        );
        self.drivers.configure(config);
    }
}

/// The body of `POST /deployments`.
#[derive(Debug, Deserialize)]
pub struct NewDeployment {
    /// The deployment's name.
    pub name: String,
}

async fn add_deployment(
    db: web::Data<DatabaseConnection>,
    body: web::Json<NewDeployment>,
) -> HttpResponse {
    let stmt = Statement::from_sql_and_values(
        db.get_database_backend(),
        // Idempotent: deploying a name twice is one deployment.
        "INSERT INTO deployments (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
        [Value::from(body.name.clone())],
    );
    match db.execute_raw(stmt).await {
        Ok(_) => HttpResponse::Created().json(serde_json::json!({ "name": body.name })),
        Err(e) => {
            tracing::warn!(error = %e, "POST /deployments: insert failed");
            HttpResponse::ServiceUnavailable().finish()
        }
    }
}

async fn list_deployments(db: web::Data<DatabaseConnection>) -> HttpResponse {
    let stmt = Statement::from_string(
        db.get_database_backend(),
        "SELECT name FROM deployments ORDER BY name",
    );
    match db.query_all_raw(stmt).await {
        Ok(rows) => {
            let names: Vec<String> = rows
                .iter()
                .filter_map(|row| row.try_get::<String>("", "name").ok())
                .collect();
            HttpResponse::Ok().json(serde_json::json!({ "deployments": names }))
        }
        Err(e) => {
            tracing::warn!(error = %e, "GET /deployments: query failed");
            HttpResponse::ServiceUnavailable().finish()
        }
    }
}
