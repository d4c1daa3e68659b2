//! Per-probe paths over real sockets on 127.0.0.1 (`spec/tiers.md`, one
//! probe's path): `GET|HEAD <tier path>/{probe}` answers one entry with the
//! tier's status-code mapping, headers, disclosure and authorized view; it
//! runs that probe alone; an unknown name, a probe of the other tier and
//! any name under `live` are 404; the startup gate and the drain apply as
//! on the tier; the paths follow overridden tier paths and are served on
//! the application and the management port alike.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use support::{counted, entry_names, request, serve};
use zb_health::lifecycle::Drain;
use zb_health::prelude::{HealthRegistry, HealthStatus, Tag, TagSet, ZbHealth, map_zb_health};
use zb_health::server::ZbHealthServer;
use zb_health::spec::Disclosure;
use zb_health::token::BearerToken;

/// `ready`: `database` (Healthy) and `cache` (Unhealthy); `active`: `node`.
fn registry() -> (HealthRegistry, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let registry = HealthRegistry::new();
    let (database, database_runs) = counted("database", HealthStatus::Healthy);
    let (cache, cache_runs) = counted("cache", HealthStatus::Unhealthy);
    let (node, _) = counted("node", HealthStatus::Healthy);
    registry
        .add_all([database, cache, node.tags(TagSet::ACTIVE)])
        .unwrap();
    (registry, database_runs, cache_runs)
}

#[actix_web::test]
async fn a_probe_path_answers_its_one_entry_with_the_tier_mapping() {
    let (registry, database_runs, cache_runs) = registry();
    let server = serve(map_zb_health(registry));

    let wire = request(server.addr, "GET", "/health/ready/database").await;
    assert_eq!(wire.status, 200);
    assert_eq!(wire.header("cache-control"), Some("no-store"));
    assert_eq!(wire.header("content-type"), Some("application/json"));
    let body = wire.json();
    support::assert_canonical(&body);
    assert_eq!(body["status"], "Healthy");
    assert_eq!(entry_names(&body), ["database"]);
    assert_eq!(body["entries"]["database"]["description"], "fixed note");
    // Only that probe ran.
    assert_eq!(database_runs.load(Ordering::SeqCst), 1);
    assert_eq!(cache_runs.load(Ordering::SeqCst), 0);

    // The failing probe: 503 on its own path, as on the tier.
    let wire = request(server.addr, "GET", "/health/ready/cache").await;
    assert_eq!(wire.status, 503);
    let body = wire.json();
    assert_eq!(body["status"], "Unhealthy");
    assert_eq!(entry_names(&body), ["cache"]);
    assert_eq!(
        request(server.addr, "GET", "/health/ready").await.status,
        503
    );

    // The active tier's probe under the active path.
    let wire = request(server.addr, "GET", "/health/active/node").await;
    assert_eq!(wire.status, 200);
    assert_eq!(entry_names(&wire.json()), ["node"]);

    // HEAD answers the same status; other methods are 405 with `Allow`.
    let head = request(server.addr, "HEAD", "/health/ready/cache").await;
    assert_eq!(head.status, 503);
    let post = request(server.addr, "POST", "/health/ready/database").await;
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET, HEAD"));
}

#[actix_web::test]
async fn unknown_names_other_tiers_and_live_are_not_found() {
    let (registry, _, _) = registry();
    let server = serve(map_zb_health(registry));

    for path in [
        "/health/ready/nothing",
        // A probe of the other tier.
        "/health/ready/node",
        "/health/active/database",
    ] {
        let wire = request(server.addr, "GET", path).await;
        assert_eq!(wire.status, 404, "{path}");
        assert_eq!(wire.header("cache-control"), Some("no-store"), "{path}");
        let body = wire.json();
        assert!(body["error"].is_string(), "{path}: {body}");
        // Nothing of the request is echoed back.
        assert!(!wire.text().contains("node"), "{path}");
        assert!(!wire.text().contains("database"), "{path}");
    }
    // `live` carries no probes: nothing is served under its path.
    assert_eq!(
        request(server.addr, "GET", "/healthz/database")
            .await
            .status,
        404
    );
}

#[actix_web::test]
async fn the_startup_gate_and_the_drain_apply_as_on_the_tier() {
    let (registry, _, _) = registry();
    let gate = registry.lifecycle().startup_gate();
    let server = serve(map_zb_health(registry.clone()));

    let wire = request(server.addr, "GET", "/health/ready/database").await;
    assert_eq!(wire.status, 503);
    let body = wire.json();
    assert_eq!(entry_names(&body), ["startup", "database"]);
    assert_eq!(body["entries"]["startup"]["description"], "starting");

    gate.ready();
    assert_eq!(
        request(server.addr, "GET", "/health/ready/database")
            .await
            .status,
        200
    );

    registry.lifecycle().begin_drain();
    let wire = request(server.addr, "GET", "/health/ready/database").await;
    assert_eq!(wire.status, 503);
    assert_eq!(entry_names(&wire.json()), ["shutdown", "database"]);
}

#[actix_web::test]
async fn disclosure_and_the_authorized_view_are_the_tiers() {
    let (registry, _, _) = registry();
    let endpoints = ZbHealth::new(registry)
        .tier_disclosure(Tag::Ready, Disclosure::Names)
        .tier_authorized(Tag::Ready, Disclosure::Full)
        .build()
        .unwrap()
        .with_bearer_token(BearerToken::new("s3cret-token-for-tests").unwrap());
    let server = serve(endpoints);

    let public = request(server.addr, "GET", "/health/ready/database").await;
    assert_eq!(public.status, 200);
    assert_eq!(public.header("vary"), Some("authorization"));
    let body = public.json();
    assert_eq!(entry_names(&body), ["database"]);
    assert_eq!(body["entries"]["database"]["description"], Value::Null);

    let authorized = zb_health_testkit::http::request_with_headers_async(
        server.addr,
        "GET",
        "/health/ready/database",
        &[("Authorization", "Bearer s3cret-token-for-tests")],
    )
    .await
    .unwrap();
    assert_eq!(authorized.status, 200);
    assert_eq!(authorized.header("vary"), Some("authorization"));
    assert_eq!(
        authorized.json()["entries"]["database"]["description"],
        "fixed note"
    );
}

#[actix_web::test]
async fn probe_paths_follow_the_tier_paths_on_both_ports() {
    let (registry, _, _) = registry();
    let endpoints = ZbHealth::new(registry.clone())
        // A tier at a prefix of another's path: the exact paths still win.
        .ready_path("/health")
        .active_path("/health/active")
        .build()
        .unwrap();
    let (app, management, running) = support::serve_both_ports(ZbHealthServer::new(
        registry,
        endpoints,
        Drain::new(Duration::from_millis(10)),
    ));
    for addr in [app, management] {
        let wire = request(addr, "GET", "/health/database").await;
        assert_eq!(wire.status, 200, "{addr}");
        assert_eq!(entry_names(&wire.json()), ["database"], "{addr}");
        // `/health/active` is the active tier, not a probe of `ready`.
        let wire = request(addr, "GET", "/health/active").await;
        assert_eq!(wire.status, 200, "{addr}");
        assert_eq!(entry_names(&wire.json()), ["node"], "{addr}");
        let wire = request(addr, "GET", "/health/active/node").await;
        assert_eq!(wire.status, 200, "{addr}");
        // The default paths are not served.
        assert_eq!(
            request(addr, "GET", "/health/ready/database").await.status,
            404,
            "{addr}"
        );
    }
    running.abort();
}
