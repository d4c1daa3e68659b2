//! The kept body of a cached tier: reused while nothing changed, rendered
//! again on every change (a new result, a new probe, the drain), per
//! endpoint.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::{TestRequest, init_service};
use actix_web::{App, web::Bytes};
use zb_health_spec::Disclosure;

use crate::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, ZbHealth, from_fn};

/// A probe whose description names its run: `run 1`, `run 2`…
fn counted(name: &'static str) -> (ProbeRegistration, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let probe = from_fn(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        async move { Ok(ProbeResult::healthy().with_description(format!("run {n}"))) }
    });
    (ProbeRegistration::new(name, probe), runs)
}

async fn get(
    app: &impl Service<actix_http::Request, Response = ServiceResponse, Error = actix_web::Error>,
    path: &str,
) -> (u16, Bytes) {
    let response = app
        .call(TestRequest::get().uri(path).to_request())
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    // The body's own bytes, not a copy, so a reused body is seen as one.
    let body = match response.into_body().try_into_bytes() {
        Ok(bytes) => bytes,
        Err(_) => panic!("a body of bytes"),
    };
    (status, body)
}

/// A registry whose orchestrator notices changes within an hour, so
/// that the long caches below fit it (R19).
fn detection_time_of_an_hour() -> HealthRegistry {
    HealthRegistry::builder()
        .detection_time(Duration::from_secs(3600))
        .build()
}

