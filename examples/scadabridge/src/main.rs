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
use service_kit::{ClusterNode, Defaults, Settings, configure_metrics, connect_database};
use zb_health::prelude::{HealthRegistry, StartError};

#[actix_web::main]
async fn main() -> Result<(), StartError> {
    service_kit::init_logging();
    let settings = Settings::from_env(Defaults {
        service: Health::SERVICE,
        gossip_port: 7101,
    })
    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    settings.announce();
    let db = connect_database(&settings.database_url)
        .await
        .map_err(io::Error::other)?;
    let cluster = ClusterNode::start(&settings.cluster).await?;
    let registry = HealthRegistry::process();
    let (bridge, server, startup) = Scadabridge::install(
        registry,
        db.clone(),
        cluster.view(),
        &settings.cluster.node_id,
    )?;
    // The drain announces `Leaving`, so the next-oldest node takes over.
    cluster.leave_on_drain(registry);
    let server = server.from_env()?.metrics(configure_metrics);
    // Runs once `run` has bound every port: until then, and until the
    // schema is in place, ready and active answer 503 "starting".
    actix_web::rt::spawn(warm_up(db, startup, cluster.clone()));
    let served = server.app(move |c| bridge.configure(c)).run().await;
    // The node gossips until the servers have stopped.
    drop(cluster);
    served
}
