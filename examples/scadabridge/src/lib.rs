//! ScadaBridge, converged on the ZB health convention (ZB §6/§7).
//!
//! Before, it answered ready and active but had no `/healthz`, and its
//! database, cluster and active-node checks and its `ActiveNodeGate` were
//! written inline. Now `health.yaml` declares them and the compiler checks
//! them against the health spec:
//!
//! * `database` (ready, built-in kind): a real SQLite file or PostgreSQL
//!   server through sea-orm, checked by reading the `tags` table over the
//!   probe's own connection ([`database_probe`]);
//! * `cluster-membership` (ready, built-in kind, **Default** policy): this
//!   node's status in the chitchat cluster (Up/Joining healthy,
//!   Leaving/Exiting degraded, else unhealthy);
//! * `active-node` (active, built-in kind, unscoped): healthy on the oldest
//!   `Up` member of the cluster, the node that takes the writes;
//! * `plc-link` (ready, custom [`PlcLinkProbe`], optional): the link to
//!   the PLC; its failure shows in the body but keeps `ready` at 200.
//!
//! Writes (`POST /api/tags/{name}`) and the admin endpoints pass
//! [`RequireActiveNode`] with `Health::active_node_gate`, the same view and
//! rule as the `active-node` probe, so the gate and `/health/active` cannot
//! disagree (ZB-4); reads stay open on standbys.
//!
//! Lifecycle, also from `health.yaml`: the startup gate `warm-up` (ready and
//! active answer 503 until the schema is in place and the node has
//! announced `Up`), the watchdog `plc-poller` (the PLC polling loop on its own thread;
//! `POST /admin/poller/stall` stops its heartbeat, so `/healthz` answers
//! 503 within 3 s, and `POST /admin/poller/resume` restarts it), and the
//! drain.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::{HttpResponse, web};
use serde_json::{Value, json};
use service_kit::ClusterNode;
use service_kit::database::bootstrap_until_done;
use zb_health::cluster::ClusterView;
use zb_health::database::DatabaseProbe;
use zb_health::database::sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement};
use zb_health::prelude::{
    HealthRegistry, Heartbeat, Probe, ProbeOutcome, ProbeResult, RegistryError, RequireActiveNode,
    manifest, zb_health,
};
use zb_health::server::ZbHealthServer;

manifest!(pub Health = "health.yaml");

/// The schema, bootstrapped at every start before the `warm-up` gate
/// opens; idempotent, and accepted by SQLite and PostgreSQL alike.
pub const SCHEMA: &[&str] = &["CREATE TABLE IF NOT EXISTS tags (\
     name TEXT PRIMARY KEY, \
     value TEXT NOT NULL, \
     written_by TEXT NOT NULL, \
     updated_at_ms BIGINT NOT NULL)"];

/// What the `database` probe runs: a read of the table the service cannot
/// work without, so a dropped or unreadable `tags` table fails it, on
/// SQLite and PostgreSQL alike. `DatabaseProbe::new`'s default would catch
/// a locked or missing SQLite file as this does, but not a missing table.
pub const DATABASE_CHECK: &str = "SELECT 1 FROM tags LIMIT 1";

/// The `database` probe: [`DATABASE_CHECK`] over a connection of the
/// probe's own (never the application's pool), so it fails fast when the
/// database is gone and never waits behind the application's requests.
pub fn database_probe(conn: DatabaseConnection) -> DatabaseProbe {
    DatabaseProbe::with_query(conn, DATABASE_CHECK)
}

/// The simulated PLC the bridge polls: a link that can drop, a poll
/// counter, and a switch that stalls the polling loop.
#[derive(Debug, Default)]
pub struct Plc {
    disconnected: AtomicBool,
    stalled: AtomicBool,
    polls: AtomicU64,
}

/// The PLC link (custom probe): `Degraded` while the link is down, since
/// the bridge still serves its stored tags without it, so `ready` stays
/// 200 (an optional dependency, BE-HLTH-003). Reports the polls so far.
#[zb_health(name = "plc-link", tags = [ready], timeout = "200ms", failure_status = degraded)]
#[derive(Debug, Clone, Default)]
pub struct PlcLinkProbe {
    plc: Arc<Plc>,
}

