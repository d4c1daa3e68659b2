//! An answer shaped by a query is that response alone (issue 39 §1,
//! `spec/tiers.md`, verbose and exclude), over real sockets on 127.0.0.1:
//! `?exclude=`, `?verbose` and a per-probe path change no tier metric, no
//! history and no publisher, and no anonymous caller can leave the
//! active-node decision out of a standby's `active`.
//!
//! One test in its own binary: the tier gauge is a process-wide metric,
//! which another test's answers would move.

mod support;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use serde_json::Value;
use support::{fixed, request};
use zb_health::cluster::{
    ActiveNodeProbe, ClusterActiveNode, ClusterState, InMemoryClusterView, Member, MemberStatus,
};
use zb_health::observe::TIER_STATUS;
use zb_health::prelude::{
    HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, TagSet, ZbHealth,
};
use zb_health::publish::{Transition, TransitionKind, TransitionPublisher};
use zb_health::spec::Disclosure;

/// How long the test waits for a condition before it fails.
const PATIENCE: Duration = Duration::from_secs(20);

/// Keeps every tier transition it is handed, as (tier, to).
#[derive(Clone, Default)]
struct Kept(Arc<Mutex<Vec<(String, String)>>>);

impl TransitionPublisher for Kept {
    fn publish<'a>(
        &'a self,
        batch: &'a [Transition],
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>> {
        let seen: Vec<(String, String)> = batch
            .iter()
            .filter(|t| t.kind == TransitionKind::Tier)
            .map(|t| (t.name.to_string(), t.to.as_str().to_owned()))
            .collect();
        self.0.lock().unwrap().extend(seen);
        Box::pin(async { Ok(()) })
    }
}

/// The last value of `zb_health_tier_status{tier}` the recorder holds.
fn tier_gauge(snapshotter: &Snapshotter, gauges: &mut HashMap<String, f64>, tier: &str) -> f64 {
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let key = key.key();
        if let (true, DebugValue::Gauge(v)) = (key.name() == TIER_STATUS, value) {
            for label in key.labels() {
                gauges.insert(label.value().to_owned(), v.into_inner());
            }
        }
    }
    gauges[tier]
}

/// The history's record of `tier`: its status and code.
fn history(registry: &HealthRegistry, tier: &str) -> (String, u64) {
    let doc: Value = serde_json::from_str(&registry.history_json(Disclosure::Full, true)).unwrap();
    let t = &doc["tiers"][tier];
    (
        t["status"].as_str().unwrap().to_owned(),
        t["code"].as_u64().unwrap(),
    )
}