#[actix_web::test]
async fn a_cached_tier_serves_its_last_body_until_a_change() {
    let registry = detection_time_of_an_hour();
    let (db, runs) = counted("db");
    let _db = registry
        .add(db.cache(Duration::from_secs(600)))
        .expect("registered");
    let endpoints = ZbHealth::new(registry.clone()).build().expect("valid");
    let app = init_service(App::new().service(endpoints)).await;

    // The first answer runs the probe; the second, all cached, is kept.
    let (status, _) = get(&app, "/health/ready").await;
    assert_eq!(status, 200);
    let (_, kept) = get(&app, "/health/ready").await;
    let (_, again) = get(&app, "/health/ready").await;
    // The very bytes of the kept answer: nothing was rendered again.
    assert_eq!(again.as_ptr(), kept.as_ptr());
    assert_eq!(again, kept);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // A new probe is a change: the body is rendered with it.
    let (cache, _) = counted("cache");
    let _cache = registry
        .add(cache.cache(Duration::from_secs(600)))
        .expect("registered");
    let (_, with_cache) = get(&app, "/health/ready").await;
    let text = std::str::from_utf8(&with_cache).expect("utf-8");
    assert!(text.contains(r#""cache":"#), "{text}");

    // The drain's entry comes first although every probe is cached.
    registry.lifecycle().begin_drain();
    let (status, draining) = get(&app, "/health/ready").await;
    assert_eq!(status, 503);
    let text = std::str::from_utf8(&draining).expect("utf-8");
    assert!(text.contains(r#""shutdown":"#), "{text}");
}

#[actix_web::test]
async fn a_background_tier_is_kept_too() {
    let registry = detection_time_of_an_hour();
    let (db, _) = counted("db");
    let _db = registry
        .add(db.refresh(Duration::from_secs(600)))
        .expect("registered");
    let endpoints = ZbHealth::new(registry).build().expect("valid");
    let app = init_service(App::new().service(endpoints)).await;

    // The schedule's first run lands on its own; until then the entry
    // fails (no result yet), which is never kept.
    let deadline = Instant::now() + Duration::from_secs(10);
    let kept = loop {
        let (status, body) = get(&app, "/health/ready").await;
        if status == 200 {
            break body;
        }
        assert!(Instant::now() < deadline, "no background result");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let (_, again) = get(&app, "/health/ready").await;
    let (_, third) = get(&app, "/health/ready").await;
    // Kept from the first answer made of the background result.
    assert_eq!(third.as_ptr(), again.as_ptr());
    assert_eq!(again, kept);
}

#[actix_web::test]
async fn an_expired_result_is_rendered_again() {
    let registry = HealthRegistry::new();
    let (db, _) = counted("db");
    let _db = registry
        .add(db.cache(Duration::from_millis(50)))
        .expect("registered");
    let endpoints = ZbHealth::new(registry).build().expect("valid");
    let app = init_service(App::new().service(endpoints)).await;

    let (_, first) = get(&app, "/health/ready").await;
    assert!(
        std::str::from_utf8(&first)
            .expect("utf-8")
            .contains("run 1")
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, body) = get(&app, "/health/ready").await;
        if std::str::from_utf8(&body).expect("utf-8").contains("run 2") {
            break;
        }
        assert!(Instant::now() < deadline, "the cache never expired");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[actix_web::test]
async fn a_probe_path_goes_through_the_probes_policy() {
    let registry = detection_time_of_an_hour();
    let (db, db_runs) = counted("db");
    let (cache, cache_runs) = counted("cache");
    let _probes = registry
        .add_all([db.cache(Duration::from_secs(600)), cache])
        .expect("registered");
    let endpoints = ZbHealth::new(registry).build().expect("valid");
    let app = init_service(App::new().service(endpoints)).await;

    // The tier runs both; the probe path then serves `db`'s cached
    // result and runs nothing, not even `cache`.
    assert_eq!(get(&app, "/health/ready").await.0, 200);
    for _ in 0..2 {
        let (status, body) = get(&app, "/health/ready/db").await;
        assert_eq!(status, 200);
        let text = std::str::from_utf8(&body).expect("utf-8");
        assert!(
            text.contains("run 1") && !text.contains(r#""cache":"#),
            "{text}"
        );
    }
    assert_eq!(db_runs.load(Ordering::SeqCst), 1);
    assert_eq!(cache_runs.load(Ordering::SeqCst), 1);
    assert_eq!(get(&app, "/health/ready/nothing").await.0, 404);
    assert_eq!(get(&app, "/healthz/db").await.0, 404);
}

#[actix_web::test]
async fn cluster_ready_is_shown_on_the_membership_probes_path_only() {
    let registry = HealthRegistry::new();
    let (db, _) = counted("db");
    let (members, _) = counted("members");
    let _probes = registry.add_all([db, members]).expect("registered");
    let endpoints = ZbHealth::new(registry)
        .cluster_ready("members")
        .build()
        .expect("valid");
    let app = init_service(App::new().service(endpoints)).await;
    let (_, body) = get(&app, "/health/ready/members").await;
    let text = std::str::from_utf8(&body).expect("utf-8");
    assert!(text.contains(r#""clusterReady":true"#), "{text}");
    let (_, body) = get(&app, "/health/ready/db").await;
    let text = std::str::from_utf8(&body).expect("utf-8");
    assert!(!text.contains("clusterReady"), "{text}");
}

#[actix_web::test]
async fn each_disclosure_level_keeps_its_own_body() {
    let registry = detection_time_of_an_hour();
    let (db, _) = counted("db");
    let _db = registry
        .add(db.cache(Duration::from_secs(600)))
        .expect("registered");
    let full = ZbHealth::new(registry.clone()).build().expect("valid");
    let names = ZbHealth::new(registry)
        .disclosure(Disclosure::Names)
        .ready_path("/names/ready")
        .active_path("/names/active")
        .live_path("/names/live")
        .started_path("/names/started")
        .build()
        .expect("valid");
    let app = init_service(App::new().service(full).service(names)).await;
    for _ in 0..2 {
        let (_, full) = get(&app, "/health/ready").await;
        let (_, names) = get(&app, "/names/ready").await;
        assert!(std::str::from_utf8(&full).expect("utf-8").contains("run 1"));
        assert!(
            !std::str::from_utf8(&names)
                .expect("utf-8")
                .contains("run 1")
        );
    }
}