impl Probe for PlcLinkProbe {
    async fn check(&self) -> ProbeOutcome {
        if self.plc.disconnected.load(Ordering::Relaxed) {
            // The text is for the log; the body says only "check failed".
            return Err("PLC at 10.20.0.7:502 does not answer".into());
        }
        Ok(ProbeResult::healthy()
            .with_description("PLC link up")
            .with_data("polls", self.plc.polls.load(Ordering::Relaxed)))
    }
}

/// The running bridge: its health, its database and its gate.
#[derive(Clone)]
pub struct Scadabridge {
    /// The registry the manifest is installed into.
    pub registry: HealthRegistry,
    db: DatabaseConnection,
    gate: RequireActiveNode,
    plc: Arc<Plc>,
    node_id: Arc<str>,
    /// Keeps the `plc-poller` watchdog registered while the service lives.
    _poller: Arc<Heartbeat>,
}

impl Scadabridge {
    /// Installs the manifest into `registry` over `db` and the cluster
    /// `view`, and starts the PLC polling loop. Returns the startup gates:
    /// signal them with [`warm_up`].
    ///
    /// # Errors
    ///
    /// The manifest's names are already registered in `registry`.
    pub fn install(
        registry: &HealthRegistry,
        db: DatabaseConnection,
        view: Arc<dyn ClusterView>,
        node_id: &str,
    ) -> Result<(Self, ZbHealthServer, HealthStartup), RegistryError> {
        let plc = Arc::new(Plc::default());
        let installed = Health::install_into(
            registry,
            HealthDeps {
                database: database_probe(db.clone()),
                plc_link_probe: PlcLinkProbe { plc: plc.clone() },
                cluster_view: view.clone(),
            },
        )?;
        let poller = Arc::new(installed.watchdogs.plc_poller);
        spawn_poller(Arc::downgrade(&poller), plc.clone());
        let bridge = Self {
            registry: registry.clone(),
            db,
            // The gate over the very view and rule of the active-node probe,
            // closed during this registry's drain.
            gate: RequireActiveNode::new(Health::active_node_gate(view)).registry(registry),
            plc,
            node_id: node_id.into(),
            _poller: poller,
        };
        Ok((bridge, installed.server, installed.startup))
    }

    /// Mounts the application's routes: tag reads open on every node, tag
    /// writes and the admin switches on the active node only.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        let (db, node) = (self.db.clone(), self.node_id.clone());
        config.app_data(web::Data::new((db, node)));
        config.route("/api/tags", web::get().to(list_tags));
        config.service(
            web::resource("/api/tags/{name}")
                .route(web::get().to(read_tag))
                .route(web::post().to(write_tag).wrap(self.gate.clone())),
        );
        let mut admin = web::scope("/admin").wrap(self.gate.clone());
        let switches: [(&str, Switch, bool); 4] = [
            ("/poller/stall", |p| &p.stalled, true),
            ("/poller/resume", |p| &p.stalled, false),
            ("/plc/disconnect", |p| &p.disconnected, true),
            ("/plc/connect", |p| &p.disconnected, false),
        ];
        for (path, switch, value) in switches {
            let plc = self.plc.clone();
            admin = admin.route(
                path,
                web::post().to(move || {
                    switch(&plc).store(value, Ordering::Relaxed);
                    async { HttpResponse::NoContent().finish() }
                }),
            );
        }
        config.service(admin);
    }
}

/// The warm-up: the schema (retried until the database answers), then `Up`
/// in the cluster, then the `warm-up` gate. A node becomes a candidate for
/// the active role only once it can take writes, and by the time `ready`
/// answers 200 its own view already has it `Up`.
pub async fn warm_up(db: DatabaseConnection, startup: HealthStartup, cluster: ClusterNode) {
    bootstrap_until_done(&db, SCHEMA, Duration::from_secs(1)).await;
    cluster.up().await;
    startup.warm_up.ready();
}

