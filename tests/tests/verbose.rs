//! kube-apiserver's query on every tier, over real sockets on 127.0.0.1
//! (`spec/tiers.md`, verbose and exclude): `?verbose` answers in plain
//! text, one line per check, at the tier's disclosure level; `?exclude=`
//! leaves named checks out of the verdict, says which, and reports a name
//! that matches nothing.

mod support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use support::{Wire, assert_canonical, counted, fixed, request, serve};
use zb_health::prelude::{
    HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, ZbHealth, from_fn,
};
use zb_health::spec::Disclosure;

/// A ready tier of a healthy `database`, a failing `cache` (described
/// `cache unreachable`) and a `Degraded` `search`, served at `level`.
fn served(level: Disclosure) -> (HealthRegistry, support::Server) {
    let registry = HealthRegistry::new();
    registry
        .add(fixed("database", HealthStatus::Healthy))
        .unwrap();
    registry
        .add(ProbeRegistration::new(
            "cache",
            from_fn(|| async { Ok(ProbeResult::unhealthy("cache unreachable")) }),
        ))
        .unwrap();
    registry
        .add(ProbeRegistration::new(
            "search",
            from_fn(|| async { Ok(ProbeResult::degraded("index lagging")) }),
        ))
        .unwrap();
    let endpoints = ZbHealth::new(registry.clone())
        .disclosure(level)
        .build()
        .unwrap();
    (registry, serve(endpoints))
}

fn is_text(wire: &Wire) {
    assert_eq!(
        wire.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(wire.header("cache-control"), Some("no-store"));
    assert_eq!(wire.header("x-content-type-options"), Some("nosniff"));
}

#[actix_web::test]
async fn verbose_writes_one_line_per_check_and_the_verdict_at_each_level() {
    let expected = [
        (
            Disclosure::Full,
            "[+]database ok\n[-]cache failed: cache unreachable\n[+]search degraded: index lagging\nready check failed\n",
        ),
        (
            Disclosure::Names,
            "[+]database ok\n[-]cache failed: reason withheld\n[+]search degraded\nready check failed\n",
        ),
        (Disclosure::Status, "ready check failed\n"),
    ];
    for (level, body) in expected {
        let (_registry, server) = served(level);
        for query in ["verbose", "verbose=1", "verbose&foo=bar"] {
            let wire = request(server.addr, "GET", &format!("/health/ready?{query}")).await;
            assert_eq!(wire.status, 503, "{level:?} {query}");
            is_text(&wire);
            assert_eq!(wire.text(), body, "{level:?} {query}");
        }
        // No query, or one that asks for nothing: the JSON as always.
        for path in [
            "/health/ready",
            "/health/ready?verbose=false",
            "/health/ready?foo",
        ] {
            let wire = request(server.addr, "GET", path).await;
            assert_eq!(
                wire.header("content-type"),
                Some("application/json"),
                "{path}"
            );
            assert_eq!(wire.status, 503, "{path}");
        }
    }
}

#[actix_web::test]
async fn exclude_leaves_checks_out_of_the_verdict_says_which_and_reports_unknown_names() {
    let (registry, server) = served(Disclosure::Full);
    let (probe, runs) = counted("queue", HealthStatus::Healthy);
    registry.add(probe).unwrap();

    // JSON: the failing check left out, the verdict 200, the body the
    // canonical one without it, and a header naming it.
    let wire = request(server.addr, "GET", "/health/ready?exclude=cache").await;
    assert_eq!(wire.status, 200);
    assert_eq!(wire.header("health-excluded"), Some("cache"));
    let body = wire.json();
    assert_canonical(&body);
    assert_eq!(support::entry_names(&body), ["database", "search", "queue"]);

    // Verbose: excluded checks, the names that always count and unknown
    // names said; an excluded check does not run.
    let before = runs.load(Ordering::SeqCst);
    let wire = request(
        server.addr,
        "GET",
        "/health/ready?verbose&exclude=cache&exclude=queue&exclude=nope&exclude=startup",
    )
    .await;
    assert_eq!(wire.status, 200);
    is_text(&wire);
    assert_eq!(
        wire.text(),
        "[+]database ok\n[+]search degraded: index lagging\n[+]cache excluded: ok\n[+]queue excluded: ok\nwarn: some health checks cannot be excluded: \"startup\" is always counted\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nready check passed\n"
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        before,
        "an excluded check runs"
    );

    // Every check excluded: allowed, and the tier passes.
    let all = "/health/ready?verbose&exclude=database&exclude=cache&exclude=search&exclude=queue";
    let wire = request(server.addr, "GET", all).await;
    assert_eq!(wire.status, 200);
    assert!(
        wire.text()
            .ends_with("[+]queue excluded: ok\nready check passed\n"),
        "{}",
        wire.text()
    );

    // The lifecycle's entries cannot be excluded: a drain holds.
    registry.lifecycle().begin_drain();
    let wire = request(
        server.addr,
        "GET",
        "/health/ready?verbose&exclude=cache&exclude=shutdown",
    )
    .await;
    assert_eq!(wire.status, 503);
    assert!(
        wire.text().starts_with("[-]shutdown failed: draining\n"),
        "{}",
        wire.text()
    );
    assert!(
        wire.text().contains("\"shutdown\" is always counted"),
        "{}",
        wire.text()
    );
    let wire = request(server.addr, "GET", "/health/ready?exclude=shutdown").await;
    assert_eq!(wire.status, 503);
    assert_eq!(wire.header("health-not-excluded"), Some("shutdown"));
}

#[actix_web::test]
async fn the_status_level_shows_no_name_of_an_excluded_or_unknown_check() {
    let (_registry, server) = served(Disclosure::Status);
    let wire = request(
        server.addr,
        "GET",
        "/health/ready?verbose&exclude=cache&exclude=nope",
    )
    .await;
    assert_eq!(
        (wire.status, wire.text()),
        (200, "ready check passed\n".to_owned())
    );
    let wire = request(server.addr, "GET", "/health/ready?exclude=cache").await;
    assert_eq!(wire.status, 200);
    assert_eq!(wire.header("health-excluded"), None);
}

#[actix_web::test]
async fn on_live_the_checks_are_the_watchdogs() {
    let registry = HealthRegistry::new();
    let heartbeat = registry
        .lifecycle()
        .watchdog("consumer", Duration::from_millis(200))
        .unwrap();
    heartbeat.beat();
    let server = serve(
        ZbHealth::new(registry.clone())
            .disclosure(Disclosure::Names)
            .build()
            .unwrap(),
    );
    let stalled = support::until_status(server.addr, "/healthz", 503).await;
    assert_eq!(stalled.status, 503);
    let wire = request(server.addr, "GET", "/healthz?verbose").await;
    assert_eq!(
        (wire.status, wire.text()),
        (
            503,
            "[-]consumer failed: reason withheld\nlive check failed\n".to_owned()
        )
    );
    let wire = request(server.addr, "GET", "/healthz?verbose&exclude=consumer").await;
    assert_eq!(
        (wire.status, wire.text()),
        (
            200,
            "[+]consumer excluded: ok\nlive check passed\n".to_owned()
        )
    );
    let wire = request(server.addr, "GET", "/healthz?exclude=consumer").await;
    assert_eq!(wire.status, 200);
    assert_eq!(wire.header("health-excluded"), Some("consumer"));
    heartbeat.retire();
}
