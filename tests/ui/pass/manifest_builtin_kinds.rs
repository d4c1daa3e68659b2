// Every built-in kind: each demands its typed dependency in `HealthDeps`,
// cluster kinds share one view, the gate gets the probe's own rule, and the
// execution policy keys (`cache`, `refresh`, `max_staleness`) are carried.
use std::sync::Arc;
use std::time::Duration;

use zb_health::cluster::{ClusterView, InMemoryClusterView};
use zb_health::prelude::{FailureStatus, Tag, TagSet};

zb_health::prelude::manifest!(Health = "manifests/scadabridge.yaml");

/// Compiles only if every dependency has the type the manifest implies.
#[allow(dead_code)]
fn deps(
    database: zb_health::database::DatabaseProbe,
    upstream: zb_health::grpc::GrpcDependencyProbe,
    cluster_view: Arc<dyn ClusterView>,
) -> HealthDeps {
    HealthDeps { database, upstream, cluster_view }
}

fn main() {
    let names: Vec<&str> = Health::PROBES.iter().map(|p| p.name).collect();
    assert_eq!(names, ["database", "akka-cluster", "akka-legacy", "cluster-transport", "active-node", "upstream"]);
    let meta = |n: &str| Health::PROBES.iter().find(|p| p.name == n).copied().unwrap();
    assert_eq!(meta("database").timeout().as_millis(), 1500);
    assert_eq!(meta("akka-cluster").timeout().as_millis(), 800, "defaults.timeout applies to built-ins");
    assert_eq!(meta("active-node").settings.tags, TagSet::of(&[Tag::Active]));
    assert_eq!(meta("upstream").settings.failure_status, FailureStatus::Degraded);
    // The execution policy keys reach the metadata the registration is
    // built from (`ProbeMeta::registration` applies them).
    assert_eq!(meta("database").settings.policy.refresh, Some(Duration::from_secs(1)));
    assert_eq!(meta("database").settings.policy.max_staleness, Some(Duration::from_secs(3)));
    assert_eq!(meta("database").settings.policy.cache, None);
    assert_eq!(meta("upstream").settings.policy.cache, Some(Duration::from_secs(2)));
    assert_eq!((meta("upstream").settings.policy.refresh, meta("active-node").settings.policy.refresh), (None, None));
    assert_eq!(Health::active_node_rule().roles(), ["admin", "driver"]);
    let view: Arc<dyn ClusterView> = Arc::new(InMemoryClusterView::new());
    let gate = Health::active_node_gate(view);
    assert!(!zb_health::prelude::ActiveNodeGate::is_active_node(&gate), "no cluster yet: standby");
}
