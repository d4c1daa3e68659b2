//! The history (`spec/history.md`) over real sockets on 127.0.0.1 and
//! through actix's test service: `/health/history` validates against
//! `spec/health-history.schema.json`, counts transitions and flaps, keeps
//! its rings bounded, never runs a probe, follows the disclosure level and
//! the token, shows the lifecycle and the cluster; `/health/ui` serves the
//! embedded page; both are 404 and nothing is recorded when off.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use actix_web::App;
use actix_web::test::{TestRequest, call_service, init_service, read_body};
use serde_json::Value;
use support::{request, serve};
use zb_health::cluster::{ClusterState, InMemoryClusterView, Member, MemberStatus};
use zb_health::prelude::{
    HealthRegistry, ProbeError, ProbeRegistration, ProbeResult, Tag, ZbHealth, from_fn,
};
use zb_health::spec::Disclosure;
use zb_health::token::BearerToken;

/// `spec/health-history.schema.json`, compiled once.
fn schema() -> &'static jsonschema::Validator {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text = include_str!("../../spec/health-history.schema.json");
        let schema = serde_json::from_str(text).expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema compiles")
    })
}

fn assert_valid(doc: &Value) {
    let errors: Vec<String> = schema().iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema errors {errors:?} in {doc}");
}

/// A probe that fails (an error with raw text) while `failing` is set, and
/// how many times it ran.
fn flipping(name: &'static str) -> (ProbeRegistration, Arc<AtomicBool>, Arc<AtomicUsize>) {
    let failing = Arc::new(AtomicBool::new(false));
    let runs = Arc::new(AtomicUsize::new(0));
    let (f, r) = (failing.clone(), runs.clone());
    let probe = from_fn(move || {
        r.fetch_add(1, Ordering::SeqCst);
        let fail = f.load(Ordering::SeqCst);
        async move {
            if fail {
                Err(ProbeError::from("secret-host:5432 refused"))
            } else {
                Ok(ProbeResult::healthy().with_description("fine"))
            }
        }
    });
    (ProbeRegistration::new(name, probe), failing, runs)
}

fn probe<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["probes"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no probe {name} in {doc}"))
}

#[actix_web::test]
async fn the_document_validates_and_counts_transitions_and_flaps() {
    let registry = HealthRegistry::new();
    let (db, failing, _) = flipping("database");
    registry.add(db).unwrap();
    registry.set_service_name("inventory");
    let endpoints = ZbHealth::new(registry.clone())
        .history(true)
        .build()
        .unwrap();
    assert_eq!(endpoints.history_path(), Some("/health/history"));
    let server = serve(endpoints);

    // Before any answer: valid, the probe never run, no tier answered.
    let wire = request(server.addr, "GET", "/health/history").await;
    assert_eq!(wire.status, 200);
    assert_eq!(wire.header("cache-control"), Some("no-store"));
    assert!(
        wire.header("content-type")
            .unwrap_or_default()
            .starts_with("application/json")
    );
    let doc = wire.json();
    assert_valid(&doc);
    assert_eq!(doc["service"], "inventory");
    assert_eq!(doc["tiers"]["ready"], Value::Null);
    assert_eq!(probe(&doc, "database")["status"], Value::Null);

    // Healthy, Unhealthy, Healthy: two transitions, two flaps.
    for fail in [false, true, true, false] {
        failing.store(fail, Ordering::SeqCst);
        request(server.addr, "GET", "/health/ready").await;
    }
    let doc = request(server.addr, "GET", "/health/history").await.json();
    assert_valid(&doc);
    let db = probe(&doc, "database");
    assert_eq!(db["status"], "Healthy");
    assert_eq!(db["runs"], 4);
    assert_eq!(db["flaps"], 2);
    assert_eq!(db["tiers"], serde_json::json!(["ready"]));
    let transitions = db["transitions"].as_array().unwrap();
    assert_eq!(transitions.len(), 2, "{doc}");
    assert_eq!(transitions[0]["to"], "Unhealthy");
    assert_eq!(transitions[0]["outcome"], "errored");
    assert_eq!(transitions[1]["to"], "Healthy");
    assert_eq!(doc["tiers"]["ready"]["status"], "Healthy");
    assert_eq!(doc["tiers"]["ready"]["code"], 200);
    // The raw error text is in no part of the document.
    assert!(!doc.to_string().contains("secret-host"), "{doc}");
    assert_eq!(doc["capacity"]["samples"], 60);
}

