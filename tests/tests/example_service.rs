//! The example service, as `cargo run -p plant-service` starts it, over a
//! real socket: its database probe fails and recovers on demand.

mod support;

use std::sync::OnceLock;
use std::time::Duration;

use plant_service::PlantHealth;
use support::{assert_canonical, request};
use zb_health::HealthRegistry;

/// The service's one install into the process registry, as its `main`
/// does; shared because a second install would register every name again.
fn plant() -> PlantHealth {
    static PLANT: OnceLock<PlantHealth> = OnceLock::new();
    PLANT
        .get_or_init(|| {
            let (health, startup) = PlantHealth::new(false);
            startup.warm_up.ready();
            health
        })
        .clone()
}

#[test]
fn the_example_installs_into_the_process_registry_with_its_orchestrator_timeout() {
    let health = plant();
    let process = HealthRegistry::process();
    assert_eq!(process.names(), health.registry.names());
    let names: Vec<String> = process.names().iter().map(|n| n.to_string()).collect();
    assert_eq!(names, ["database", "disk-space", "primary"]);
    assert_eq!(process.orchestrator_timeout(), Some(Duration::from_secs(1)));
}

#[actix_web::test]
async fn the_database_toggle_flips_ready_and_leaves_live_alone() {
    let health = plant();
    let server = support::serve_with(move |c| health.configure(c));
    let addr = server.addr;

    let ready = request(addr, "GET", "/health/ready").await;
    assert_eq!(ready.status, 200);
    assert_canonical(&ready.json());
    assert_eq!(request(addr, "GET", "/health/active").await.status, 200);

    assert_eq!(
        request(addr, "POST", "/admin/database/fail").await.status,
        204
    );
    let ready = request(addr, "GET", "/health/ready").await;
    assert_eq!(ready.status, 503);
    let body = ready.json();
    assert_eq!(body["entries"]["database"]["status"], "Unhealthy");
    assert_eq!(body["entries"]["database"]["description"], "check failed");
    assert_eq!(body["entries"]["disk-space"]["status"], "Healthy");
    let text = String::from_utf8(ready.body.clone()).unwrap();
    assert!(
        !text.contains("secret") && !text.contains("10.1.2.3"),
        "{text}"
    );
    assert_eq!(request(addr, "GET", "/healthz").await.status, 200);

    assert_eq!(
        request(addr, "POST", "/admin/database/recover")
            .await
            .status,
        204
    );
    assert_eq!(request(addr, "GET", "/health/ready").await.status, 200);
}

#[actix_web::test]
async fn the_manifest_lifecycle_gates_ready_and_watches_the_poller() {
    // A registry of its own: stalling the poller must not touch the other
    // tests' `/healthz`.
    let registry = HealthRegistry::new();
    let (health, startup) = PlantHealth::with_registry(&registry, false);
    let server = support::serve_with(move |c| health.configure(c));
    let addr = server.addr;

    // `warm-up` is pending: ready and active hold at 503, live is 200.
    let ready = request(addr, "GET", "/health/ready").await;
    assert_eq!(ready.status, 503);
    assert_eq!(
        ready.json()["entries"]["startup"]["description"],
        "starting"
    );
    assert_eq!(request(addr, "GET", "/health/active").await.status, 503);
    let live = request(addr, "GET", "/healthz").await;
    assert_eq!(live.status, 200);
    assert_eq!(live.json()["entries"]["plc-poller"]["status"], "Healthy");
    startup.warm_up.ready();
    assert_eq!(request(addr, "GET", "/health/ready").await.status, 200);

    // The poller stops beating: live turns 503 naming it, ready stays 200.
    assert_eq!(
        request(addr, "POST", "/admin/poller/stall").await.status,
        204
    );
    let live = support::until_status(addr, "/healthz", 503).await;
    assert_canonical(&live.json());
    assert_eq!(
        live.json()["entries"]["plc-poller"]["description"],
        "no heartbeat within 3000 ms"
    );
    assert_eq!(request(addr, "GET", "/health/ready").await.status, 200);
    assert_eq!(
        request(addr, "POST", "/admin/poller/resume").await.status,
        204
    );
    support::until_status(addr, "/healthz", 200).await;
}
