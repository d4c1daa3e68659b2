//! Health groups over real sockets on 127.0.0.1 (ZB-5, `spec/tiers.md`,
//! health groups): a named set of probes, by name or by tier, at a path of
//! its own with its own disclosure level, answered as `ready` is (the worst
//! entry, 200 while serving, 503 when `Unhealthy`, the startup gate first);
//! served on the application and the management port from a manifest's
//! `groups`.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use support::{counted, entry_names, request, serve};
use zb_health::prelude::{
    HealthGroup, HealthRegistry, HealthStatus, ProbeResult, Tag, TagSet, ZbHealth,
};
use zb_health::spec::Disclosure;

#[actix_web::test]
async fn a_group_answers_its_probes_as_ready_does() {
    let registry = HealthRegistry::new();
    let (database, _) = counted("database", HealthStatus::Healthy);
    let (cache, _) = counted("cache", HealthStatus::Degraded);
    let (queue, queue_runs) = counted("queue", HealthStatus::Unhealthy);
    let (node, _) = counted("node", HealthStatus::Healthy);
    registry
        .add_all([database, cache, queue, node.tags(TagSet::ACTIVE)])
        .unwrap();
    let endpoints = ZbHealth::new(registry.clone())
        .group(HealthGroup::new("canary", "/health/canary").probes(["cache", "database"]))
        .group(
            HealthGroup::new("writes", "/health/writes")
                .tiers([Tag::Active])
                .disclosure(Disclosure::Status),
        )
        .group(HealthGroup::new("all", "/health/all").tiers([Tag::Ready, Tag::Active]))
        .build()
        .unwrap();
    assert_eq!(endpoints.group_path("canary"), Some("/health/canary"));
    let server = serve(endpoints);

    // By name: registration order, the worst entry (Degraded) is a 200, and
    // the failing `queue` outside the group never runs.
    let wire = request(server.addr, "GET", "/health/canary").await;
    assert_eq!(wire.status, 200);
    assert_eq!(wire.header("cache-control"), Some("no-store"));
    let body = wire.json();
    support::assert_canonical(&body);
    assert_eq!(body["status"], "Degraded");
    assert_eq!(entry_names(&body), ["database", "cache"]);
    assert_eq!(body["entries"]["cache"]["description"], "fixed note");
    assert_eq!(queue_runs.load(Ordering::SeqCst), 0);

    // By tier, at its own level (`status`: no entries).
    let wire = request(server.addr, "GET", "/health/writes").await;
    assert_eq!(wire.status, 200);
    let body = wire.json();
    assert_eq!(body["status"], "Healthy");
    assert!(body["entries"].as_object().unwrap().is_empty(), "{body}");

    // Both tiers: every probe once, and `queue` fails it.
    let wire = request(server.addr, "GET", "/health/all").await;
    assert_eq!(wire.status, 503);
    assert_eq!(
        entry_names(&wire.json()),
        ["database", "cache", "queue", "node"]
    );
    assert_eq!(
        request(server.addr, "HEAD", "/health/all").await.status,
        503
    );
    assert_eq!(
        request(server.addr, "POST", "/health/all").await.status,
        405
    );

    // The drain applies, as on `ready`.
    registry.lifecycle().begin_drain();
    let wire = request(server.addr, "GET", "/health/canary").await;
    assert_eq!(wire.status, 503);
    assert_eq!(entry_names(&wire.json())[0], "shutdown");
}

/// A ready probe for the manifest below whose health the test sets.
#[zb_health::prelude::zb_health(name = "cache", tags = [ready], timeout = "200ms")]
struct CacheProbe(Arc<AtomicBool>);

impl zb_health::prelude::Probe for CacheProbe {
    async fn check(&self) -> zb_health::prelude::ProbeOutcome {
        let status = if self.0.load(Ordering::SeqCst) {
            HealthStatus::Healthy
        } else {
            HealthStatus::Unhealthy
        };
        Ok(ProbeResult::new(status).with_description("cache note"))
    }
}

/// A ready probe that always fails: outside the canary group.
#[zb_health::prelude::zb_health(name = "search", tags = [ready], timeout = "200ms")]
struct SearchProbe;

impl zb_health::prelude::Probe for SearchProbe {
    async fn check(&self) -> zb_health::prelude::ProbeOutcome {
        Ok(ProbeResult::unhealthy("search down"))
    }
}

zb_health::prelude::manifest!(
    Canary,
    yaml = r#"
service: groups-test
endpoints: { disclosure: { ready: names } }
management: { port: 8081 }
probes:
  - { kind: custom, type: crate::CacheProbe }
  - { kind: custom, type: crate::SearchProbe }
groups:
  canary: { path: /health/canary, probes: [cache] }
  detailed: { path: /health/detailed, probes: [cache], disclosure: full }
"#
);

#[actix_web::test]
async fn a_manifest_group_is_served_on_both_ports_at_each_ports_level() {
    let healthy = Arc::new(AtomicBool::new(true));
    let registry = HealthRegistry::new();
    let installed = Canary::install_into(
        &registry,
        CanaryDeps {
            cache_probe: CacheProbe(healthy.clone()),
            search_probe: SearchProbe,
        },
    )
    .unwrap();
    let (app, management, running) = support::serve_both_ports(installed.server);

    for addr in [app, management] {
        // `ready` fails on `search`; the canary gated on `cache` does not.
        assert_eq!(request(addr, "GET", "/health/ready").await.status, 503);
        let wire = request(addr, "GET", "/health/canary").await;
        assert_eq!(wire.status, 200, "{addr}");
        assert_eq!(entry_names(&wire.json()), ["cache"], "{addr}");
    }
    // No level of its own: the port's ready level (`names` on the
    // application port, `full` on the management one).
    let public = request(app, "GET", "/health/canary").await.json();
    assert_eq!(public["entries"]["cache"]["description"], Value::Null);
    let internal = request(management, "GET", "/health/canary").await.json();
    assert_eq!(internal["entries"]["cache"]["description"], "cache note");
    // Its own level, on both ports.
    let detailed = request(app, "GET", "/health/detailed").await.json();
    assert_eq!(detailed["entries"]["cache"]["description"], "cache note");

    healthy.store(false, Ordering::SeqCst);
    for addr in [app, management] {
        support::until_status(addr, "/health/canary", 503).await;
    }
    running.abort();
}
