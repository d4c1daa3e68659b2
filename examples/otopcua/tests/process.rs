//! OtOpcUa as `cargo run -p otopcua` runs it, one node: the real binary as
//! a child process on free loopback ports, a real SQLite file or a real
//! PostgreSQL server, a real (single-node) chitchat cluster. ZB §7:
//! (a) all three tiers; (b) the cluster probes with the `default` policy;
//! (c) the database probe is zb-health's `DatabaseProbe`; (d) no gRPC
//! dependency probe (OtOpcUa has none, ZB §2.4), but it serves
//! `grpc.health.v1` itself; (e) the gate is the cluster gate; (f) every body
//! is canonical.

#![cfg(unix)]

use std::net::TcpListener;

use zb_health::database::sea_orm::sqlx::{Connection, Executor, SqliteConnection};
use zb_health_testkit::postgres::{PASSWORD, Postgres};
use zb_health_testkit::{
    GrpcCode, Launch, PATIENCE, Response, ServiceProcess, ServingStatus, assert_canonical,
    eventually, grpc_check, request,
};

fn launch() -> Launch {
    Launch::new(env!("CARGO_BIN_EXE_otopcua"))
}

/// Starts `launch` and waits until `ready` answers 200: the schema is in
/// place and the node is `Up`.
fn start_ready(launch: Launch) -> ServiceProcess {
    let mut node = launch.start();
    node.wait_listening();
    node.until_status("/health/ready", 200, PATIENCE);
    node
}

