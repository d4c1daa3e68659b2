//! `scadabridge-herd`: scadabridge's dependencies as an operator shares
//! them across a cluster, for the dependency fault tests
//! (`tests/dependency_faults.rs`): the same database probe, chitchat node
//! and settings as `scadabridge`, with a manifest that marks the database
//! `shared` (an outage on a majority of the nodes keeps them all ready,
//! Degraded), holds one failed run back (`failure_threshold: 2`) and makes
//! the PLC link depend on the database.
//!
//! Settings as `scadabridge` (`service_kit::Settings`): `DATABASE_URL`
//! (SQLite under `DATA_DIR` by default, one file per node), the ports,
//! `CLUSTER_*`.

use std::io;
use std::time::Duration;

use scadabridge::{SCHEMA, database_probe};
use service_kit::database::bootstrap_until_done;
use service_kit::{ClusterNode, Defaults, Settings, connect_database};
use zb_health::prelude::*;

manifest!(
    Health,
    yaml = r#"
service: scadabridge-herd
orchestrator: { timeout: 1s, termination_grace_period: 30s }
defaults: { timeout: 800ms }
lifecycle: { startup_gates: [warm-up], drain_delay: 5s }
management: { port: 8081 }
probes:
  - { name: database, kind: database, shared: true, failure_threshold: 2 }
  - { name: cluster-membership, kind: cluster-membership }
  - { name: active-node, kind: active-node }
  - { kind: custom, type: crate::PlcLink, depends_on: [database] }
"#
);

/// The PLC link: always up here; what matters is that it is checked only
/// while the database it depends on is not failing.
#[zb_health(name = "plc-link", tags = [ready], timeout = "500ms", failure_status = degraded)]
#[derive(Clone, Default)]
pub struct PlcLink;

impl Probe for PlcLink {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy().with_description("link up"))
    }
}

#[actix_web::main]
async fn main() -> Result<(), StartError> {
    service_kit::init_logging();
    let settings = Settings::from_env(Defaults {
        service: Health::SERVICE,
        gossip_port: 7111,
    })
    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let db = connect_database(&settings.database_url)
        .await
        .map_err(io::Error::other)?;
    let cluster = ClusterNode::start(&settings.cluster).await?;
    let installed = Health::install(HealthDeps {
        database: database_probe(db.clone()),
        cluster_view: cluster.view(),
        plc_link: PlcLink,
    })?;
    cluster.leave_on_drain(HealthRegistry::process());
    let (startup, up) = (installed.startup, cluster.clone());
    actix_web::rt::spawn(async move {
        bootstrap_until_done(&db, SCHEMA, Duration::from_secs(1)).await;
        up.up().await;
        startup.warm_up.ready();
    });
    let served = installed.server.from_env()?.run().await;
    drop(cluster);
    served
}