/// Which of the [`Plc`]'s switches an admin endpoint sets.
type Switch = fn(&Plc) -> &AtomicBool;

type AppData = web::Data<(DatabaseConnection, Arc<str>)>;

/// A database error as the client sees it: 503 with a fixed text; the
/// real error (hosts, users) goes to the log only.
fn unavailable(e: &DbErr) -> HttpResponse {
    tracing::warn!(error = %e, "tag store unavailable");
    HttpResponse::ServiceUnavailable().json(json!({ "error": "tag store unavailable" }))
}

async fn list_tags(data: AppData) -> HttpResponse {
    let db = &data.0;
    let sql = "SELECT name, value, written_by FROM tags ORDER BY name";
    let stmt = Statement::from_string(db.get_database_backend(), sql);
    match db.query_all_raw(stmt).await {
        Ok(rows) => HttpResponse::Ok().json(rows.iter().filter_map(tag_json).collect::<Vec<_>>()),
        Err(e) => unavailable(&e),
    }
}

async fn read_tag(data: AppData, name: web::Path<String>) -> HttpResponse {
    let db = &data.0;
    let stmt = Statement::from_sql_and_values(
        db.get_database_backend(),
        "SELECT name, value, written_by FROM tags WHERE name = $1",
        [name.into_inner().into()],
    );
    match db.query_one_raw(stmt).await {
        Ok(Some(row)) => HttpResponse::Ok().json(tag_json(&row)),
        Ok(None) => HttpResponse::NotFound().json(json!({ "error": "no such tag" })),
        Err(e) => unavailable(&e),
    }
}

/// `POST /api/tags/{name}` with `{"value": …}`: stores the tag, recording
/// which node wrote it. Only the active node gets here.
async fn write_tag(data: AppData, name: web::Path<String>, body: web::Json<Value>) -> HttpResponse {
    let Some(value) = body.get("value") else {
        return HttpResponse::BadRequest().json(json!({ "error": "expected {\"value\": …}" }));
    };
    let (db, node) = (&data.0, &data.1);
    let name = name.into_inner();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let stmt = Statement::from_sql_and_values(
        db.get_database_backend(),
        "INSERT INTO tags (name, value, written_by, updated_at_ms) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (name) DO UPDATE SET value = excluded.value, \
         written_by = excluded.written_by, updated_at_ms = excluded.updated_at_ms",
        [
            name.clone().into(),
            value.to_string().into(),
            node.to_string().into(),
            now.into(),
        ],
    );
    match db.execute_raw(stmt).await {
        Ok(_) => {
            HttpResponse::Ok().json(json!({ "name": name, "value": value, "writtenBy": &**node }))
        }
        Err(e) => unavailable(&e),
    }
}

fn tag_json(row: &zb_health::database::sea_orm::QueryResult) -> Option<Value> {
    let name: String = row.try_get("", "name").ok()?;
    let value: String = row.try_get("", "value").ok()?;
    let written_by: String = row.try_get("", "written_by").ok()?;
    let value = serde_json::from_str(&value).unwrap_or(Value::String(value));
    Some(json!({ "name": name, "value": value, "writtenBy": written_by }))
}

/// The PLC polling loop, simulated: one poll every 250 ms, each followed by
/// a heartbeat, until the service is gone. While stalled it beats no more,
/// as a loop stuck on a dead PLC would.
fn spawn_poller(heartbeat: Weak<Heartbeat>, plc: Arc<Plc>) {
    std::thread::Builder::new()
        .name("plc-poller".into())
        .spawn(move || {
            while let Some(heartbeat) = heartbeat.upgrade() {
                if !plc.stalled.load(Ordering::Relaxed) {
                    if !plc.disconnected.load(Ordering::Relaxed) {
                        plc.polls.fetch_add(1, Ordering::Relaxed);
                    }
                    heartbeat.beat();
                }
                drop(heartbeat);
                std::thread::sleep(Duration::from_millis(250));
            }
        })
        .expect("the poller thread starts");
}
