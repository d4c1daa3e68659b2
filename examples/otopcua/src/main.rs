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
use service_kit::{ClusterNode, Defaults, Service, Settings, connect_database, init_logging};
use zb_health::HealthRegistry;

/// The roles of a node that names none: a fused node, as a single-node
/// OtOpcUa is.
const DEFAULT_ROLES: [&str; 2] = ["admin", "driver"];

#[actix_web::main]
async fn main() -> io::Result<()> {
    init_logging();
    let mut settings = Settings::from_env(Defaults {
        service: Health::SERVICE,
        management_port: Health::MANAGEMENT_PORT,
        grpc_port: 50051,
        drain: Health::DRAIN,
        gossip_port: 7200,
    })
    .map_err(io::Error::other)?;
    if std::env::var_os("CLUSTER_ROLES").is_none() {
        settings.cluster.roles = DEFAULT_ROLES.map(str::to_owned).to_vec();
    }
    let policy = MembershipPolicy::from_env().map_err(io::Error::other)?;
    let db = connect_database(&settings.database_url)
        .await
        .map_err(io::Error::other)?;
    let node = ClusterNode::start(&settings.cluster).await?;
    let registry = HealthRegistry::process();
    let (otopcua, schema) = OtOpcUa::install_into(registry, policy, db.clone(), node.view())
        .map_err(io::Error::other)?;
    // Both manifests map gRPC alike.
    let grpc = Health::grpc(registry).map_err(io::Error::other)?;
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
    let endpoints = otopcua.endpoints.clone();
    Service {
        settings,
        registry: registry.clone(),
        endpoints,
        app: move |config: &mut actix_web::web::ServiceConfig| otopcua.configure_app(config),
        grpc: Some(grpc),
        cluster: Some(node),
    }
    .run()
    .await
}
