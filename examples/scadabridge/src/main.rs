//! `cargo run -p scadabridge`: with no settings, a SQLite file under the
//! temp dir and a single-node chitchat cluster (gossip on udp
//! 127.0.0.1:7101), the application and the three tiers on
//! 127.0.0.1:8080, the tiers again on the management server
//! 127.0.0.1:8081, `grpc.health.v1` on 127.0.0.1:50051. A single node is
//! the oldest `Up` member, so after warm-up all three tiers answer 200.
//!
//! `DATABASE_URL=postgres://…` switches to PostgreSQL, `CLUSTER_SEEDS=…`
//! to a real multi-node cluster (see `cluster.sh`); every variable is in
//! `service_kit::settings`. On SIGTERM or Ctrl-C: `ready` and `active`
//! answer 503 at once, the node gossips `Leaving` so the next-oldest takes
//! the active role, it serves on for the drain delay (5 s;
//! `DRAIN_DELAY_MS`), then exits 0.

use std::io;

use scadabridge::{Health, Scadabridge, warm_up};
use service_kit::{ClusterNode, Defaults, Service, Settings, connect_database};
use zb_health::HealthRegistry;

#[actix_web::main]
async fn main() -> io::Result<()> {
    service_kit::init_logging();
    let settings = Settings::from_env(Defaults {
        service: Health::SERVICE,
        management_port: Health::MANAGEMENT_PORT,
        grpc_port: 50051,
        drain: Health::DRAIN,
        gossip_port: 7101,
    })
    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let db = connect_database(&settings.database_url)
        .await
        .map_err(io::Error::other)?;
    let cluster = ClusterNode::start(&settings.cluster).await?;
    let (bridge, startup) = Scadabridge::install(
        HealthRegistry::process(),
        db.clone(),
        cluster.view(),
        &settings.cluster.node_id,
    )
    .map_err(io::Error::other)?;
    let grpc = Health::grpc(&bridge.registry).map_err(io::Error::other)?;
    // Runs once `run` has bound every port: until then, and until the
    // schema is in place, ready and active answer 503 "starting".
    actix_web::rt::spawn(warm_up(db, startup, cluster.clone()));
    Service {
        settings,
        registry: bridge.registry.clone(),
        endpoints: bridge.endpoints.clone(),
        app: move |c: &mut actix_web::web::ServiceConfig| bridge.configure(c),
        grpc: Some(grpc),
        cluster: Some(cluster),
    }
    .run()
    .await
}
