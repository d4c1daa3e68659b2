//! scadabridge as `cargo run -p scadabridge` starts it (ZB §7): the real
//! binary as a child process, a real SQLite file, a single-node chitchat
//! cluster, everything over real sockets on 127.0.0.1.

mod common;

use common::{DEADLINE, SqliteLock, launch, start_warm, write_tag};
use zb_health_testkit::{assert_canonical, free_port, request};

/// (a), (b), (c), (f): all three canonical endpoints answer 200 on both
/// HTTP ports with the manifest's entries: the database, the membership
/// (Default policy: `Up` is Healthy), the optional PLC link, the active
/// node naming this node (on the management port: the application port
/// does not show cluster addresses), and the poller's watchdog.
#[test]
fn a_single_node_answers_all_three_tiers_with_canonical_bodies_on_both_ports() {
    let node = start_warm(&launch());
    for addr in [node.app, node.management] {
        let get = |path: &str| request(addr, "GET", path, "").unwrap();
        let ready = get("/health/ready");
        assert_canonical(&ready);
        let body = ready.json();
        let names: Vec<&str> = body["entries"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(names, ["database", "cluster-membership", "plc-link"]);
        assert_eq!(body["entries"]["database"]["status"], "Healthy");
        assert_eq!(
            body["entries"]["database"]["description"],
            "database reachable"
        );
        assert_eq!(body["entries"]["cluster-membership"]["status"], "Healthy");
        assert_eq!(body["entries"]["plc-link"]["status"], "Healthy");

        let active = get("/health/active");
        assert_canonical(&active);
        let entry = &active.json()["entries"]["active-node"];
        assert_eq!(entry["status"], "Healthy", "{entry}");
        // The cluster addresses are on the management port only.
        if addr == node.management {
            assert_eq!(entry["data"]["selfAddress"], node.gossip.as_str());
            assert_eq!(entry["data"]["activeNode"], node.gossip.as_str());
        } else {
            assert!(!active.text().contains(node.gossip.as_str()), "{entry}");
        }

        let live = get("/healthz");
        assert_canonical(&live);
        assert_eq!(live.json()["entries"]["plc-poller"]["status"], "Healthy");
    }
    // A healthy start is quiet: what ran before the warm-up gate opened
    // (the gRPC Watch schedule, before the schema exists) is no failure.
    let log = node.output();
    assert!(!log.contains("health probe failing"), "{log}");
    assert!(!log.contains("health probe recovered"), "{log}");
}

/// (e) on the active node: the gated write succeeds and lands in the
/// SQLite file; the open read returns it.
#[test]
fn the_active_node_takes_writes_and_reads_them_back() {
    let node = start_warm(&launch());
    let written = write_tag(&node, "line-1.speed", 42);
    assert_eq!(written.status, 200, "{}", written.text());
    let read = node.get("/api/tags/line-1.speed");
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["value"], 42);
    assert_eq!(node.get("/api/tags").json().as_array().unwrap().len(), 1);
    assert_eq!(node.get("/api/tags/none").status, 404);
}

/// (c) the database going away and coming back, for SQLite: another
/// connection holds the file's exclusive lock, so the probe's read of the
/// `tags` table cannot proceed (it fails after the probe's 100 ms lock
/// wait, "database is locked"). `ready` answers 503 with the `database` entry Unhealthy while
/// `live` stays 200; once the lock is released, `ready` is 200 again.
#[test]
fn a_locked_sqlite_file_fails_ready_not_live_and_recovers() {
    let node = start_warm(&launch());
    let lock = SqliteLock::hold(&node);

    let ready = node.until_status("/health/ready", 503, DEADLINE);
    assert_canonical(&ready);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Unhealthy"));
    assert_eq!(
        ready.entry_status("cluster-membership").as_deref(),
        Some("Healthy")
    );
    let live = node.get("/healthz");
    assert_eq!(live.status, 200);
    assert_canonical(&live);

    lock.release();
    let ready = node.until_status("/health/ready", 200, DEADLINE);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Healthy"));
}

/// The startup gate `warm-up` holds until the schema is in place: with the
/// database unreachable from the start (nothing listens on its port),
/// ready and active answer 503 "starting" while live answers 200.
#[test]
fn an_unreachable_database_at_start_holds_ready_at_starting_and_live_at_200() {
    let url = format!("postgres://zb:pw@127.0.0.1:{}/zb", free_port());
    let mut node = launch().env("DATABASE_URL", url).start();
    node.wait_listening();
    for path in ["/health/ready", "/health/active"] {
        let answer = node.get(path);
        assert_canonical(&answer);
        assert_eq!(answer.status, 503, "{path}");
        assert_eq!(
            answer.json()["entries"]["startup"]["description"],
            "starting"
        );
    }
    let live = node.get("/healthz");
    assert_eq!(live.status, 200);
    assert_canonical(&live);
    // The bridge is not a candidate for the active role: its writes are refused.
    assert_eq!(write_tag(&node, "t", 1).status, 503);
}

