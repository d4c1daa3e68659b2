//! What every scadabridge process test shares: the binary, the deadline,
//! and the waits for a node to be warm.

#![allow(dead_code)]

use std::time::Duration;

use zb_health_testkit::{Launch, ServiceProcess, assert_canonical};

/// How long any condition may take: generous, since the machine may be
/// busy compiling; every wait ends as soon as its condition holds.
pub const DEADLINE: Duration = Duration::from_secs(90);

/// The scadabridge binary Cargo built for these tests.
pub fn launch() -> Launch {
    Launch::new(env!("CARGO_BIN_EXE_scadabridge"))
}

/// Starts one node with `launch` and waits until its ready tier answers
/// 200 (warm-up done, schema in place, node `Up`).
pub fn start_warm(launch: &Launch) -> ServiceProcess {
    let mut node = launch.start();
    node.wait_listening();
    let ready = node.until_status("/health/ready", 200, DEADLINE);
    assert_canonical(&ready);
    node
}

/// `POST /api/tags/{name}` with `{"value": value}`.
pub fn write_tag(node: &ServiceProcess, name: &str, value: i64) -> zb_health_testkit::Response {
    node.post(
        &format!("/api/tags/{name}"),
        &format!("{{\"value\": {value}}}"),
    )
}