/// The entry names of a canonical body, in order.
fn entry_names(response: &Response) -> Vec<String> {
    let body = response.json();
    body["entries"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// The value of the sample `series` (name and labels) on the management
/// port's `/metrics`, if it is there.
fn metric(node: &ServiceProcess, series: &str) -> Option<f64> {
    let text = node.get_management("/metrics").text();
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

/// Polls `ready` until `condition` holds on a canonical answer.
fn until_ready(
    node: &ServiceProcess,
    what: &str,
    condition: impl Fn(&Response) -> bool,
) -> Response {
    eventually(what, PATIENCE, || {
        let response = node.try_get("/health/ready").ok()?;
        condition(&response).then(|| {
            assert_canonical(&response);
            response
        })
    })
}

#[test]
fn one_node_answers_every_tier_with_canonical_bodies() {
    let node = start_ready(launch());
    let ready = until_ready(&node, "the node Up", |r| {
        r.json()["entries"]["cluster"]["description"] == "Member status: Up"
    });
    assert_eq!(ready.status, 200);
    assert_eq!(entry_names(&ready), ["database", "cluster", "transport"]);
    let body = ready.json();
    for name in ["database", "cluster", "transport"] {
        assert_eq!(body["entries"][name]["status"], "Healthy", "{body}");
    }
    assert_eq!(body["clusterReady"], true, "{body}");

    // The application port does not show the cluster addresses; the
    // management port does.
    let public = node.get("/health/active");
    assert_eq!(public.status, 200);
    assert!(
        !public.text().contains(node.gossip.as_str()),
        "{}",
        public.text()
    );
    let active = node.get_management("/health/active");
    assert_eq!(active.status, 200);
    assert_canonical(&active);
    let entry = &active.json()["entries"]["active-node"];
    assert_eq!(entry["status"], "Healthy");
    assert_eq!(entry["data"]["activeRole"], "admin", "{entry}");
    assert_eq!(entry["data"]["activeNode"], node.gossip.as_str());
    assert_eq!(entry["data"]["selfAddress"], node.gossip.as_str());

    let live = node.get("/healthz");
    assert_eq!(live.status, 200);
    assert_canonical(&live);
    assert_eq!(live.json()["entries"], serde_json::json!({}));

    for path in ["/health/ready", "/health/active", "/healthz"] {
        let management = node.get_management(path);
        assert_eq!(management.status, 200, "{path} on the management port");
        assert_canonical(&management);
    }

    // The gated write on the active node, and the read.
    let created = node.post("/deployments", r#"{"name":"line-1"}"#);
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(
        node.get("/deployments").json()["deployments"],
        serde_json::json!(["line-1"])
    );
}

#[test]
fn drivers_added_and_removed_at_run_time_change_the_ready_entries() {
    let node = start_ready(launch());
    // The driver's device: a TCP endpoint this test owns.
    let device = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = device.local_addr().unwrap();
    let config = format!(r#"{{"endpoint":"{endpoint}"}}"#);

    let added = node.post("/admin/drivers/plc-1", &config);
    assert_eq!(added.status, 201, "{}", added.text());
    assert_eq!(added.json()["probe"], "driver-plc-1");
    let ready = node.get("/health/ready");
    assert_eq!(ready.status, 200);
    assert_canonical(&ready);
    assert_eq!(
        entry_names(&ready),
        ["database", "cluster", "transport", "driver-plc-1"]
    );
    assert_eq!(
        ready.entry_status("driver-plc-1").as_deref(),
        Some("Healthy")
    );

    // The device goes away: the node serves its last-known-good values, so
    // the driver is Degraded and the node stays ready (ZB §2.4).
    let ready_failures = r#"zb_health_tier_failures_total{tier="ready"}"#;
    let before = metric(&node, ready_failures).expect("the tier counter is exported");
    drop(device);
    let ready = until_ready(&node, "the driver Degraded", |r| {
        r.entry_status("driver-plc-1").as_deref() == Some("Degraded")
    });
    assert_eq!(ready.status, 200, "{}", ready.text());
    assert_eq!(ready.json()["status"], "Degraded");
    assert_eq!(
        ready.json()["entries"]["driver-plc-1"]["description"],
        otopcua::drivers::LAST_KNOWN_GOOD_DESCRIPTION
    );
    assert_eq!(ready.entry_status("database").as_deref(), Some("Healthy"));
    assert_eq!(node.get_management("/health/ready").status, 200);
    assert_eq!(node.get("/healthz").status, 200, "live ignores drivers");
    // A probe added at run time is observed like a declared one.
    let metrics = node.get_management("/metrics").text();
    let failures = r#"zb_health_probe_failures_total{probe="driver-plc-1"} 1"#;
    assert!(metrics.contains(failures), "{failures} in\n{metrics}");
    // ...but a Degraded driver is no readiness failure (BE-HLTH-008).
    assert_eq!(metric(&node, ready_failures), Some(before), "{metrics}");

    // Tearing the driver down removes its probe and its entry.
    assert_eq!(
        request(node.app, "DELETE", "/admin/drivers/plc-1", "")
            .unwrap()
            .status,
        204
    );
    let ready = node.until_status("/health/ready", 200, PATIENCE);
    assert_eq!(entry_names(&ready), ["database", "cluster", "transport"]);
    let gone = request(node.app, "DELETE", "/admin/drivers/plc-1", "").unwrap();
    assert_eq!(gone.status, 404);
}

#[test]
fn an_unreachable_driver_never_gates_ready_but_the_database_still_does() {
    let node = start_ready(launch());
    // A device endpoint nothing listens on: bound, then closed.
    let endpoint = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let config = format!(r#"{{"endpoint":"{endpoint}"}}"#);
    assert_eq!(node.post("/admin/drivers/plc-down", &config).status, 201);
    let ready = node.get("/health/ready");
    assert_eq!(ready.status, 200, "{}", ready.text());
    assert_canonical(&ready);
    assert_eq!(
        ready.entry_status("driver-plc-down").as_deref(),
        Some("Degraded")
    );

    // What OtOpcUa cannot serve without still gates it: the database.
    let mut side = SideConnection::open(&node);
    side.run("DROP TABLE deployments");
    let ready = until_ready(&node, "ready 503", |r| r.status == 503);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Unhealthy"));
    assert_eq!(
        ready.entry_status("driver-plc-down").as_deref(),
        Some("Degraded")
    );
    side.run(otopcua::SCHEMA);
    let ready = until_ready(&node, "ready 200 with the table back", |r| r.status == 200);
    assert_eq!(
        ready.entry_status("driver-plc-down").as_deref(),
        Some("Degraded")
    );
}

#[test]
fn a_driver_probe_is_held_to_the_same_rules_as_the_manifest() {
    let node = start_ready(launch());
    let config = r#"{"endpoint":"127.0.0.1:9"}"#;
    // R9: a probe name is at most 64 letters, digits, `-`, `_`, `.`.
    let bad = node.post("/admin/drivers/plc%20one", config);
    assert_eq!(bad.status, 400);
    assert!(
        bad.json()["error"].as_str().unwrap().contains("R9"),
        "{}",
        bad.text()
    );
    let long = format!("/admin/drivers/{}", "p".repeat(60));
    assert_eq!(node.post(&long, config).status, 400);
    // R3: one name once.
    assert_eq!(node.post("/admin/drivers/plc-2", config).status, 201);
    assert_eq!(node.post("/admin/drivers/plc-2", config).status, 409);
    assert_eq!(
        node.get("/admin/drivers").json()["drivers"],
        serde_json::json!(["plc-2"])
    );
}

/// Runs `sql` on a connection of its own to the node's SQLite file and
/// keeps the connection (and so any lock it took) until dropped.
struct SideConnection {
    runtime: tokio::runtime::Runtime,
    conn: SqliteConnection,
}

impl SideConnection {
    fn open(node: &ServiceProcess) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let url = format!("sqlite://{}", node.data_dir.join("otopcua.db").display());
        let conn = runtime.block_on(SqliteConnection::connect(&url)).unwrap();
        Self { runtime, conn }
    }

    fn run(&mut self, sql: &'static str) {
        let Self { runtime, conn } = self;
        runtime.block_on(conn.execute(sql)).unwrap();
    }
}

#[test]
fn the_sqlite_file_locked_or_its_table_gone_fails_ready_and_comes_back() {
    let node = start_ready(launch());
    let mut side = SideConnection::open(&node);

    // Another process holds the file's exclusive lock: the probe's query
    // cannot read it within its 100 ms lock wait ("database is locked").
    side.run("BEGIN EXCLUSIVE");
    let ready = until_ready(&node, "ready 503", |r| r.status == 503);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Unhealthy"));
    assert_eq!(ready.entry_status("cluster").as_deref(), Some("Healthy"));
    assert_eq!(node.get("/healthz").status, 200, "live is not the database");
    side.run("ROLLBACK");
    until_ready(&node, "ready 200 after the lock", |r| r.status == 200);

    // The table the service needs is gone: the default would still pass, the
    // `deployments` query does not.
    side.run("DROP TABLE deployments");
    let ready = until_ready(&node, "ready 503", |r| r.status == 503);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Unhealthy"));
    assert_eq!(
        ready.json()["entries"]["database"]["description"],
        "check failed"
    );
    side.run(otopcua::SCHEMA);
    until_ready(&node, "ready 200 with the table back", |r| r.status == 200);
}

#[test]
fn postgresql_stopped_fails_ready_and_started_again_recovers() {
    let pg = Postgres::start();
    let node = start_ready(launch().env("DATABASE_URL", pg.url()));
    assert!(
        node.output().contains("postgres://zb:***@"),
        "the URL is printed redacted"
    );
    // A deployment written through the service, read back after the
    // outage: the insert works on PostgreSQL, and a committed row survives
    // the server's crash-stop.
    let created = node.post("/deployments", r#"{"name":"line-1"}"#);
    assert_eq!(created.status, 201, "{}", created.text());

    pg.stop();
    let ready = until_ready(&node, "ready 503", |r| r.status == 503);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Unhealthy"));
    assert!(!ready.text().contains(PASSWORD), "{}", ready.text());
    let live = node.get("/healthz");
    assert_eq!(live.status, 200, "live is not the database");

    pg.start_again();
    let ready = until_ready(&node, "ready 200", |r| r.status == 200);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Healthy"));
    assert_eq!(
        node.get("/deployments").json()["deployments"],
        serde_json::json!(["line-1"])
    );
}

#[test]
fn sigterm_drains_ready_503_live_200_then_exits_0() {
    // A drain longer than the test needs; the second signal ends it.
    let mut node =
        start_ready(launch().env("DRAIN_DELAY_MS", zb_health_testkit::LONG_DRAIN_DELAY_MS));
    node.sigterm();
    let ready = until_ready(&node, "ready 503", |r| r.status == 503);
    assert_eq!(entry_names(&ready)[0], "shutdown");
    assert_eq!(node.get("/health/active").status, 503);
    let live = node.get("/healthz");
    assert_eq!(live.status, 200);
    assert_canonical(&live);
    node.sigterm();
    let status = node.wait_exit(PATIENCE);
    assert!(status.success(), "exit status {status}");
}

/// `MEMBERSHIP_POLICY` selects `health.compat.yaml`: the same probes, and a
/// node that is Up answers alike under both policies.
#[test]
fn the_compat_manifest_runs_too() {
    let node = start_ready(launch().env("MEMBERSHIP_POLICY", "ot-opc-ua-compat"));
    let ready = until_ready(&node, "the node Up", |r| {
        r.json()["entries"]["cluster"]["description"] == "Member status: Up"
    });
    assert_eq!(ready.entry_status("cluster").as_deref(), Some("Healthy"));
}

#[test]
fn an_unknown_policy_stops_the_start() {
    let mut node = launch().env("MEMBERSHIP_POLICY", "compat").start();
    let status = node.wait_exit(PATIENCE);
    assert!(!status.success());
    assert!(
        node.output().contains("MEMBERSHIP_POLICY"),
        "{}",
        node.output()
    );
}

/// The manifest's `grpc` section over a real tonic client: `""` (ready) and
/// `otopcua.v1.Deployments` (the role-scoped active tier) serve on the warm
/// node, an unmapped name is `NOT_FOUND`, and the drain turns both
/// `NOT_SERVING` at once.
#[test]
fn grpc_health_serves_the_manifests_services_and_the_drain_stops_them() {
    let mut node =
        start_ready(launch().env("DRAIN_DELAY_MS", zb_health_testkit::LONG_DRAIN_DELAY_MS));
    let port = node.grpc_port;
    for service in ["", "otopcua.v1.Deployments"] {
        assert_eq!(
            grpc_check(port, service),
            Ok(ServingStatus::Serving),
            "{service:?}"
        );
    }
    assert_eq!(
        grpc_check(port, "otopcua.v1.Drivers"),
        Err(GrpcCode::NotFound)
    );
    node.sigterm();
    eventually("grpc NOT_SERVING while draining", PATIENCE, || {
        (grpc_check(port, "") == Ok(ServingStatus::NotServing)).then_some(())
    });
    assert_eq!(
        grpc_check(port, "otopcua.v1.Deployments"),
        Ok(ServingStatus::NotServing)
    );
    node.sigterm();
    assert!(node.wait_exit(PATIENCE).success());
}

/// `HOST` binds every port (`spec/lifecycle.md`, Kubernetes): `0.0.0.0`
/// serves a pod, the default stays on loopback.
#[test]
fn host_binds_the_application_management_and_grpc_ports() {
    zb_health_testkit::assert_host_binds_every_port(env!("CARGO_BIN_EXE_otopcua"));
}
