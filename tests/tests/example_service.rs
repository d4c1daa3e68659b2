//! The example service, as `cargo run -p plant-service` starts it, over a
//! real socket: its database probe fails and recovers on demand.

mod support;

use plant_service::PlantHealth;
use support::{assert_canonical, request};

#[actix_web::test]
async fn the_database_toggle_flips_ready_and_leaves_live_alone() {
    let health = PlantHealth::new(false);
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
