//! Each tier's answer in each lifecycle state, over a real socket: the
//! startup gate (BE-HLTH-004) starting, failed and ready; the liveness
//! watchdog (BE-HLTH-002) healthy, stalled and recovered; the drain
//! (BE-HLTH-005). Every body is checked against the canonical schema.
//! The real-signal drain is `drain.rs`.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::{Wire, assert_canonical, fixed, request, serve};
use zb_health::cluster::{ClusterMembershipProbe, InMemoryClusterView};
use zb_health::prelude::{
    HealthRegistry, HealthStatus, ProbeRegistration, TagSet, ZbHealth, map_zb_health,
};
use zb_health::spec::{SHUTDOWN_ENTRY, STARTUP_ENTRY};
use zb_health::writer::write_json;

// The lifecycle entries' words, as `spec/lifecycle.md` gives them: the
// body's contract, so a change of wording fails here.
const STARTING_DESCRIPTION: &str = "starting";
const STARTUP_FAILED_DESCRIPTION: &str = "startup failed";
const DRAINING_DESCRIPTION: &str = "draining";

/// A ready-tier database probe and an active-tier primary probe, both
/// healthy.
fn registry() -> HealthRegistry {
    let registry = HealthRegistry::new();
    registry
        .add(fixed("database", HealthStatus::Healthy))
        .unwrap();
    registry
        .add(fixed("primary", HealthStatus::Healthy).tags(TagSet::ACTIVE))
        .unwrap();
    registry
}

/// Status and canonical body of one GET.
async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, Value) {
    let wire: Wire = request(addr, "GET", path).await;
    let body = wire.json();
    assert_canonical(&body);
    (wire.status, body)
}

