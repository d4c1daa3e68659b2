//! MxGateway as `cargo run -p mxgateway` runs it: the real binary as a
//! child process on free loopback ports, observed over real sockets.

#![cfg(unix)]

use mxgateway::{ACTIVE_DESCRIPTION, STANDBY_DESCRIPTION};
use zb_health::gate::STANDBY_BODY;
use zb_health_testkit::{
    Launch, PATIENCE, ServiceProcess, ServingStatus, assert_canonical, eventually, grpc_check,
};

/// The tiers with no probe: `ready` and `live`.
const EMPTY_TIERS: [&str; 2] = ["/health/ready", "/healthz"];

fn start(env: &[(&str, &str)]) -> ServiceProcess {
    let mut launch = Launch::new(env!("CARGO_BIN_EXE_mxgateway"));
    for (name, value) in env {
        launch = launch.env(name, *value);
    }
    let mut gateway = launch.start();
    gateway.wait_listening();
    gateway
}

/// Asserts that `ready` and `live` on both ports answer 200 with the
/// canonical body of an empty tier: `Healthy`, no entries (AT-2).
fn assert_empty_tiers_healthy(gateway: &ServiceProcess) {
    for path in EMPTY_TIERS {
        for response in [gateway.get(path), gateway.get_management(path)] {
            assert_eq!(response.status, 200, "{path}");
            assert_canonical(&response);
            let body = response.json();
            assert_eq!(body["status"], "Healthy", "{path}: {body}");
            assert_eq!(body["entries"], serde_json::json!({}), "{path}: {body}");
        }
    }
}

/// Asserts that `active` on both ports follows the role: 200 `Healthy` on
/// the active gateway, 503 `Unhealthy` on the standby, from the one entry
/// `gateway-role`.
fn assert_active_tier(gateway: &ServiceProcess, active: bool) {
    let (code, status, description) = if active {
        (200, "Healthy", ACTIVE_DESCRIPTION)
    } else {
        (503, "Unhealthy", STANDBY_DESCRIPTION)
    };
    for response in [
        gateway.get("/health/active"),
        gateway.get_management("/health/active"),
    ] {
        assert_eq!(response.status, code, "{}", response.text());
        assert_canonical(&response);
        let body = response.json();
        assert_eq!(body["status"], status, "{body}");
        let entries = body["entries"].as_object().unwrap();
        assert_eq!(entries.len(), 1, "{body}");
        assert_eq!(entries["gateway-role"]["status"], status, "{body}");
        assert_eq!(entries["gateway-role"]["description"], description);
    }
}

/// Whether `grpc.health.v1` `Check("")` answers `SERVING`.
fn grpc_serving(port: u16) -> bool {
    grpc_check(port, "") == Ok(ServingStatus::Serving)
}

#[test]
fn ready_and_live_are_empty_and_healthy_active_follows_the_role_and_grpc_serves() {
    let gateway = start(&[]);
    assert_empty_tiers_healthy(&gateway);
    assert_active_tier(&gateway, true);
    assert!(
        grpc_serving(gateway.grpc_port),
        "grpc.health.v1 \"\" SERVING"
    );
}

#[test]
fn the_old_health_live_redirects_to_healthz() {
    let gateway = start(&[]);
    let response = gateway.get("/health/live");
    assert_eq!(response.status, 308);
    assert_eq!(response.header("location"), Some("/healthz"));
    let head = zb_health_testkit::request(gateway.app, "HEAD", "/health/live", "").unwrap();
    assert_eq!(head.status, 308);
    // Not a tier: the management server never served it.
    assert_eq!(gateway.get_management("/health/live").status, 404);
}

#[test]
fn the_gate_flips_the_write_route_and_the_active_tier_together() {
    let gateway = start(&[]);
    let write = || gateway.post("/tags/Line1.Speed", "42");
    let written = write();
    assert_eq!(written.status, 200, "{}", written.text());
    assert_eq!(written.json()["value"], 42);

    let standby = gateway.post("/admin/standby", "");
    assert_eq!(standby.json()["role"], "standby");
    let refused = write();
    assert_eq!(refused.status, 503);
    assert_eq!(refused.text(), STANDBY_BODY);
    // A standby still serves reads and is ready; the active tier says
    // standby, as the gate does (ZB §1).
    assert_eq!(gateway.get("/tags/Line1.Speed").json()["value"], 42);
    assert_empty_tiers_healthy(&gateway);
    assert_active_tier(&gateway, false);

    let active = gateway.post("/admin/active", "");
    assert_eq!(active.json()["role"], "active");
    assert_eq!(write().status, 200);
    assert_empty_tiers_healthy(&gateway);
    assert_active_tier(&gateway, true);
}

