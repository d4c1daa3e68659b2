//! Three scadabridge nodes on loopback (ZB §7 (b), (e), (f)): real
//! binaries, real chitchat gossip over UDP, one SQLite file shared by the
//! three (as a real deployment shares its database).
//!
//! Exactly one node, the oldest `Up` member, answers `/health/active` 200
//! and takes writes; the others answer 503 with canonical bodies and refuse
//! writes while serving reads. SIGTERM to the oldest drains it (ready 503,
//! live 200) and the active role moves to the next-oldest.

mod common;

use common::{DEADLINE, launch, write_tag};
use zb_health::gate::STANDBY_BODY;
use zb_health_testkit::{ServiceProcess, assert_canonical, eventually, start_cluster};

/// The `/health/active` status code of every node (0: no answer).
fn active_codes(nodes: &[ServiceProcess]) -> Vec<u16> {
    nodes
        .iter()
        .map(|n| n.try_get("/health/active").map_or(0, |r| r.status))
        .collect()
}

#[test]
fn one_active_node_takes_the_writes_and_the_role_moves_on_sigterm() {
    let root = std::env::temp_dir().join(format!("scadabridge-cluster-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let shared = format!("sqlite://{}?mode=rwc", root.join("shared.db").display());
    // A drain long enough to watch; the test waits on conditions only.
    let launch = launch()
        .env("DATABASE_URL", shared)
        .env("DRAIN_DELAY_MS", "10000");
    let mut nodes = start_cluster(&launch, 3);

    // Every node warm, and they agree: only node 0, the oldest, is active.
    eventually("every node ready", DEADLINE, || {
        nodes
            .iter()
            .all(|n| n.try_get("/health/ready").is_ok_and(|r| r.status == 200))
            .then_some(())
    });
    let oldest = nodes[0].gossip.clone();
    eventually(
        "every node to see node 0, alone, as active",
        DEADLINE,
        || {
            let agree = nodes.iter().all(|n| {
                n.try_get_management("/health/active").is_ok_and(|r| {
                    r.json()["entries"]["active-node"]["data"]["activeNode"] == oldest.as_str()
                })
            });
            (agree && active_codes(&nodes) == [200, 503, 503]).then_some(())
        },
    );
    for node in &nodes {
        // The management port shows the cluster addresses.
        let active = node.get_management("/health/active");
        assert_canonical(&active);
        let entry = &active.json()["entries"]["active-node"];
        assert_eq!(
            entry["data"]["selfAddress"],
            node.gossip.as_str(),
            "{entry}"
        );
        assert_eq!(entry["data"]["activeNode"], oldest.as_str(), "{entry}");
        let ready = node.get("/health/ready");
        assert_canonical(&ready);
        // The Default policy: every member is Up, so every node is Healthy.
        assert_eq!(
            ready.entry_status("cluster-membership").as_deref(),
            Some("Healthy")
        );
        assert_eq!(ready.entry_status("database").as_deref(), Some("Healthy"));
    }
    assert_eq!(
        nodes[1]
            .get("/health/active")
            .entry_status("active-node")
            .as_deref(),
        Some("Unhealthy")
    );

    // (e) the gate: the standbys refuse the write, the active node takes it,
    // and reads stay open on the standbys.
    for standby in &nodes[1..] {
        let refused = write_tag(standby, "valve.7", 1);
        assert_eq!(refused.status, 503);
        assert_eq!(refused.text(), STANDBY_BODY);
        assert_eq!(standby.post("/admin/poller/stall", "").status, 503);
    }
    assert_eq!(write_tag(&nodes[0], "valve.7", 1).status, 200);
    let read = nodes[2].get("/api/tags/valve.7");
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["writtenBy"], "node-0");

    // SIGTERM the oldest: while it drains, ready is 503 and live 200 ...
    nodes[0].sigterm();
    let ready = nodes[0].until_status("/health/ready", 503, DEADLINE);
    assert_canonical(&ready);
    assert_eq!(
        ready.json()["entries"]["shutdown"]["description"],
        "draining"
    );
    // The drain leaves the cluster (gossips `Leaving`): the node's own
    // leave fails its membership check, whatever the policy (AT-6).
    let leaving = eventually("node 0 to report itself Leaving", DEADLINE, || {
        let ready = nodes[0].try_get("/health/ready").ok()?;
        (ready.entry_status("cluster-membership").as_deref() == Some("Unhealthy")).then_some(ready)
    });
    assert_eq!(
        leaving.json()["entries"]["cluster-membership"]["description"],
        "Member status: Leaving"
    );
    let live = nodes[0].get("/healthz");
    assert_eq!(live.status, 200, "{}", live.text());
    assert_canonical(&live);
    // ... and the next-oldest takes the active role, node 2 stays standby.
    let next = nodes[1].gossip.clone();
    eventually("node 1 active, node 2 standby naming it", DEADLINE, || {
        let standby = nodes[2].try_get_management("/health/active").ok()?;
        let names_next =
            standby.json()["entries"]["active-node"]["data"]["activeNode"] == next.as_str();
        (names_next && active_codes(&nodes[1..]) == [200, 503]).then_some(standby)
    });
    assert_canonical(&nodes[2].get("/health/active"));
    assert_eq!(write_tag(&nodes[1], "valve.7", 2).status, 200);
    assert_eq!(write_tag(&nodes[2], "valve.7", 3).status, 503);
    // The drained node exits cleanly.
    assert!(nodes[0].wait_exit(DEADLINE).success());
    let _ = std::fs::remove_dir_all(&root);
}
