//! Dependencies between probes (`depends_on`, issue 18 §5) over a real
//! socket: a manifest's dependent is skipped while its dependency fails,
//! never called behind a hung one, and runs again once it recovers. That
//! a hung dependency's tier answers at its deadline, once, is measured on
//! tokio's paused clock (`executor::tests::dependencies`).

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use support::{request, serve, until_status};
use zb_health::{HealthRegistry, ProbeOutcome, ProbeResult};

/// How the shared database behaves: healthy, failing, or hanging.
const HEALTHY: u8 = 0;
const FAILING: u8 = 1;
const HANGING: u8 = 2;

/// The database the service needs; its mode is the test's switch.
#[zb_health::zb_health(name = "database", tags = [ready], timeout = "300ms")]
struct Database {
    mode: Arc<AtomicU8>,
    calls: Arc<AtomicUsize>,
}

impl zb_health::Probe for Database {
    async fn check(&self) -> ProbeOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match self.mode.load(Ordering::SeqCst) {
            HEALTHY => Ok(ProbeResult::healthy()),
            FAILING => Ok(ProbeResult::unhealthy("connection refused")),
            _ => std::future::pending().await,
        }
    }
}

/// A check that needs the database: its calls are counted.
#[zb_health::zb_health(name = "orders", tags = [ready], timeout = "300ms")]
struct Orders {
    calls: Arc<AtomicUsize>,
}

impl zb_health::Probe for Orders {
    async fn check(&self) -> ProbeOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(ProbeResult::healthy())
    }
}

zb_health::manifest!(
    Shop,
    yaml = r#"
service: shop
probes:
  - { name: database, kind: custom, type: crate::Database }
  - { name: orders, kind: custom, type: crate::Orders, depends_on: [database] }
"#
);

/// The shop installed into its own registry and served: the database's
/// switch and both probes' call counters.
struct Running {
    server: support::Server,
    mode: Arc<AtomicU8>,
    database_calls: Arc<AtomicUsize>,
    orders_calls: Arc<AtomicUsize>,
}

fn shop() -> Running {
    let mode = Arc::new(AtomicU8::new(HEALTHY));
    let database_calls = Arc::new(AtomicUsize::new(0));
    let orders_calls = Arc::new(AtomicUsize::new(0));
    let registry = HealthRegistry::new();
    let installed = Shop::install_into(
        &registry,
        ShopDeps {
            database: Database {
                mode: mode.clone(),
                calls: database_calls.clone(),
            },
            orders: Orders {
                calls: orders_calls.clone(),
            },
        },
    )
    .unwrap();
    Running {
        server: serve(installed.server.endpoints().clone()),
        mode,
        database_calls,
        orders_calls,
    }
}

#[actix_web::test]
async fn a_failing_dependency_skips_its_dependent_until_it_recovers() {
    let shop = shop();
    let addr = shop.server.addr;
    let ready = until_status(addr, "/health/ready", 200).await.json();
    assert_eq!(ready["entries"]["orders"]["status"], "Healthy");
    let called = shop.orders_calls.load(Ordering::SeqCst);
    assert!(called >= 1);

    shop.mode.store(FAILING, Ordering::SeqCst);
    let ready = until_status(addr, "/health/ready", 503).await.json();
    let orders = &ready["entries"]["orders"];
    assert_eq!(orders["status"], "Unhealthy");
    assert_eq!(orders["description"], "skipped: database failing");
    assert_eq!(orders["durationMs"], 0.0);
    assert_eq!(ready["entries"]["database"]["status"], "Unhealthy");
    for _ in 0..5 {
        let again = request(addr, "GET", "/health/ready").await;
        assert_eq!(again.status, 503);
    }
    assert_eq!(
        shop.orders_calls.load(Ordering::SeqCst),
        called,
        "the dependent is not called while the database fails"
    );

    shop.mode.store(HEALTHY, Ordering::SeqCst);
    let ready = until_status(addr, "/health/ready", 200).await.json();
    assert_eq!(ready["entries"]["orders"]["status"], "Healthy");
    assert!(shop.orders_calls.load(Ordering::SeqCst) > called);
}

#[actix_web::test]
async fn a_hung_dependency_never_calls_its_dependent_and_answers_within_its_deadline() {
    let shop = shop();
    let addr = shop.server.addr;
    shop.mode.store(HANGING, Ordering::SeqCst);
    for _ in 0..4 {
        let ready = request(addr, "GET", "/health/ready").await;
        assert_eq!(ready.status, 503);
        let body = ready.json();
        assert_eq!(
            body["entries"]["database"]["description"],
            "timed out after 300 ms"
        );
        assert_eq!(
            body["entries"]["orders"]["description"],
            "skipped: database failing"
        );
    }
    assert_eq!(shop.orders_calls.load(Ordering::SeqCst), 0);
    assert_eq!(shop.database_calls.load(Ordering::SeqCst), 4);
}