fn entry_names(body: &Value) -> Vec<&str> {
    body["entries"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[actix_web::test]
async fn a_pending_gate_holds_ready_and_active_at_503_with_the_startup_entry_first() {
    let registry = registry();
    let gate = registry.lifecycle().startup_gate();
    let server = serve(map_zb_health(registry.clone()));

    for (path, probe) in [("/health/ready", "database"), ("/health/active", "primary")] {
        let (status, body) = get(server.addr, path).await;
        assert_eq!(status, 503, "{path}");
        assert_eq!(body["status"], "Unhealthy");
        assert_eq!(entry_names(&body), [STARTUP_ENTRY, probe], "{path}");
        assert_eq!(
            body["entries"][STARTUP_ENTRY],
            json!({"status": "Unhealthy", "description": STARTING_DESCRIPTION, "durationMs": 0.0})
        );
    }
    let (status, body) = get(server.addr, "/healthz").await;
    assert_eq!((status, entry_names(&body).len()), (200, 0));

    gate.ready();
    for (path, probe) in [("/health/ready", "database"), ("/health/active", "primary")] {
        let (status, body) = get(server.addr, path).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(entry_names(&body), [probe], "{path}: the entry is gone");
    }
}

#[actix_web::test]
async fn a_failed_start_stays_503_with_a_fixed_description_and_no_error_text() {
    let registry = registry();
    let server = serve(map_zb_health(registry.clone()));
    registry
        .lifecycle()
        .startup_gate()
        .failed("migration 42 failed: password=hunter2");
    for path in ["/health/ready", "/health/active"] {
        let wire = request(server.addr, "GET", path).await;
        assert_eq!(wire.status, 503, "{path}");
        let text = String::from_utf8(wire.body.clone()).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        let body = wire.json();
        assert_canonical(&body);
        assert_eq!(entry_names(&body)[0], STARTUP_ENTRY);
        assert_eq!(
            body["entries"][STARTUP_ENTRY]["description"],
            STARTUP_FAILED_DESCRIPTION
        );
    }
    assert_eq!(get(server.addr, "/healthz").await.0, 200);
}

#[actix_web::test]
async fn the_cluster_probes_startup_degraded_does_not_make_a_gated_service_look_ready() {
    // No cluster view yet: the membership probe answers Degraded (a 200 on
    // its own, ZB-2.2's startup safety).
    let registry = HealthRegistry::new();
    let view = Arc::new(InMemoryClusterView::default());
    registry
        .add(ProbeRegistration::new(
            "cluster",
            ClusterMembershipProbe::new(view),
        ))
        .unwrap();
    let server = serve(map_zb_health(registry.clone()));
    let (status, body) = get(server.addr, "/health/ready").await;
    assert_eq!(
        (status, &body["entries"]["cluster"]["status"]),
        (200, &json!("Degraded")),
        "without a gate the booting node stays in rotation"
    );

    let gate = registry.lifecycle().startup_gate();
    let (status, body) = get(server.addr, "/health/ready").await;
    assert_eq!(status, 503, "with a declared gate it does not look ready");
    assert_eq!(entry_names(&body), [STARTUP_ENTRY, "cluster"]);
    assert_eq!(body["entries"]["cluster"]["status"], "Degraded");
    gate.ready();
    assert_eq!(get(server.addr, "/health/ready").await.0, 200);
}

#[actix_web::test]
async fn a_drain_turns_ready_and_active_503_with_the_shutdown_entry_first_and_live_stays_200() {
    let registry = registry();
    let server = serve(map_zb_health(registry.clone()));
    assert_eq!(get(server.addr, "/health/ready").await.0, 200);
    assert!(registry.lifecycle().begin_drain());
    for (path, probe) in [("/health/ready", "database"), ("/health/active", "primary")] {
        let (status, body) = get(server.addr, path).await;
        assert_eq!(status, 503, "{path}");
        assert_eq!(entry_names(&body), [SHUTDOWN_ENTRY, probe], "{path}");
        assert_eq!(
            body["entries"][SHUTDOWN_ENTRY]["description"],
            DRAINING_DESCRIPTION
        );
    }
    assert_eq!(get(server.addr, "/healthz").await.0, 200);
}

/// Polls `/healthz` until it answers `status`; returns the body.
async fn live_until(addr: std::net::SocketAddr, status: u16) -> Value {
    let body = support::until_status(addr, "/healthz", status).await.json();
    assert_canonical(&body);
    body
}

#[actix_web::test]
async fn a_stalled_loop_makes_live_503_and_names_it_and_its_next_beats_recover_it() {
    let registry = registry();
    let server = serve(map_zb_health(registry.clone()));
    let consumer = Arc::new(
        registry
            .lifecycle()
            .watchdog("consumer", Duration::from_millis(100))
            .unwrap(),
    );
    let _scheduler = registry
        .lifecycle()
        .watchdog("scheduler", Duration::from_secs(3600))
        .unwrap();

    // The consumer beats once (its deadline runs from then) and no more:
    // live turns 503 and names it.
    consumer.beat();
    let body = live_until(server.addr, 503).await;
    assert_eq!(body["status"], "Unhealthy");
    assert_eq!(
        body["entries"],
        json!({
            "consumer": {"status": "Unhealthy", "description": "no heartbeat within 100 ms", "durationMs": 0.0},
            "scheduler": {"status": "Healthy", "description": null, "durationMs": 0.0},
        })
    );
    // Readiness is not liveness: the stall does not touch ready.
    assert_eq!(get(server.addr, "/health/ready").await.0, 200);

    // The loop resumes: live returns to 200.
    let running = Arc::new(AtomicBool::new(true));
    let beating = {
        let (consumer, running) = (consumer.clone(), running.clone());
        tokio::spawn(async move {
            while running.load(Ordering::Relaxed) {
                consumer.beat();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let body = live_until(server.addr, 200).await;
    assert_eq!(body["status"], "Healthy");
    assert_eq!(entry_names(&body), ["consumer", "scheduler"]);

    // It stalls again.
    running.store(false, Ordering::Relaxed);
    beating.await.unwrap();
    live_until(server.addr, 503).await;
}

#[actix_web::test]
async fn retiring_every_heartbeat_restores_the_fixed_live_body() {
    let registry = registry();
    let server = serve(map_zb_health(registry.clone()));
    let before = request(server.addr, "GET", "/healthz").await.body;
    let heartbeat = registry
        .lifecycle()
        .watchdog("consumer", Duration::from_millis(1))
        .unwrap();
    heartbeat.beat();
    live_until(server.addr, 503).await;
    heartbeat.retire();
    let after = request(server.addr, "GET", "/healthz").await;
    assert_eq!(after.status, 200);
    assert_eq!(after.body, before);
    assert_eq!(
        after.body,
        br#"{"status":"Healthy","totalDurationMs":0,"entries":{}}"#
    );
}

#[actix_web::test]
async fn a_loop_that_dies_with_its_heartbeat_keeps_live_503_naming_it() {
    let registry = registry();
    let server = serve(map_zb_health(registry.clone()));
    let heartbeat = registry
        .lifecycle()
        .watchdog("consumer", Duration::from_secs(3600))
        .unwrap();
    // The loop owns its heartbeat and panics: the heartbeat is dropped
    // with the task, long before the deadline.
    let task = tokio::spawn(async move {
        heartbeat.beat();
        panic!("consumer bug");
    });
    assert!(task.await.unwrap_err().is_panic());
    let body = live_until(server.addr, 503).await;
    assert_eq!(
        body["entries"]["consumer"]["description"],
        "loop ended: its heartbeat was dropped without retire()"
    );
    // For good: nothing will beat again.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(request(server.addr, "GET", "/healthz").await.status, 503);
}

#[actix_web::test]
async fn a_custom_writer_gets_the_stalled_report_with_a_503() {
    let registry = registry();
    let endpoints = ZbHealth::new(registry.clone())
        .writer(|report: &zb_health::report::HealthReport, response| write_json(report, response))
        .build()
        .unwrap();
    let server = serve(endpoints);
    let heartbeat = registry
        .lifecycle()
        .watchdog("consumer", Duration::from_millis(1))
        .unwrap();
    heartbeat.beat();
    let body = live_until(server.addr, 503).await;
    assert_eq!(entry_names(&body), ["consumer"]);
}

// The same lifecycle, declared in a manifest: typed handles for the gates
// and watchdogs it names, and its drain checked against the grace period.

/// A ready-tier probe for the manifest below.
#[zb_health::prelude::zb_health(name = "cache", tags = [ready], timeout = "200ms")]
struct CacheProbe;

impl zb_health::prelude::Probe for CacheProbe {
    async fn check(&self) -> zb_health::prelude::ProbeOutcome {
        Ok(zb_health::prelude::ProbeResult::healthy())
    }
}

zb_health::prelude::manifest!(
    Plant,
    yaml = r#"
service: lifecycle-test
orchestrator: { timeout: 1s, termination_grace_period: 30s }
lifecycle:
  startup_gates: [migrations, warm-cache]
  watchdogs:
    - { name: consumer, deadline: 100ms }
    - { name: scheduler, deadline: 60m }
  drain_delay: 4s
probes:
  - { kind: custom, type: crate::CacheProbe }
"#
);

/// The manifest installed into a registry of its own, served.
fn plant() -> (HealthRegistry, PlantInstalled, support::Server) {
    let registry = HealthRegistry::new();
    let installed = Plant::install_into(
        &registry,
        PlantDeps {
            cache_probe: CacheProbe,
        },
    )
    .unwrap();
    let server = serve(installed.server.endpoints().clone());
    (registry, installed, server)
}

#[actix_web::test]
async fn the_manifest_gates_hold_ready_and_active_until_every_one_is_ready() {
    let (_registry, installed, server) = plant();
    let PlantStartup {
        migrations,
        warm_cache,
    } = installed.startup;

    for path in ["/health/ready", "/health/active"] {
        let (status, body) = get(server.addr, path).await;
        assert_eq!(status, 503, "{path}");
        assert_eq!(entry_names(&body)[0], STARTUP_ENTRY, "{path}");
    }
    migrations.ready();
    let (status, body) = get(server.addr, "/health/ready").await;
    assert_eq!(
        (status, entry_names(&body)),
        (503, vec![STARTUP_ENTRY, "cache"])
    );
    warm_cache.ready();
    let (status, body) = get(server.addr, "/health/ready").await;
    assert_eq!((status, entry_names(&body)), (200, vec!["cache"]));
    assert_eq!(get(server.addr, "/health/active").await.0, 200);
}

#[actix_web::test]
async fn the_startup_path_names_the_manifest_gates_it_waits_for_and_the_one_that_failed() {
    let (_registry, installed, server) = plant();
    let PlantStartup {
        migrations,
        warm_cache,
    } = installed.startup;
    assert_eq!(migrations.name(), Some("migrations"));
    let startup = |body: &Value| body["entries"][STARTUP_ENTRY].clone();
    let (status, body) = get(server.addr, "/health/started").await;
    assert_eq!(status, 503);
    assert_eq!(
        startup(&body)["data"],
        json!({"pending": ["migrations", "warm-cache"]})
    );
    migrations.ready();
    let (_, body) = get(server.addr, "/health/started").await;
    assert_eq!(startup(&body)["data"], json!({"pending": ["warm-cache"]}));
    warm_cache.failed("the cache server refused us");
    let (status, body) = get(server.addr, "/health/started").await;
    assert_eq!(status, 503);
    assert_eq!(
        startup(&body),
        json!({
            "status": "Unhealthy",
            "description": STARTUP_FAILED_DESCRIPTION,
            "durationMs": 0.0,
            "data": {"failed": ["warm-cache"]},
        })
    );
    // The error text went to the log only.
    assert!(!body.to_string().contains("refused"), "{body}");
}

#[actix_web::test]
async fn the_manifest_watchdogs_are_typed_heartbeats_that_live_names_when_stalled() {
    let (registry, installed, server) = plant();
    let PlantWatchdogs {
        consumer,
        scheduler,
    } = installed.watchdogs;
    assert_eq!(
        (consumer.name(), consumer.deadline()),
        ("consumer", Duration::from_millis(100))
    );
    assert_eq!(scheduler.deadline(), Duration::from_secs(3600));
    assert_eq!(
        &*registry.lifecycle().watchdog_names(),
        [Arc::from("consumer"), Arc::from("scheduler")]
    );

    // The consumer's deadline runs from its first beat.
    consumer.beat();
    let body = live_until(server.addr, 503).await;
    assert_eq!(
        body["entries"]["consumer"],
        json!({"status": "Unhealthy", "description": "no heartbeat within 100 ms", "durationMs": 0.0})
    );
    assert_eq!(body["entries"]["scheduler"]["status"], "Healthy");

    // The consumer's handle is the one live watches: retiring it (the loop
    // ended on purpose) takes its entry away.
    consumer.retire();
    let body = live_until(server.addr, 200).await;
    assert_eq!(entry_names(&body), ["scheduler"]);
    for gate in [installed.startup.migrations, installed.startup.warm_cache] {
        gate.ready();
    }
}

#[test]
fn the_manifest_drain_is_fitted_to_its_grace_period() {
    assert_eq!(
        Plant::TERMINATION_GRACE_PERIOD,
        Some(Duration::from_secs(30))
    );
    assert_eq!(Plant::DRAIN.delay(), Duration::from_secs(4));
    // No `shutdown_timeout` stated: in-flight requests get the rest.
    assert_eq!(Plant::DRAIN.graceful_timeout(), Duration::from_secs(26));
    let same = zb_health::lifecycle::Drain::new(Duration::from_secs(4))
        .within_grace_period(Duration::from_secs(30))
        .unwrap();
    assert_eq!(same.graceful_timeout(), Plant::DRAIN.graceful_timeout());
    // The grace period travels with the drain, so an override
    // (`DRAIN_DELAY_MS`) is held to it, with the stop recomputed.
    assert_eq!(Plant::DRAIN.grace_period(), Some(Duration::from_secs(30)));
    let longer = Plant::DRAIN.with_delay(Duration::from_secs(20)).unwrap();
    assert_eq!(longer.graceful_timeout(), Duration::from_secs(10));
    let e = Plant::DRAIN
        .with_delay(Duration::from_secs(30))
        .unwrap_err();
    assert_eq!(e.rules(), [zb_health::spec::Rule::DrainFitsGrace]);
}

#[test]
fn a_failed_install_leaves_no_watchdog_and_declares_no_gate() {
    let registry = HealthRegistry::new();
    // A probe of the manifest's name is already there: the install fails
    // (R3) after its watchdogs were registered.
    registry
        .add(fixed("cache", HealthStatus::Healthy).timeout(Duration::from_millis(200)))
        .unwrap();
    let Err(error) = Plant::install_into(
        &registry,
        PlantDeps {
            cache_probe: CacheProbe,
        },
    ) else {
        panic!("the second `cache` must be refused");
    };
    assert_eq!(error.rules(), [zb_health::spec::Rule::DuplicateName]);
    assert!(registry.lifecycle().watchdog_names().is_empty());
    assert!(
        registry.lifecycle().is_started(),
        "no gate was left pending or failed"
    );
}

// The startup path: what a kubelet `startupProbe` reads. Only the gates
// and the watchdogs' first beats, never a dependency.

/// The `startup` entry, Unhealthy with `description`.
fn startup_entry(description: &str) -> (String, String, Value) {
    (STARTUP_ENTRY.into(), "Unhealthy".into(), json!(description))
}

/// The startup path's entries as (name, status, description).
fn started_entries(body: &Value) -> Vec<(String, String, Value)> {
    body["entries"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, e)| {
            (
                name.clone(),
                e["status"].as_str().unwrap().to_owned(),
                e["description"].clone(),
            )
        })
        .collect()
}

#[actix_web::test]
async fn a_loop_behind_a_long_gate_keeps_live_200_and_started_503_until_its_first_beat() {
    let registry = registry();
    let gate = registry.lifecycle().startup_gate();
    let poller = Arc::new(
        registry
            .lifecycle()
            .watchdog("poller", Duration::from_millis(20))
            .unwrap(),
    );
    let server = serve(map_zb_health(registry.clone()));

    let (status, body) = get(server.addr, "/health/started").await;
    assert_eq!(status, 503);
    assert_eq!(
        started_entries(&body),
        [
            startup_entry(STARTING_DESCRIPTION),
            (
                "poller".into(),
                "Unhealthy".into(),
                json!("waiting for the first heartbeat")
            ),
        ]
    );
    // The gate takes many times the loop's deadline: the loop has not
    // started, so live is never 503 for it, at any of these answers.
    for _ in 0..10 {
        let (status, body) = get(server.addr, "/healthz").await;
        assert_eq!((status, body["status"].clone()), (200, json!("Healthy")));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    gate.ready();
    // Ready serves (its probes are healthy); started still waits for the loop.
    assert_eq!(get(server.addr, "/health/ready").await.0, 200);
    let (status, body) = get(server.addr, "/health/started").await;
    assert_eq!(status, 503);
    assert_eq!(entry_names(&body), ["poller"]);

    // The loop starts: started turns 200, and from now on its deadline runs.
    let running = Arc::new(AtomicBool::new(true));
    let beating = {
        let (poller, running) = (poller.clone(), running.clone());
        tokio::spawn(async move {
            while running.load(Ordering::Relaxed) {
                poller.beat();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let body = support::until_status(server.addr, "/health/started", 200)
        .await
        .json();
    assert_canonical(&body);
    assert_eq!(
        started_entries(&body),
        [("poller".into(), "Healthy".into(), Value::Null)]
    );
    running.store(false, Ordering::Relaxed);
    beating.await.unwrap();
    live_until(server.addr, 503).await;
}

#[actix_web::test]
async fn started_never_reads_a_dependency_and_a_failed_gate_holds_it_at_503() {
    let registry = HealthRegistry::new();
    registry
        .add(fixed("database", HealthStatus::Unhealthy))
        .unwrap();
    let server = serve(map_zb_health(registry.clone()));
    // The database is down: ready is 503, and started is 200 with no entry.
    assert_eq!(get(server.addr, "/health/ready").await.0, 503);
    let (status, body) = get(server.addr, "/health/started").await;
    assert_eq!((status, entry_names(&body).len()), (200, 0));
    assert_eq!(
        request(server.addr, "HEAD", "/health/started").await.status,
        200
    );
    assert_eq!(
        request(server.addr, "POST", "/health/started").await.status,
        405
    );

    registry
        .lifecycle()
        .startup_gate()
        .failed("migration 7 broke");
    let (status, body) = get(server.addr, "/health/started").await;
    assert_eq!(status, 503);
    assert_eq!(
        started_entries(&body),
        [startup_entry(STARTUP_FAILED_DESCRIPTION)]
    );
}

#[actix_web::test]
async fn the_startup_path_is_served_on_the_application_and_the_management_port() {
    let registry = HealthRegistry::new();
    let gate = registry.lifecycle().startup_gate();
    let endpoints = ZbHealth::new(registry.clone())
        .started_path("/boot")
        .build()
        .unwrap();
    let (app, management, running) =
        support::serve_both_ports(zb_health::server::ZbHealthServer::new(
            registry.clone(),
            endpoints,
            zb_health::lifecycle::Drain::new(Duration::from_millis(10)),
        ));
    let ports = [app, management];
    for addr in ports {
        assert_eq!(get(addr, "/boot").await.0, 503, "{addr}");
        assert_eq!(request(addr, "GET", "/health/started").await.status, 404);
    }
    gate.ready();
    for addr in ports {
        assert_eq!(get(addr, "/boot").await.0, 200, "{addr}");
    }
    running.abort();
}