#[actix_web::test]
async fn a_query_answers_its_caller_alone_and_the_active_node_cannot_be_excluded() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::set_global_recorder(recorder).unwrap();
    let mut gauges = HashMap::new();

    // A standby: this node alone in a cluster that expects five.
    let view = Arc::new(InMemoryClusterView::new());
    view.set(ClusterState {
        self_address: "a:1".into(),
        members: vec![Member::new("a:1", MemberStatus::Up, 1)],
    });
    let registry = HealthRegistry::new();
    registry.enable_history();
    let kept = Kept::default();
    registry.set_transition_window(Duration::from_millis(10));
    registry.add_transition_publisher(kept.clone());
    registry
        .add(fixed("database", HealthStatus::Healthy))
        .unwrap();
    let cache_up = Arc::new(AtomicBool::new(false));
    let up = cache_up.clone();
    registry
        .add(ProbeRegistration::new(
            "cache",
            zb_health::prelude::from_fn(move || {
                let up = up.load(Ordering::SeqCst);
                async move {
                    Ok(match up {
                        true => ProbeResult::healthy(),
                        false => ProbeResult::unhealthy("cache unreachable"),
                    })
                }
            }),
        ))
        .unwrap();
    registry
        .add(
            ProbeRegistration::new(
                "active-node",
                ActiveNodeProbe::new(view, ClusterActiveNode::unscoped().expected_size(5)),
            )
            .tags(TagSet::ACTIVE),
        )
        .unwrap();
    // Anonymous callers on the application port, at a level that names
    // checks (so the headers and warnings are visible).
    let server = support::serve(
        ZbHealth::new(registry.clone())
            .disclosure(Disclosure::Names)
            .build()
            .unwrap(),
    );

    // The plain answers: recorded.
    assert_eq!(
        request(server.addr, "GET", "/health/ready").await.status,
        503
    );
    assert_eq!(
        request(server.addr, "GET", "/health/active").await.status,
        503
    );
    assert_eq!(tier_gauge(&snapshotter, &mut gauges, "ready"), 0.0);
    assert_eq!(tier_gauge(&snapshotter, &mut gauges, "active"), 0.0);
    assert_eq!(history(&registry, "ready"), ("Unhealthy".into(), 503));
    assert_eq!(history(&registry, "active"), ("Unhealthy".into(), 503));

    // The active-node decision always counts: a standby answers no 200,
    // whoever asks and however.
    let wire = request(server.addr, "GET", "/health/active?exclude=active-node").await;
    assert_eq!(wire.status, 503);
    assert_eq!(wire.header("health-not-excluded"), Some("active-node"));
    assert_eq!(wire.header("health-excluded"), None);
    assert_eq!(support::entry_names(&wire.json()), ["active-node"]);
    let wire = request(
        server.addr,
        "GET",
        "/health/active?verbose&exclude=active-node",
    )
    .await;
    assert_eq!(wire.status, 503);
    assert_eq!(
        wire.text(),
        "[-]active-node failed: reason withheld\nwarn: some health checks cannot be excluded: \"active-node\" is always counted\nactive check failed\n"
    );

    // Answers that differ from the tier's: `?exclude=` of a failing check,
    // `?verbose` with it, and a healthy probe's own path all answer 200...
    let wire = request(server.addr, "GET", "/health/ready?exclude=cache").await;
    assert_eq!(
        (wire.status, wire.header("health-excluded")),
        (200, Some("cache"))
    );
    let wire = request(server.addr, "GET", "/health/ready?verbose&exclude=cache").await;
    assert_eq!(wire.status, 200);
    assert_eq!(
        request(server.addr, "GET", "/health/ready/database")
            .await
            .status,
        200
    );

    // ... and change nothing the node reports: no gauge, no history.
    assert_eq!(tier_gauge(&snapshotter, &mut gauges, "ready"), 0.0);
    assert_eq!(tier_gauge(&snapshotter, &mut gauges, "active"), 0.0);
    assert_eq!(history(&registry, "ready"), ("Unhealthy".into(), 503));
    assert_eq!(history(&registry, "active"), ("Unhealthy".into(), 503));

    // Nor a transition: the cache comes back and the next plain answer is
    // the ready tier's first 200, the one `Healthy` the publishers get
    // (the queue is in order, so a query's would have come before it).
    cache_up.store(true, Ordering::SeqCst);
    assert_eq!(
        request(server.addr, "GET", "/health/ready").await.status,
        200
    );
    assert_eq!(tier_gauge(&snapshotter, &mut gauges, "ready"), 2.0);
    assert_eq!(history(&registry, "ready"), ("Healthy".into(), 200));
    let healthy = |t: &(String, String)| t.0 == "ready" && t.1 == "Healthy";
    let started = Instant::now();
    while !kept.0.lock().unwrap().iter().any(healthy) {
        assert!(
            started.elapsed() < PATIENCE,
            "the plain 200 was never published"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let published = kept.0.lock().unwrap().clone();
    assert_eq!(
        published.iter().filter(|t| healthy(t)).count(),
        1,
        "a query's answer was published: {published:?}"
    );
    assert!(
        !published
            .iter()
            .any(|t| t.0 == "active" && t.1 == "Healthy"),
        "{published:?}"
    );
}