/// The watchdog `plc-poller`: the polling loop's stall turns `/healthz`
/// 503 naming it, ready stays 200, and resuming brings live back.
#[test]
fn a_stalled_poller_fails_live_and_resuming_recovers_it() {
    let node = start_warm(&launch());
    assert_eq!(node.post("/admin/poller/stall", "").status, 204);
    let live = node.until_status("/healthz", 503, DEADLINE);
    assert_canonical(&live);
    assert_eq!(
        live.json()["entries"]["plc-poller"]["description"],
        "no heartbeat within 3000 ms"
    );
    assert_eq!(node.get("/health/ready").status, 200);
    assert_eq!(node.post("/admin/poller/resume", "").status, 204);
    node.until_status("/healthz", 200, DEADLINE);
}

/// The optional PLC link: down, it is Degraded in the body while ready
/// stays 200 (BE-HLTH-003), and `/metrics` shows it in Prometheus text
/// without the error's text, on both ports, and `promtool check metrics`
/// finds nothing to say about either scrape.
#[test]
fn a_lost_plc_link_degrades_ready_and_shows_in_the_metrics() {
    let node = start_warm(&launch());
    assert_eq!(node.post("/admin/plc/disconnect", "").status, 204);
    let ready = node.get("/health/ready");
    assert_canonical(&ready);
    assert_eq!(ready.status, 200);
    assert_eq!(ready.json()["status"], "Degraded");
    assert_eq!(ready.entry_status("plc-link").as_deref(), Some("Degraded"));
    assert_eq!(
        ready.json()["entries"]["plc-link"]["description"],
        "check failed"
    );

    node.until_status("/health/active", 200, DEADLINE);
    for scrape in [node.get("/metrics"), node.get_management("/metrics")] {
        assert_eq!(scrape.status, 200);
        let text = scrape.text();
        for line in [
            "zb_health_tier_status{tier=\"ready\"} 1",
            "zb_health_probe_status{probe=\"plc-link\"} 1",
            "zb_health_probe_status{probe=\"database\"} 2",
            "zb_health_probe_failures_total{probe=\"plc-link\"} 1",
            "# TYPE zb_health_probe_duration_seconds histogram",
            // The cluster-wide questions' gauges (a cluster of one, which
            // the active tier's runs found active).
            "zb_health_cluster_members_up 1",
            "zb_health_cluster_active 1",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "no line `{line}` in\n{text}"
            );
        }
        assert!(!text.contains("10.20.0.7"), "{text}");
        // Prometheus' own lint of the format and its naming conventions.
        if let Err(said) = zb_health_testkit::promtool::check_metrics(&text) {
            panic!("promtool check metrics:\n{said}\non\n{text}");
        }
    }
    assert!(!ready.text().contains("10.20.0.7"));
    assert_eq!(node.post("/admin/plc/connect", "").status, 204);
    assert_eq!(node.get("/health/ready").json()["status"], "Healthy");
}

/// `HOST` binds every port (`spec/lifecycle.md`, Kubernetes): `0.0.0.0`
/// serves a pod, the default stays on loopback.
#[test]
fn host_binds_the_application_management_and_grpc_ports() {
    zb_health_testkit::assert_host_binds_every_port(env!("CARGO_BIN_EXE_scadabridge"));
}

/// A `HEALTH_WEBHOOK_URL` the transition webhook cannot use stops the
/// start, naming the variable (`spec/observability.md`, transition
/// publishers); a manifest's install reads it.
#[test]
fn a_bad_webhook_url_is_refused_at_start_naming_the_variable() {
    for bad in ["https://hooks.example/x", "ftp://hooks"] {
        let mut node = launch().env("HEALTH_WEBHOOK_URL", bad).start();
        let status = node.wait_exit(DEADLINE);
        assert!(!status.success(), "{bad}: exit status {status}");
        let output = node.output();
        assert!(output.contains("HEALTH_WEBHOOK_URL="), "{output}");
        assert!(output.contains(bad), "{output}");
    }
}

/// ZB-2.3a, AT-5: a `CLUSTER_EXPECTED_SIZE` that is no cluster size stops
/// the start, naming the variable and the fix; it is never applied.
#[test]
fn a_bad_expected_size_is_refused_at_start_naming_the_variable() {
    for bad in ["0", "five"] {
        let mut node = launch().env("CLUSTER_EXPECTED_SIZE", bad).start();
        let status = node.wait_exit(DEADLINE);
        assert!(!status.success(), "{bad}: exit status {status}");
        let output = node.output();
        assert!(output.contains("CLUSTER_EXPECTED_SIZE="), "{output}");
        assert!(output.contains(bad), "{output}");
    }
}
