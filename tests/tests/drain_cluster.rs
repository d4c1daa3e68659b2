//! The drain's cluster half (AT-6): over three real chitchat nodes, a drain
//! on the active (oldest) node makes it gossip `Leaving`, and the active
//! role moves to the next-oldest node without waiting for failure
//! detection. The hand-over time is printed next to the failure-detection
//! time that `cluster_chitchat.rs` prints for a killed node.

#[path = "support/chitchat.rs"]
mod lan;
mod support;

use std::time::{Duration, Instant};

use lan::{Cluster, GOSSIP_INTERVAL, eventually};
use zb_health::cluster::chitchat::leave_cluster_on_drain;
use zb_health::cluster::{ActiveNodeProbe, ClusterActiveNode};
use zb_health::prelude::{HealthRegistry, HealthStatus, ProbeRegistration, TagSet};

/// Formation of a fresh cluster, on a loaded machine.
const FORM: Duration = Duration::from_secs(20);
/// A few gossip rounds, with room for a loaded machine; far under it in
/// practice (the figure is printed).
const HANDOVER: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_on_the_active_node_moves_the_active_role_to_the_next_oldest() {
    let cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let rule = ClusterActiveNode::unscoped();
    let oldest = cluster.nodes[0].address();
    let next = cluster.nodes[1].address();
    eventually("node 0 active everywhere", FORM, || {
        cluster
            .nodes
            .iter()
            .all(|n| n.active(&rule).as_deref() == Some(oldest.as_str()))
            .then_some(())
    })
    .await;

    // Node 0's registry, as its service would have it.
    let registry = HealthRegistry::new();
    registry
        .add(
            ProbeRegistration::new(
                "active-node",
                ActiveNodeProbe::new(cluster.nodes[0].dyn_view(), rule.clone()),
            )
            .tags(TagSet::ACTIVE),
        )
        .unwrap();
    leave_cluster_on_drain(&registry, cluster.nodes[0].view.clone());
    assert_eq!(
        registry.check(zb_health::prelude::Tag::Active).await.status,
        HealthStatus::Healthy
    );

    let drained = Instant::now();
    assert!(registry.lifecycle().begin_drain());
    let per_node = cluster
        .until_active_everywhere(&rule, &next, drained, HANDOVER)
        .await;
    let per_node: Vec<u128> = per_node.iter().map(Duration::as_millis).collect();
    println!(
        "drain hand-over: the next-oldest was active on every node {} ms after the drain \
         (per node {per_node:?} ms, node 0 first; gossip {} ms)",
        per_node.iter().max().unwrap(),
        GOSSIP_INTERVAL.as_millis(),
    );
    // The drained node's own active probe now fails too: probe and gate agree.
    assert_eq!(
        registry.check(zb_health::prelude::Tag::Active).await.status,
        HealthStatus::Unhealthy
    );
}