#[test]
fn a_gateway_started_as_standby_refuses_writes_until_made_active() {
    let gateway = start(&[("MXGATEWAY_ROLE", "standby")]);
    assert_eq!(gateway.get("/admin/role").json()["role"], "standby");
    assert_eq!(gateway.post("/tags/a", "1").status, 503);
    assert_active_tier(&gateway, false);
    gateway.post("/admin/active", "");
    assert_eq!(gateway.post("/tags/a", "1").status, 200);
    assert_active_tier(&gateway, true);
}

#[test]
fn sigterm_drains_ready_503_live_200_then_exits_0() {
    // A drain longer than the test needs (the longest the manifest's 30 s
    // grace period allows, R18): it is ended by a second signal once
    // everything is observed, so no assertion races its end.
    let mut gateway = start(&[("DRAIN_DELAY_MS", zb_health_testkit::LONG_DRAIN_DELAY_MS)]);
    assert_empty_tiers_healthy(&gateway);
    assert_active_tier(&gateway, true);
    assert_eq!(gateway.post("/tags/a", "1").status, 200);
    gateway.sigterm();
    let ready = gateway.until_status("/health/ready", 503, PATIENCE);
    assert_canonical(&ready);
    let body = ready.json();
    assert_eq!(body["entries"]["shutdown"]["status"], "Unhealthy", "{body}");
    assert_eq!(body["entries"]["shutdown"]["description"], "draining");
    assert_eq!(gateway.get("/health/active").status, 503);
    // The active gateway takes no more writes once it drains, though its
    // role is still `active`: the standby answer (BE-HLTH-005).
    assert_eq!(gateway.get("/admin/role").json()["role"], "active");
    let refused = gateway.post("/tags/a", "2");
    assert_eq!(refused.status, 503);
    assert_eq!(refused.text(), STANDBY_BODY);
    assert_eq!(
        gateway.get("/tags/a").json()["value"],
        1,
        "reads still served"
    );
    let live = gateway.get("/healthz");
    assert_eq!(live.status, 200, "live stays 200 while draining");
    assert_canonical(&live);
    eventually("grpc NOT_SERVING while draining", PATIENCE, || {
        (!grpc_serving(gateway.grpc_port)).then_some(())
    });
    assert_eq!(gateway.get("/healthz").status, 200, "still serving");
    // The second signal cuts the delay short; in-flight work finishes.
    gateway.sigterm();
    let status = gateway.wait_exit(PATIENCE);
    assert!(status.success(), "exit status {status}");
}

/// `HOST` binds every port (`spec/lifecycle.md`, Kubernetes): `0.0.0.0`
/// serves a pod, the default stays on loopback.
#[test]
fn host_binds_the_application_management_and_grpc_ports() {
    zb_health_testkit::assert_host_binds_every_port(env!("CARGO_BIN_EXE_mxgateway"));
}

/// BE-HLTH-005: a `DRAIN_DELAY_MS` that does not fit the manifest's 30 s
/// grace period (rule R18) stops the start, naming the variable and the
/// grace period; it is never applied.
#[test]
fn a_drain_delay_beyond_the_grace_period_is_refused_at_start() {
    let mut gateway = Launch::new(env!("CARGO_BIN_EXE_mxgateway"))
        .env("DRAIN_DELAY_MS", "30000")
        .start();
    let status = gateway.wait_exit(PATIENCE);
    assert!(!status.success(), "exit status {status}");
    let output = gateway.output();
    // `main`'s `Err`, a `StartError`, prints as its message.
    assert!(output.contains("DRAIN_DELAY_MS="), "{output}");
    assert!(output.contains("grace period of 30000 ms"), "{output}");
}
