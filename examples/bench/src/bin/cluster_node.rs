//! `zb-health-cluster-node`: the lean cluster node `BENCH=cluster` starts
//! 3, 9 and 27 of, to measure what the library's gossip costs as the
//! cluster grows: a real chitchat node (the examples'
//! `service_kit::ClusterNode`, 200 ms gossip) carrying the library's keys
//! (status and roles, the beat, one shared verdict, the ready verdict),
//! the manifest `cluster-node.yaml`, and the tiers on `PORT` and
//! `MANAGEMENT_PORT`. Nothing else runs in it, so its CPU and memory are
//! the library's and chitchat's.
//!
//! Settings as every example service (`service_kit::Settings`), and
//! `CLUSTER_EXPECTED_SIZE` for the majority guard.

use std::io;

use service_kit::{ClusterNode, Defaults, Settings};
use zb_health::prelude::*;

/// The one shared dependency: always reachable, so its verdict key is
/// written once and then only gossiped.
#[zb_health(name = "upstream", tags = [ready], timeout = "500ms", shared = true)]
#[derive(Clone, Default)]
pub struct Upstream;

impl Probe for Upstream {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

manifest!(Health = "cluster-node.yaml");

#[actix_web::main]
async fn main() -> Result<(), StartError> {
    let settings = Settings::from_env(Defaults {
        service: Health::SERVICE,
        gossip_port: 7301,
    })
    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let cluster = ClusterNode::start(&settings.cluster).await?;
    let installed = Health::install(HealthDeps {
        cluster_view: cluster.view(),
        upstream: Upstream,
    })?;
    cluster.leave_on_drain(HealthRegistry::process());
    let up = cluster.clone();
    actix_web::rt::spawn(async move { up.up().await });
    let served = installed.server.from_env()?.run().await;
    drop(cluster);
    served
}