#[actix_web::test]
async fn the_rings_never_exceed_their_capacity_and_keep_the_newest() {
    let registry = HealthRegistry::new();
    let (db, failing, _) = flipping("database");
    registry.add(db).unwrap();
    registry.enable_history();
    for i in 0..3_000 {
        failing.store(i % 3 == 0, Ordering::SeqCst);
        registry.check(Tag::Ready).await;
    }
    let doc: Value = serde_json::from_str(&registry.history_json(Disclosure::Full, true)).unwrap();
    assert_valid(&doc);
    let db = probe(&doc, "database");
    assert_eq!(db["runs"], 3_000);
    assert_eq!(db["samples"].as_array().unwrap().len(), 60);
    assert_eq!(db["transitions"].as_array().unwrap().len(), 20);
    // The last run (i = 2999, 2999 % 3 != 0) was healthy, the newest sample.
    let samples = db["samples"].as_array().unwrap();
    assert_eq!(samples[59]["status"], "Healthy");
    let times: Vec<u64> = samples
        .iter()
        .map(|s| s["atMs"].as_u64().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "oldest first: {times:?}"
    );
    // 1,999 transitions (every failing run and the recovery after it), all
    // within the hour.
    assert_eq!(db["flaps"], 1_999);
}

#[actix_web::test]
async fn reading_the_history_runs_no_probe() {
    let registry = HealthRegistry::new();
    let (db, _, runs) = flipping("database");
    registry.add(db).unwrap();
    let app = init_service(
        App::new().service(
            ZbHealth::new(registry)
                .history(true)
                .history_ui(true)
                .build()
                .unwrap(),
        ),
    )
    .await;
    let response = call_service(&app, TestRequest::get().uri("/health/ready").to_request()).await;
    assert_eq!(response.status(), 200);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    for _ in 0..1_000 {
        let response =
            call_service(&app, TestRequest::get().uri("/health/history").to_request()).await;
        assert_eq!(response.status(), 200);
    }
    let response = call_service(&app, TestRequest::get().uri("/health/ui").to_request()).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers().get("content-type").unwrap(),
        "text/html; charset=utf-8"
    );
    let page = read_body(response).await;
    assert_eq!(&page[..], zb_health::spec::history::PAGE.as_bytes());
    let head = call_service(
        &app,
        TestRequest::default()
            .method(actix_web::http::Method::HEAD)
            .uri("/health/history")
            .to_request(),
    )
    .await;
    assert_eq!(head.status(), 200);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "a read ran the probe");
}

