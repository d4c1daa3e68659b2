//! Three OtOpcUa nodes on loopback, each a real process with its own SQLite
//! file, gossiping over real chitchat: the active tier follows the
//! role-scoped rule `[admin, driver]` (ZB-2.3a) and moves when the oldest
//! node stops.
//!
//! | node | `CLUSTER_ROLES` | answers for | `/health/active` |
//! |---|---|---|---|
//! | 0 (oldest) | `admin,driver` | `admin` | 200: oldest Up `admin` |
//! | 1 | `driver` | `driver` | 503: node 0 is the oldest Up `driver` |
//! | 2 | `historian` | none | 503: `no_active_role_status: unhealthy` |

#![cfg(unix)]

use zb_health_testkit::{
    Launch, PATIENCE, Response, ServiceProcess, assert_canonical, eventually, free_udp_addr,
};

/// Starts one node per role list, oldest first, all seeded with every
/// node's gossip address.
fn start_nodes(roles: &[&str]) -> Vec<ServiceProcess> {
    let gossip: Vec<String> = roles.iter().map(|_| free_udp_addr().to_string()).collect();
    let seeds = gossip.join(",");
    let mut nodes = Vec::new();
    for (i, (roles, addr)) in roles.iter().zip(&gossip).enumerate() {
        let mut node = Launch::new(env!("CARGO_BIN_EXE_otopcua"))
            .env("CLUSTER_ROLES", *roles)
            .env("CLUSTER_ADDR", addr.clone())
            .env("CLUSTER_SEEDS", seeds.clone())
            .env("NODE_ID", format!("node-{i}"))
            // A drain longer than the test needs (the longest the 30 s
            // grace period allows, R18); a second signal ends it.
            .env("DRAIN_DELAY_MS", zb_health_testkit::LONG_DRAIN_DELAY_MS)
            .start();
        node.wait_listening();
        nodes.push(node);
    }
    nodes
}

/// The `active-node` entry of `node`'s active tier, once `condition` holds
/// on the answer.
fn until_active(
    node: &ServiceProcess,
    what: &str,
    condition: impl Fn(&Response) -> bool,
) -> Response {
    eventually(what, PATIENCE, || {
        // The management port: the application port hides the addresses.
        let response = node.try_get_management("/health/active").ok()?;
        condition(&response).then(|| {
            assert_canonical(&response);
            response
        })
    })
}

fn entry(response: &Response) -> serde_json::Value {
    response.json()["entries"]["active-node"].clone()
}

#[test]
fn the_oldest_admin_is_active_and_the_role_moves_when_it_stops() {
    let mut nodes = start_nodes(&["admin,driver", "driver", "historian"]);
    let oldest = nodes[0].gossip.clone();
    for node in &nodes {
        node.until_status("/health/ready", 200, PATIENCE);
    }

    let active = until_active(&nodes[0], "node 0 active", |r| r.status == 200);
    let e = entry(&active);
    assert_eq!(e["status"], "Healthy");
    assert_eq!(e["data"]["activeRole"], "admin");
    assert_eq!(e["data"]["activeNode"], oldest.as_str());

    // Node 1 answers for `driver`, whose oldest Up holder is node 0.
    let standby = until_active(&nodes[1], "node 1 sees node 0 active", |r| {
        entry(r)["data"]["activeNode"] == oldest.as_str()
    });
    assert_eq!(standby.status, 503);
    let e = entry(&standby);
    assert_eq!(e["status"], "Unhealthy");
    assert_eq!(e["data"]["activeRole"], "driver");

    // Node 2 holds neither role: Unhealthy, per no_active_role_status.
    let none = until_active(&nodes[2], "node 2 in the cluster", |r| {
        entry(r)["description"] == "this node holds none of the active roles"
    });
    assert_eq!(none.status, 503);
    assert_eq!(entry(&none)["status"], "Unhealthy");

    // The gate is the probe's rule: only node 0 takes deployments.
    let body = r#"{"name":"line-1"}"#;
    assert_eq!(nodes[0].post("/deployments", body).status, 201);
    for standby in &nodes[1..] {
        let refused = standby.post("/deployments", body);
        assert_eq!(refused.status, 503);
        assert_eq!(refused.text(), zb_health::gate::STANDBY_BODY);
    }

    // Stop the oldest: its drain announces Leaving, so node 1 becomes the
    // oldest Up `driver` and takes over; node 2 still holds no role.
    nodes[0].sigterm();
    let taken = until_active(&nodes[1], "node 1 takes over", |r| r.status == 200);
    let e = entry(&taken);
    assert_eq!(e["data"]["activeNode"], nodes[1].gossip.as_str());
    assert_eq!(e["data"]["activeRole"], "driver");
    assert_eq!(nodes[1].post("/deployments", body).status, 201);
    assert_eq!(nodes[2].get("/health/active").status, 503);
    nodes[0].sigterm();
    let status = nodes[0].wait_exit(PATIENCE);
    assert!(status.success(), "exit status {status}");
}
