//! Both of OtOpcUa's manifests, compiled and installed: `health.yaml`
//! (`policy: default`, the convergence target) and `health.compat.yaml`
//! (`policy: ot-opc-ua-compat`, the legacy mapping). For every membership
//! status this node can have, the `cluster` entry of each, as an operator
//! would read it on `/health/ready`.

use std::sync::Arc;

use otopcua::{MembershipPolicy, OtOpcUa, SCHEMA};
use zb_health::cluster::{ClusterState, InMemoryClusterView, Member, MemberStatus};
use zb_health::database::sea_orm::{ConnectionTrait, Database, DatabaseConnection};
use zb_health::prelude::{HealthRegistry, HealthStatus, Tag};

/// A state with this node at `status` (or absent) and an `Up` peer.
fn state(status: Option<MemberStatus>) -> ClusterState {
    let member =
        |address: &str, status, age| Member::new(address, status, age).with_roles(["admin"]);
    let mut members = vec![member("127.0.0.1:7002", MemberStatus::Up, 1)];
    if let Some(status) = status {
        members.push(member("127.0.0.1:7001", status, 2));
    }
    ClusterState {
        self_address: "127.0.0.1:7001".to_owned(),
        members,
    }
}

fn scratch_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("otopcua-policy-{}", std::process::id()))
}

async fn database() -> DatabaseConnection {
    let dir = scratch_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("policy.db").display());
    let db = Database::connect(url).await.unwrap();
    db.execute_unprepared(SCHEMA).await.unwrap();
    db
}

/// The `cluster` entry's status under `policy` with this node at `status`.
async fn cluster_entry(
    db: &DatabaseConnection,
    policy: MembershipPolicy,
    status: Option<MemberStatus>,
) -> HealthStatus {
    let registry = HealthRegistry::new();
    let view = Arc::new(InMemoryClusterView::with_state(state(status)));
    let (_service, _server, schema) =
        OtOpcUa::install_into(&registry, policy, db.clone(), view).unwrap();
    schema.ready();
    let report = registry.check(Tag::Ready).await;
    report.entry("cluster").unwrap().status
}

#[tokio::test]
async fn default_takes_a_node_out_of_rotation_where_compat_keeps_it_degraded() {
    use HealthStatus::{Degraded, Healthy, Unhealthy};
    use MemberStatus::*;
    let db = database().await;
    // (this node's status, Default's answer, OtOpcUaCompat's answer)
    let table = [
        (Some(Up), Healthy, Healthy),
        (Some(Joining), Healthy, Degraded),
        (Some(WeaklyUp), Unhealthy, Degraded),
        (Some(Leaving), Degraded, Degraded),
        (Some(Exiting), Degraded, Degraded),
        (Some(Down), Unhealthy, Degraded),
        (Some(Removed), Unhealthy, Degraded),
        (None, Unhealthy, Degraded),
    ];
    for (status, default, compat) in table {
        assert_eq!(
            cluster_entry(&db, MembershipPolicy::Default, status).await,
            default,
            "default policy, self {status:?}"
        );
        assert_eq!(
            cluster_entry(&db, MembershipPolicy::OtOpcUaCompat, status).await,
            compat,
            "ot-opc-ua-compat policy, self {status:?}"
        );
    }
    db.close().await.unwrap();
    std::fs::remove_dir_all(scratch_dir()).unwrap();
}

#[test]
fn the_two_manifests_differ_only_in_the_policy() {
    let strip = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.replace("ot-opc-ua-compat", "default"))
            .collect()
    };
    let root = env!("CARGO_MANIFEST_DIR");
    let default = std::fs::read_to_string(format!("{root}/health.yaml")).unwrap();
    let compat = std::fs::read_to_string(format!("{root}/health.compat.yaml")).unwrap();
    assert!(default.contains("policy: default }"));
    assert!(compat.contains("policy: ot-opc-ua-compat }"));
    assert_eq!(strip(&default), strip(&compat));
}