#[actix_web::test]
async fn the_disclosure_level_and_the_token_decide_what_shows() {
    let registry = HealthRegistry::new();
    let (db, failing, _) = flipping("database");
    registry.add(db).unwrap();
    let warm_up = registry.lifecycle().startup_gate_named("warm-up");
    warm_up.ready();
    let token = || BearerToken::new("s3cret-token-of-length").unwrap();
    let status = ZbHealth::new(registry.clone())
        .disclosure(Disclosure::Status)
        .tier_authorized(Tag::Ready, Disclosure::Full)
        .history(true)
        .build()
        .unwrap()
        .with_bearer_token(token());
    let names = ZbHealth::new(registry.clone())
        .paths(zb_health::spec::EndpointPaths {
            ready: "/n/ready".into(),
            active: "/n/active".into(),
            live: "/n/live".into(),
            started: "/n/started".into(),
        })
        .disclosure(Disclosure::Names)
        .history(true)
        .history_path("/n/history")
        .build()
        .unwrap();
    let server = support::serve_with(move |c| {
        c.service(status.clone()).service(names.clone());
    });
    for fail in [false, true] {
        failing.store(fail, Ordering::SeqCst);
        request(server.addr, "GET", "/health/ready").await;
    }

    let doc = request(server.addr, "GET", "/health/history").await.json();
    assert_valid(&doc);
    assert_eq!(doc["probes"], serde_json::json!([]));
    assert_eq!(doc["lifecycle"], Value::Null);
    assert_eq!(doc["events"], serde_json::json!([]));
    assert_eq!(doc["cluster"], Value::Null);
    assert_eq!(doc["tiers"]["ready"]["code"], 503);

    let doc = request(server.addr, "GET", "/n/history").await.json();
    assert_valid(&doc);
    let db = probe(&doc, "database");
    assert_eq!(db["description"], Value::Null);
    assert!(
        db["transitions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["description"].is_null())
    );

    // The token unlocks `full` (never a 401 without it: see above).
    let wire = zb_health_testkit::http::request_with_headers_async(
        server.addr,
        "GET",
        "/health/history",
        &[("authorization", "Bearer s3cret-token-of-length")],
    )
    .await
    .unwrap();
    assert_eq!(wire.status, 200);
    assert_eq!(wire.header("vary"), Some("authorization"));
    let doc = wire.json();
    assert_valid(&doc);
    let db = probe(&doc, "database");
    assert_eq!(db["description"], "check failed");
    assert_eq!(db["transitions"][0]["description"], "check failed");
    assert_eq!(doc["lifecycle"]["gates"][0]["state"], "ready");
}

/// Polls the document until `check` holds, within ten seconds.
async fn until(registry: &HealthRegistry, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let doc: Value =
            serde_json::from_str(&registry.history_json(Disclosure::Full, true)).unwrap();
        if check(&doc) {
            return doc;
        }
        assert!(Instant::now() < deadline, "never {what}: {doc}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn has_event(doc: &Value, kind: &str, name: &str) -> bool {
    doc["events"]
        .as_array()
        .is_some_and(|e| e.iter().any(|e| e["kind"] == kind && e["name"] == name))
}

#[actix_web::test]
async fn lifecycle_events_appear() {
    let registry = HealthRegistry::new();
    registry.enable_history();
    let warm_up = registry.lifecycle().startup_gate_named("warm-up");
    let migrations = registry.lifecycle().startup_gate_named("migrations");
    let pending: Value =
        serde_json::from_str(&registry.history_json(Disclosure::Full, true)).unwrap();
    assert_eq!(pending["lifecycle"]["gates"][0]["state"], "pending");
    migrations.failed("the raw reason");
    warm_up.ready();
    let gates: Value =
        serde_json::from_str(&registry.history_json(Disclosure::Full, true)).unwrap();
    // Declaration order, each with its state and when.
    assert_eq!(gates["lifecycle"]["gates"][0]["name"], "warm-up");
    assert_eq!(gates["lifecycle"]["gates"][0]["state"], "ready");
    assert_eq!(gates["lifecycle"]["gates"][1]["state"], "failed");
    assert!(gates["lifecycle"]["gates"][1]["atMs"].is_u64());
    assert!(has_event(&gates, "gate-failed", "migrations"), "{gates}");
    assert!(!gates.to_string().contains("raw reason"), "{gates}");
    let beat = registry
        .lifecycle()
        .watchdog("poller", Duration::from_millis(50))
        .unwrap();
    beat.beat();
    let doc = until(&registry, "stalled", |d| {
        has_event(d, "watchdog-stalled", "poller")
    })
    .await;
    assert_valid(&doc);
    assert!(has_event(&doc, "gate-ready", "warm-up"), "{doc}");
    assert_eq!(doc["lifecycle"]["watchdogs"][0]["stalled"], true);
    beat.beat();
    let doc = until(&registry, "recovered", |d| {
        has_event(d, "watchdog-recovered", "poller")
    })
    .await;
    assert_eq!(doc["lifecycle"]["watchdogs"][0]["stalled"], false);
    registry.lifecycle().begin_drain();
    let doc: Value = serde_json::from_str(&registry.history_json(Disclosure::Full, true)).unwrap();
    assert_valid(&doc);
    assert!(has_event(&doc, "drain-started", "shutdown"), "{doc}");
    assert_eq!(doc["lifecycle"]["drain"]["draining"], true);
    assert!(doc["lifecycle"]["drain"]["sinceMs"].is_u64());
    beat.retire();
}

fn member(address: &str, age: u64, status: MemberStatus) -> Member {
    Member::new(address, status, age)
}

#[actix_web::test]
async fn a_cluster_view_lists_the_members_and_the_active_one() {
    let registry = HealthRegistry::new();
    let view = InMemoryClusterView::with_state(ClusterState {
        self_address: "127.0.0.1:7002".into(),
        members: vec![
            member("127.0.0.1:7002", 2, MemberStatus::Up),
            member("127.0.0.1:7001", 1, MemberStatus::Up),
            member("127.0.0.1:7003", 0, MemberStatus::Joining),
        ],
    });
    registry.set_cluster_view(Arc::new(view));
    let shown = ZbHealth::new(registry.clone())
        .history(true)
        .build()
        .unwrap();
    let hidden = ZbHealth::new(registry.clone())
        .cluster_addresses(false)
        .history(true)
        .history_path("/hidden/history")
        .build()
        .unwrap();
    let server = support::serve_with(move |c| {
        c.service(shown.clone()).service(hidden.clone());
    });
    let doc = request(server.addr, "GET", "/health/history").await.json();
    assert_valid(&doc);
    let cluster = &doc["cluster"];
    assert_eq!(cluster["self"], "127.0.0.1:7002");
    // The oldest Up member; the older joining one is no candidate.
    assert_eq!(cluster["active"], "127.0.0.1:7001");
    let members = cluster["members"].as_array().unwrap();
    assert_eq!(members.len(), 3);
    let active: Vec<&Value> = members.iter().filter(|m| m["active"] == true).collect();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["id"], "127.0.0.1:7001");
    assert_eq!(members[0]["self"], true);
    assert_eq!(members[2]["status"], "joining");
    assert_eq!(members[0]["shared"], serde_json::json!({}));

    let doc = request(server.addr, "GET", "/hidden/history").await.json();
    assert_valid(&doc);
    assert!(!doc.to_string().contains("127.0.0.1:700"), "{doc}");
    assert_eq!(doc["cluster"]["members"][1]["active"], true);
    assert_eq!(doc["cluster"]["members"][1]["id"], "member-2");
}

#[actix_web::test]
async fn without_history_both_paths_are_404_and_nothing_is_recorded() {
    let registry = HealthRegistry::new();
    let (db, _, runs) = flipping("database");
    registry.add(db).unwrap();
    let server = serve(ZbHealth::new(registry.clone()).build().unwrap());
    assert_eq!(
        request(server.addr, "GET", "/health/ready").await.status,
        200
    );
    assert_eq!(
        request(server.addr, "GET", "/health/history").await.status,
        404
    );
    assert_eq!(request(server.addr, "GET", "/health/ui").await.status, 404);
    assert!(!registry.is_history_enabled());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Nothing was kept: the probe has no recorded run and no tier an answer.
    let doc: Value = serde_json::from_str(&registry.history_json(Disclosure::Full, true)).unwrap();
    assert_valid(&doc);
    assert_eq!(probe(&doc, "database")["runs"], 0);
    assert_eq!(doc["tiers"]["ready"], Value::Null);
}

/// A ready probe of the manifest tests: healthy, with a fixed note.
#[zb_health::prelude::zb_health(name = "cache", tags = [ready])]
struct CacheProbe;

impl zb_health::prelude::Probe for CacheProbe {
    async fn check(&self) -> zb_health::prelude::ProbeOutcome {
        Ok(ProbeResult::healthy().with_description("cache note"))
    }
}

zb_health::prelude::manifest!(
    OnManagement,
    yaml = r#"
service: history-test
management: { port: 8081 }
history: { ui: true }
probes:
  - { kind: custom, type: crate::CacheProbe }
"#
);

zb_health::prelude::manifest!(
    OnBoth,
    yaml = r#"
service: history-both
endpoints: { disclosure: { ready: names } }
management: { port: 8081 }
history: { application_port: true, path: /health/recent }
probes:
  - { kind: custom, type: crate::CacheProbe }
"#
);

#[actix_web::test]
async fn a_manifest_serves_the_history_on_the_management_port_only_unless_asked() {
    let registry = HealthRegistry::new();
    let installed = OnManagement::install_into(
        &registry,
        OnManagementDeps {
            cache_probe: CacheProbe,
        },
    )
    .unwrap();
    let (app, management, running) = support::serve_both_ports(installed.server);
    assert_eq!(
        request(management, "GET", "/health/ready").await.status,
        200
    );
    let doc = request(management, "GET", "/health/history").await.json();
    assert_valid(&doc);
    assert_eq!(doc["service"], "history-test");
    assert_eq!(probe(&doc, "cache")["description"], "cache note");
    let page = request(management, "GET", "/health/ui").await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(request(app, "GET", "/health/history").await.status, 404);
    assert_eq!(request(app, "GET", "/health/ui").await.status, 404);
    running.abort();

    let registry = HealthRegistry::new();
    let installed = OnBoth::install_into(
        &registry,
        OnBothDeps {
            cache_probe: CacheProbe,
        },
    )
    .unwrap();
    let (app, management, running) = support::serve_both_ports(installed.server);
    assert_eq!(request(app, "GET", "/health/ready").await.status, 200);
    // Each port at its own ready level: `names` on the application port.
    let public = request(app, "GET", "/health/recent").await.json();
    assert_valid(&public);
    assert_eq!(probe(&public, "cache")["description"], Value::Null);
    let internal = request(management, "GET", "/health/recent").await.json();
    assert_eq!(probe(&internal, "cache")["description"], "cache note");
    assert_eq!(request(app, "GET", "/health/ui").await.status, 404);
    running.abort();
}

/// A cluster view that carries shared verdicts: `127.0.0.1:7001` reports
/// `database` failing, `127.0.0.1:7002` (self) reports it ok.
struct GossipView(ClusterState);

impl zb_health::cluster::ClusterView for GossipView {
    fn state(&self) -> Option<Arc<ClusterState>> {
        Some(Arc::new(self.0.clone()))
    }

    fn shared_verdicts(self: Arc<Self>) -> Option<Arc<dyn zb_health::shared::SharedVerdicts>> {
        Some(self)
    }
}

impl zb_health::shared::SharedVerdicts for GossipView {
    fn publish(&self, _probe: &str, _failing: bool) {}

    fn tally(&self, _probe: &str) -> Option<zb_health::shared::Tally> {
        None
    }

    fn member_verdicts(&self, address: &str) -> Vec<(String, bool)> {
        vec![("database".to_owned(), address == "127.0.0.1:7001")]
    }
}

#[actix_web::test]
async fn each_members_shared_verdicts_come_from_the_gossip() {
    let registry = HealthRegistry::new();
    registry.set_cluster_view(Arc::new(GossipView(ClusterState {
        self_address: "127.0.0.1:7002".into(),
        members: vec![
            member("127.0.0.1:7001", 1, MemberStatus::Up),
            member("127.0.0.1:7002", 2, MemberStatus::Up),
        ],
    })));
    let doc: Value = serde_json::from_str(&registry.history_json(Disclosure::Full, true)).unwrap();
    assert_valid(&doc);
    let members = doc["cluster"]["members"].as_array().unwrap();
    assert_eq!(
        members[0]["shared"],
        serde_json::json!({"database": "failing"})
    );
    assert_eq!(members[1]["shared"], serde_json::json!({"database": "ok"}));
    assert_eq!(members[0]["active"], true);
}

/// `?since=` (`spec/history.md`): a quiet probe is left out, a busy one
/// carries only its new samples and transitions, and the cluster only when
/// it changed.
#[actix_web::test]
async fn a_delta_carries_only_what_came_since_and_no_unchanged_cluster() {
    let registry = HealthRegistry::new();
    let (db, failing, _) = flipping("database");
    let (cache, _, _) = flipping("cache");
    registry.add(db).unwrap();
    registry
        .add(cache.tags(zb_health::prelude::TagSet::ACTIVE))
        .unwrap();
    let view = Arc::new(InMemoryClusterView::with_state(ClusterState {
        self_address: "127.0.0.1:7001".into(),
        members: vec![member("127.0.0.1:7001", 1, MemberStatus::Up)],
    }));
    registry.set_cluster_view(view.clone());
    let endpoints = ZbHealth::new(registry.clone())
        .history(true)
        .build()
        .unwrap();
    let server = serve(endpoints);
    for _ in 0..3 {
        request(server.addr, "GET", "/health/ready").await;
        request(server.addr, "GET", "/health/active").await;
    }
    let full = request(server.addr, "GET", "/health/history").await;
    let full_doc = full.json();
    assert_valid(&full_doc);
    assert!(
        full_doc.get("delta").is_none(),
        "a full document has no delta"
    );
    let digest = zb_health::spec::history::cluster_digest(&full_doc["cluster"].to_string());
    // The digest is of the exact bytes the document carries.
    let text = full.text();
    let raw = &text[text.find(",\"cluster\":").unwrap() + 11..text.find(",\"capacity\":").unwrap()];
    assert_eq!(zb_health::spec::history::cluster_digest(raw), digest);
    let since = full_doc["nowMs"].as_u64().unwrap() + 1;
    // The database fails after the full read; the cache does not run.
    tokio::time::sleep(Duration::from_millis(5)).await;
    failing.store(true, Ordering::SeqCst);
    request(server.addr, "GET", "/health/ready").await;

    let wire = request(
        server.addr,
        "GET",
        &format!("/health/history?since={since}&cluster={digest}"),
    )
    .await;
    assert_eq!(wire.status, 200);
    let delta = wire.json();
    assert_valid(&delta);
    assert_eq!(delta["delta"]["sinceMs"], since);
    assert_eq!(
        delta["delta"]["names"],
        serde_json::json!(["database", "cache"])
    );
    assert_eq!(delta["delta"]["clusterUnchanged"], true);
    assert_eq!(delta["cluster"], Value::Null);
    let probes = delta["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 1, "only the probe that ran since: {delta}");
    let db = &probes[0];
    assert_eq!(db["name"], "database");
    assert_eq!(db["runs"], 4);
    assert_eq!(db["samples"].as_array().unwrap().len(), 1);
    assert_eq!(db["transitions"].as_array().unwrap().len(), 1);
    assert_eq!(db["status"], "Unhealthy");
    assert!(
        wire.text().len() < full.text().len(),
        "the delta ({} bytes) is shorter than the document ({} bytes)",
        wire.text().len(),
        full.text().len()
    );

    // A changed cluster is sent again, whatever digest the reader holds.
    view.set(ClusterState {
        self_address: "127.0.0.1:7001".into(),
        members: vec![
            member("127.0.0.1:7001", 1, MemberStatus::Up),
            member("127.0.0.1:7002", 2, MemberStatus::Joining),
        ],
    });
    let delta = request(
        server.addr,
        "GET",
        &format!("/health/history?since={since}&cluster={digest}"),
    )
    .await
    .json();
    assert_valid(&delta);
    assert_eq!(delta["delta"]["clusterUnchanged"], false);
    assert_eq!(delta["cluster"]["members"].as_array().unwrap().len(), 2);

    // A bad value is the reader's error, named.
    for (query, named) in [
        ("since=soon", "since: "),
        ("since=1&cluster=x", "cluster: "),
    ] {
        let wire = request(server.addr, "GET", &format!("/health/history?{query}")).await;
        assert_eq!(wire.status, 400, "{query}");
        assert!(wire.text().starts_with(named), "{query}: {}", wire.text());
    }
}
