//! Dependencies between probes (`depends_on`, R21/R22) over a real
//! socket: a manifest's dependent is skipped while its dependency fails,
//! never called behind a hung one, and runs again once it recovers. That
//! a hung dependency's tier answers at its deadline, once, is measured on
//! tokio's paused clock (`executor::tests::dependencies`).

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use support::{request, serve, until_status};
use zb_health::prelude::{HealthRegistry, ProbeOutcome, ProbeResult};

/// How the shared database behaves: healthy, failing, or hanging.
const HEALTHY: u8 = 0;
const FAILING: u8 = 1;
const HANGING: u8 = 2;

/// The database the service needs; its mode is the test's switch.
#[zb_health::prelude::zb_health(name = "database", tags = [ready], timeout = "300ms")]
struct Database {
    mode: Arc<AtomicU8>,
    calls: Arc<AtomicUsize>,
}

impl zb_health::prelude::Probe for Database {
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
#[zb_health::prelude::zb_health(name = "orders", tags = [ready], timeout = "300ms")]
struct Orders {
    calls: Arc<AtomicUsize>,
}

impl zb_health::prelude::Probe for Orders {
    async fn check(&self) -> ProbeOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(ProbeResult::healthy())
    }
}

zb_health::prelude::manifest!(
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

/// `depends_on` under a shared dependency's fail-open, as
/// `spec/conflicts.md` resolves it. The other two nodes of a three-node
/// cluster, faked: how many of them fail `database` (`peers_failing`), or
/// no view at all; this node's verdict as it publishes it.
mod shared_outage {
    use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use zb_health::prelude::{
        HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, Tag, from_fn,
    };
    use zb_health::shared::{SharedVerdicts, Tally};

    use super::{FAILING, HEALTHY};

    #[derive(Default)]
    struct TwoPeers {
        peers_failing: AtomicU32,
        no_view: AtomicBool,
        own: Mutex<Vec<(String, bool)>>,
    }

    impl SharedVerdicts for TwoPeers {
        fn publish(&self, probe: &str, failing: bool) {
            let mut own = self.own.lock().unwrap();
            own.retain(|(p, _)| p != probe);
            own.push((probe.to_owned(), failing));
        }

        fn tally(&self, probe: &str) -> Option<Tally> {
            if self.no_view.load(Ordering::SeqCst) {
                return None;
            }
            let own = self.own.lock().unwrap();
            let here = own.iter().any(|(p, f)| p == probe && *f);
            Some(Tally {
                failing: self.peers_failing.load(Ordering::SeqCst) + u32::from(here),
                reporting: 3,
            })
        }
    }

    /// What the other nodes say.
    #[derive(Debug, Clone, Copy)]
    enum Cluster {
        NoView,
        /// No peer fails: 1 of 3 with this node.
        Minority,
        /// Both peers fail: 3 of 3 with this node.
        Majority,
    }

    /// What the database does on this node.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Database {
        Healthy,
        /// One failed run, which `failure_threshold: 2` holds back.
        HeldBack,
        Failing,
    }

    /// A node: `database` (shared, `failure_threshold: 2`), `orders`
    /// depending on it and `invoices` depending on `orders`; the
    /// database's switch and the dependents' call counter.
    fn node(cluster: Cluster) -> (HealthRegistry, Arc<AtomicU8>, Arc<AtomicU32>) {
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        let peers = Arc::new(TwoPeers::default());
        match cluster {
            Cluster::NoView => peers.no_view.store(true, Ordering::SeqCst),
            Cluster::Minority => {}
            Cluster::Majority => peers.peers_failing.store(2, Ordering::SeqCst),
        }
        registry.set_shared_verdicts(peers);
        let mode = Arc::new(AtomicU8::new(HEALTHY));
        let calls = Arc::new(AtomicU32::new(0));
        let m = mode.clone();
        let database = from_fn(move || {
            let failing = m.load(Ordering::SeqCst) == FAILING;
            async move {
                match failing {
                    true => Ok(ProbeResult::unhealthy("connection refused")),
                    false => Ok(ProbeResult::healthy()),
                }
            }
        });
        let dependent = |calls: Arc<AtomicU32>| {
            from_fn(move || {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Ok(ProbeResult::healthy()) }
            })
        };
        registry
            .add_all([
                ProbeRegistration::new("database", database)
                    .shared()
                    .failure_threshold(2),
                ProbeRegistration::new("orders", dependent(calls.clone())).depends_on(["database"]),
                ProbeRegistration::new("invoices", dependent(calls.clone())).depends_on(["orders"]),
            ])
            .unwrap();
        (registry, mode, calls)
    }

    /// Each entry's status and description, in order.
    type Seen = Vec<(HealthStatus, String)>;

    /// What one ready answer shows after `database` is brought to `state`,
    /// and whether the dependents ran for it.
    async fn answer(
        registry: &HealthRegistry,
        mode: &AtomicU8,
        calls: &AtomicU32,
        state: Database,
    ) -> (Seen, bool) {
        match state {
            Database::Healthy => mode.store(HEALTHY, Ordering::SeqCst),
            Database::HeldBack => {
                // A healthy run first: the held run is the streak's first.
                mode.store(HEALTHY, Ordering::SeqCst);
                registry.check(Tag::Ready).await;
                mode.store(FAILING, Ordering::SeqCst);
            }
            Database::Failing => {
                mode.store(FAILING, Ordering::SeqCst);
                registry.check(Tag::Ready).await;
            }
        }
        let called = calls.load(Ordering::SeqCst);
        let report = registry.check(Tag::Ready).await;
        let seen = report
            .entries
            .iter()
            .map(|e| (e.status, e.description.as_deref().unwrap_or("").to_owned()))
            .collect();
        (seen, calls.load(Ordering::SeqCst) > called)
    }

    fn seen(entries: [(HealthStatus, &str); 3]) -> Seen {
        entries.iter().map(|(s, d)| (*s, (*d).to_owned())).collect()
    }

    /// Every combination of the cluster's view and this node's database,
    /// answered five times on a fresh node: a dependent runs exactly
    /// when its dependency's run did not fail here (a held-back failure
    /// is no failure), and is skipped whenever it did, whether or not
    /// the shared comparison opened the dependency's entry; in a shared
    /// outage the skipped entries are `Degraded` too, so skipping does
    /// not undo the fail-open.
    #[tokio::test(start_paused = true)]
    async fn a_dependent_is_skipped_whenever_its_shared_dependency_failed_here() {
        use HealthStatus::{Degraded, Healthy, Unhealthy};
        for cluster in [Cluster::NoView, Cluster::Minority, Cluster::Majority] {
            for state in [Database::Healthy, Database::HeldBack, Database::Failing] {
                let expected = match (state, cluster) {
                    (Database::Healthy, _) => seen([(Healthy, ""), (Healthy, ""), (Healthy, "")]),
                    (Database::HeldBack, _) => {
                        seen([(Healthy, "1 of 2 failures"), (Healthy, ""), (Healthy, "")])
                    }
                    (Database::Failing, Cluster::Majority) => seen([
                        (Degraded, "failing on 3 of 3 nodes"),
                        (Degraded, "skipped: database failing on 3 of 3 nodes"),
                        (Degraded, "skipped: orders failing on 3 of 3 nodes"),
                    ]),
                    (Database::Failing, _) => seen([
                        (Unhealthy, "connection refused"),
                        (Unhealthy, "skipped: database failing"),
                        (Unhealthy, "skipped: orders failing"),
                    ]),
                };
                let (registry, mode, calls) = node(cluster);
                for round in 0..5 {
                    let (answer, ran) = answer(&registry, &mode, &calls, state).await;
                    assert_eq!(answer, expected, "{cluster:?}, {state:?}, round {round}");
                    assert_eq!(
                        ran,
                        state != Database::Failing,
                        "{cluster:?}, {state:?}: the dependents ran"
                    );
                }
            }
        }
    }

    /// A background dependent reads its dependency's latest entry: in a
    /// shared outage its schedule skips it as `Degraded` too.
    #[tokio::test(start_paused = true)]
    async fn a_background_dependent_of_a_shared_outage_is_skipped_as_degraded() {
        use HealthStatus::{Degraded, Unhealthy};
        for (cluster, expected) in [
            (
                Cluster::Majority,
                (Degraded, "skipped: database failing on 3 of 3 nodes"),
            ),
            (Cluster::Minority, (Unhealthy, "skipped: database failing")),
        ] {
            let (registry, mode, calls) = node(cluster);
            let c = calls.clone();
            registry
                .add(
                    ProbeRegistration::new(
                        "reports",
                        from_fn(move || {
                            c.fetch_add(1, Ordering::SeqCst);
                            async { Ok(ProbeResult::healthy()) }
                        }),
                    )
                    .refresh(Duration::from_secs(1))
                    .depends_on(["database"]),
                )
                .unwrap();
            registry.check(Tag::Ready).await;
            mode.store(FAILING, Ordering::SeqCst);
            for _ in 0..3 {
                registry.check(Tag::Ready).await;
                tokio::time::sleep(Duration::from_millis(1000)).await;
            }
            let called = calls.load(Ordering::SeqCst);
            registry.check(Tag::Ready).await;
            tokio::time::sleep(Duration::from_millis(1000)).await;
            let report = registry.check(Tag::Ready).await;
            let e = report.entry("reports").unwrap();
            assert_eq!(
                (e.status, e.description.as_deref().unwrap_or("")),
                expected,
                "{cluster:?}"
            );
            assert_eq!(
                calls.load(Ordering::SeqCst),
                called,
                "{cluster:?}: not called"
            );
        }
    }
}
