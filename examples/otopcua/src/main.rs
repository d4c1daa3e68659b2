//! `cargo run -p otopcua`: OtOpcUa on 127.0.0.1:8080, management on 8081,
//! `grpc.health.v1` on 50051, with a SQLite file and a single-node chitchat
//! cluster by default. service-kit's variables switch it: `DATABASE_URL`
//! (PostgreSQL), `CLUSTER_ADDR` / `CLUSTER_SEEDS` (a real multi-node
//! cluster), `CLUSTER_ROLES` (default `admin,driver`), `PORT`,
//! `MANAGEMENT_PORT`, `GRPC_PORT`, `DRAIN_DELAY_MS`; `MEMBERSHIP_POLICY`
//! selects the manifest (`default` or `ot-opc-ua-compat`).

use std::io;
use std::time::Duration;

use otopcua::{Health, MembershipPolicy, OtOpcUa, SCHEMA};
use service_kit::database::bootstrap_until_done;
use service_kit::{
    ClusterNode, Defaults, Settings, configure_metrics, connect_database, init_logging,
};
use zb_health::prelude::{HealthRegistry, StartError};

/// The roles of a node that names none: a fused node, as a single-node
/// OtOpcUa is.
const DEFAULT_ROLES: [&str; 2] = ["admin", "driver"];

#[actix_web::main]
async fn main() -> Result<(), StartError> {
    init_logging();
    let policy = MembershipPolicy::from_env().map_err(io::Error::other)?;
    let registry = HealthRegistry::process();
    let mut settings = Settings::from_env(Defaults {
        service: Health::SERVICE,
        gossip_port: 7200,
    })
    .map_err(io::Error::other)?;
    if std::env::var_os("CLUSTER_ROLES").is_none() {
        settings.cluster.roles = DEFAULT_ROLES.map(str::to_owned).to_vec();
    }
    settings.announce();
    let db = connect_database(&settings.database_url)
        .await
        .map_err(io::Error::other)?;
    let node = ClusterNode::start(&settings.cluster).await?;
    let (otopcua, server, schema) =
        OtOpcUa::install_into(registry, policy, db.clone(), node.view())?;
    node.leave_on_drain(registry);
    // Warm-up, once the ports are bound: the schema (waiting for a database
    // that is not up yet), then `Up` in gossip, then the startup gate, so
    // `ready` 200 means this node's own view has it `Up`. Until the gate
    // opens, `active` answers 503 too: a node still starting is never the
    // active one.
    let warm = node.clone();
    actix_web::rt::spawn(async move {
        bootstrap_until_done(&db, &[SCHEMA], Duration::from_secs(1)).await;
        warm.up().await;
        schema.ready();
    });
    server
        .from_env()?
        .metrics(configure_metrics)
        .app(move |config| otopcua.configure_app(config))
        .run()
        .await
}
