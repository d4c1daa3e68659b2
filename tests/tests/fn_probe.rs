//! A custom check in one place: `#[zb_health]` on an `async fn` is one
//! probe. Named by one manifest line (`fn:`, with no `HealthDeps` field)
//! or registered in code with no manifest line, it answers in
//! `/health/ready` over a real socket, with the name, tiers, deadline and
//! failure status its attribute gives.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::{request, serve};
use zb_health::prelude::*;

/// Whether the payment provider answers; only the manifest test flips it.
static PAYMENTS_UP: AtomicBool = AtomicBool::new(true);

#[zb_health(name = "payments", tags = [ready], timeout = "300ms", failure_status = degraded)]
async fn payments() -> ProbeOutcome {
    if PAYMENTS_UP.load(Ordering::SeqCst) {
        Ok(ProbeResult::healthy().with_description("provider reachable"))
    } else {
        Err("provider refused the connection".into())
    }
}

/// Never answers within its 100 ms deadline.
#[zb_health(name = "slow", tags = [ready], timeout = "100ms")]
async fn slow() -> ProbeOutcome {
    tokio::time::sleep(Duration::from_secs(30)).await;
    Ok(ProbeResult::healthy())
}

manifest!(
    Health,
    yaml = r#"
service: orders
probes:
  - { name: payments, kind: custom, fn: crate::payments }
"#
);

#[actix_web::test]
async fn a_fn_probe_named_by_one_manifest_line_answers_in_ready() {
    let registry = HealthRegistry::new();
    // No field to fill: the fn needs no state.
    let installed = Health::install_into(&registry, HealthDeps {}).unwrap();
    let server = serve(installed.server.endpoints().clone());

    let wire = request(server.addr, "GET", "/health/ready").await;
    let body = wire.json();
    assert_eq!(wire.status, 200, "{body}");
    let entry = &body["entries"]["payments"];
    assert_eq!(entry["status"], "Healthy", "{body}");
    assert_eq!(entry["description"], "provider reachable", "{body}");

    // The attribute's `failure_status = degraded`: an optional dependency,
    // so the tier stays 200 while the fn fails.
    PAYMENTS_UP.store(false, Ordering::SeqCst);
    let wire = request(server.addr, "GET", "/health/ready").await;
    let body = wire.json();
    assert_eq!(wire.status, 200, "{body}");
    assert_eq!(body["entries"]["payments"]["status"], "Degraded", "{body}");
    assert_eq!(Health::PROBES[0].name, "payments");
    assert_eq!(
        Health::PROBES[0].settings.timeout,
        Some(Duration::from_millis(300))
    );
}

#[actix_web::test]
async fn a_fn_probe_registered_in_code_answers_in_ready_under_its_deadline() {
    let registry = HealthRegistry::new();
    registry.add(slow {}.registration()).unwrap();
    let server = serve(map_zb_health(registry));

    let wire = request(server.addr, "GET", "/health/ready").await;
    let body = wire.json();
    // The attribute's 100 ms deadline, not the fn's 30 s sleep.
    assert_eq!(wire.status, 503, "{body}");
    assert_eq!(body["entries"]["slow"]["status"], "Unhealthy", "{body}");
    assert_eq!(
        body["entries"]["slow"]["description"], "timed out after 100 ms",
        "{body}"
    );
}
