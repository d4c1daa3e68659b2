//! AT-1, one registry per process, over a real socket: a manifest's
//! `install` puts its probes into `HealthRegistry::process()`, the
//! endpoints it returns serve that very registry, and its orchestrator
//! timeout holds every probe registered there later in code (R5 at
//! registration, BE-HLTH-006).
//!
//! The tests share the one process registry, as an application's
//! components do; each asserts only what the others cannot change.

mod support;

use std::sync::OnceLock;
use std::time::Duration;

use support::request;
use zb_health::http::ZbHealthEndpoints;
use zb_health::prelude::{
    HealthRegistry, HealthStatus, Probe, ProbeOutcome, ProbeRegistration, ProbeResult, from_fn,
    zb_health,
};
use zb_health::spec::Rule;

#[zb_health(name = "cache", timeout = "300ms")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

zb_health::prelude::manifest!(
    Health,
    yaml = r#"
service: process-test
orchestrator: { timeout: 1s }
probes:
  - { kind: custom, type: crate::CacheProbe }
"#
);

/// The application's one `install`, whichever test runs first.
fn installed() -> &'static ZbHealthEndpoints {
    static ENDPOINTS: OnceLock<ZbHealthEndpoints> = OnceLock::new();
    ENDPOINTS.get_or_init(|| {
        Health::install(HealthDeps {
            cache_probe: CacheProbe,
        })
        .unwrap()
        .server
        .endpoints()
        .clone()
    })
}

fn healthy_probe(name: &'static str, timeout: Duration) -> ProbeRegistration {
    ProbeRegistration::new(name, from_fn(|| async { Ok(ProbeResult::healthy()) })).timeout(timeout)
}

#[actix_web::test]
async fn the_installed_endpoints_serve_the_process_registry() {
    let endpoints = installed().clone();
    assert!(
        HealthRegistry::process()
            .names()
            .iter()
            .any(|n| &**n == "cache")
    );
    // Added in code after the endpoints were built, to the process registry:
    // if the endpoints served another registry, it would not show.
    HealthRegistry::process()
        .add(support::fixed("late", HealthStatus::Unhealthy).timeout(Duration::from_millis(500)))
        .unwrap();
    let server = support::serve(endpoints);
    let ready = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(ready.status, 503);
    let body = ready.json();
    assert_eq!(body["entries"]["cache"]["status"], "Healthy");
    assert_eq!(body["entries"]["late"]["status"], "Unhealthy");
}

#[test]
fn a_probe_added_in_code_after_install_is_held_to_the_manifests_orchestrator_timeout() {
    installed();
    let process = HealthRegistry::process();
    assert_eq!(process.orchestrator_timeout(), Health::ORCHESTRATOR_TIMEOUT);
    assert_eq!(process.orchestrator_timeout(), Some(Duration::from_secs(1)));
    let refused = process
        .add(healthy_probe("too-slow", Duration::from_secs(1)))
        .unwrap_err();
    assert_eq!(refused.rules(), [Rule::Duration]);
    assert!(
        !process.names().iter().any(|n| &**n == "too-slow"),
        "a refused probe is not registered"
    );
    process
        .add(healthy_probe("fits", Duration::from_millis(999)))
        .unwrap();
}

#[test]
fn a_second_install_is_refused_rather_than_building_a_second_registry() {
    installed();
    let Err(again) = Health::install(HealthDeps {
        cache_probe: CacheProbe,
    }) else {
        panic!("a second install of the same manifest must be refused");
    };
    assert_eq!(again.rules(), [Rule::DuplicateName]);
    let caches = HealthRegistry::process()
        .names()
        .iter()
        .filter(|n| &***n == "cache")
        .count();
    assert_eq!(caches, 1);
}

#[test]
fn install_into_a_registry_of_its_own_leaves_the_process_registry_alone() {
    let own = HealthRegistry::new();
    Health::install_into(
        &own,
        HealthDeps {
            cache_probe: CacheProbe,
        },
    )
    .unwrap();
    assert_eq!(own.orchestrator_timeout(), Some(Duration::from_secs(1)));
    assert_eq!(&*own.names(), [std::sync::Arc::from("cache")]);
}
