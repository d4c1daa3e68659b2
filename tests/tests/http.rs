//! The three tiers over HTTP (ZB-1, ZB-3, ZB-5, BE-HLTH-009): once through
//! actix's test utilities and once over a real socket on 127.0.0.1.

mod support;

use actix_web::http::StatusCode;
use actix_web::{App, test as actix_test};
use serde_json::{Value, json};
use support::{assert_canonical, fixed, registry, request, serve};
use zb_health::prelude::{HealthRegistry, HealthStatus, ZbHealth, map_zb_health};
use zb_health::spec::{EndpointPaths, Rule};
use zb_health::writer::{canonical_json, write_json};

use HealthStatus::{Degraded, Healthy, Unhealthy};

/// (ready probe, active probe) → (ready code, active code, live code).
const CODES: [(HealthStatus, HealthStatus, u16, u16); 3] = [
    (Healthy, Healthy, 200, 200),
    (Degraded, Degraded, 200, 200),
    (Unhealthy, Unhealthy, 503, 503),
];

#[actix_web::test]
async fn status_codes_per_tier_through_actix_test() {
    for (ready, active, ready_code, active_code) in CODES {
        let app =
            actix_test::init_service(App::new().service(map_zb_health(registry(ready, active))))
                .await;
        for (path, code, status) in [
            ("/health/ready", ready_code, ready),
            ("/health/active", active_code, active),
            ("/healthz", 200, Healthy),
        ] {
            let res = actix_test::call_service(
                &app,
                actix_test::TestRequest::get().uri(path).to_request(),
            )
            .await;
            assert_eq!(res.status().as_u16(), code, "{path} with {status:?}");
            let body: Value = actix_test::read_body_json(res).await;
            assert_eq!(body["status"], status.as_str(), "{path}");
            assert_canonical(&body);
        }
    }
}

#[actix_web::test]
async fn status_codes_per_tier_over_a_real_socket() {
    for (ready, active, ready_code, active_code) in CODES {
        let server = serve(map_zb_health(registry(ready, active)));
        let r = request(server.addr, "GET", "/health/ready").await;
        assert_eq!(r.status, ready_code);
        assert_eq!(r.json()["entries"]["database"]["status"], ready.as_str());
        let a = request(server.addr, "GET", "/health/active").await;
        assert_eq!(a.status, active_code);
        assert_eq!(
            a.json()["entries"]["active-node"]["status"],
            active.as_str()
        );
        let l = request(server.addr, "GET", "/healthz").await;
        assert_eq!(l.status, 200, "live is 200 even when ready is {ready:?}");
        for w in [&r, &a, &l] {
            assert_canonical(&w.json());
        }
    }
}

/// ZB-1.1: each tier runs the probes of its own tag only. A failing
/// active-tagged probe never reaches `ready`, a failing ready-tagged probe
/// never reaches `active`, and `live` runs neither.
#[actix_web::test]
async fn each_tier_runs_only_the_probes_of_its_own_tag() {
    let names = |body: &Value| -> Vec<String> {
        body["entries"]
            .as_object()
            .expect("entries")
            .keys()
            .cloned()
            .collect()
    };
    for (ready, active, ready_code, active_code) in [
        (Healthy, Unhealthy, 200, 503),
        (Unhealthy, Healthy, 503, 200),
    ] {
        let server = serve(map_zb_health(registry(ready, active)));
        let r = request(server.addr, "GET", "/health/ready").await;
        assert_eq!(r.status, ready_code, "ready follows its own probe only");
        assert_eq!(names(&r.json()), ["database"]);
        let a = request(server.addr, "GET", "/health/active").await;
        assert_eq!(a.status, active_code, "active follows its own probe only");
        assert_eq!(names(&a.json()), ["active-node"]);
        let l = request(server.addr, "GET", "/healthz").await;
        assert_eq!(l.status, 200);
        assert!(names(&l.json()).is_empty());
    }
}

#[actix_web::test]
async fn live_is_always_200_with_no_entries() {
    let server = serve(map_zb_health(registry(Unhealthy, Unhealthy)));
    let l = request(server.addr, "GET", "/healthz").await;
    assert_eq!(l.status, 200);
    assert_eq!(
        l.json(),
        json!({"status": "Healthy", "totalDurationMs": 0, "entries": {}})
    );
}

#[actix_web::test]
async fn other_methods_get_405_with_allow_over_a_real_socket() {
    let server = serve(map_zb_health(registry(Healthy, Healthy)));
    for path in ["/health/ready", "/health/active", "/healthz"] {
        for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
            let r = request(server.addr, method, path).await;
            assert_eq!(r.status, 405, "{method} {path}");
            assert_eq!(r.header("allow"), Some("GET, HEAD"), "{method} {path}");
            assert_eq!(r.header("cache-control"), Some("no-store"));
        }
    }
}

#[actix_web::test]
async fn other_methods_get_405_through_actix_test() {
    let app =
        actix_test::init_service(App::new().service(map_zb_health(HealthRegistry::new()))).await;
    let res = actix_test::call_service(
        &app,
        actix_test::TestRequest::post()
            .uri("/health/ready")
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(res.headers().get("allow").unwrap(), "GET, HEAD");
}

#[actix_web::test]
async fn head_answers_like_get_without_a_body() {
    let server = serve(map_zb_health(registry(Healthy, Unhealthy)));
    for (path, code) in [
        ("/health/ready", 200),
        ("/health/active", 503),
        ("/healthz", 200),
    ] {
        let get = request(server.addr, "GET", path).await;
        let head = request(server.addr, "HEAD", path).await;
        assert_eq!(head.status, code, "{path}");
        assert!(
            head.body.is_empty(),
            "HEAD {path} sent a body: {:?}",
            head.body
        );
        assert_eq!(head.header("content-type"), Some("application/json"));
        assert_eq!(head.header("cache-control"), Some("no-store"));
        assert!(!get.body.is_empty());
    }
}

#[actix_web::test]
async fn every_answer_is_json_and_never_cached() {
    let server = serve(map_zb_health(registry(Degraded, Healthy)));
    for path in ["/health/ready", "/health/active", "/healthz"] {
        let r = request(server.addr, "GET", path).await;
        assert_eq!(r.header("content-type"), Some("application/json"), "{path}");
        assert_eq!(r.header("cache-control"), Some("no-store"), "{path}");
        let len: usize = r.header("content-length").unwrap().parse().unwrap();
        assert_eq!(len, r.body.len());
    }
}

#[actix_web::test]
async fn the_body_has_the_canonical_shape() {
    let server = serve(map_zb_health(registry(Healthy, Healthy)));
    let ready = request(server.addr, "GET", "/health/ready").await.json();
    assert!(ready["totalDurationMs"].is_u64(), "{ready}");
    let db = &ready["entries"]["database"];
    assert_eq!(
        db["description"],
        Value::Null,
        "a missing description is null"
    );
    assert!(db["durationMs"].is_number());
    assert!(
        db.get("data").is_none(),
        "data appears only when a probe gives it"
    );
    let active = request(server.addr, "GET", "/health/active").await.json();
    let node = &active["entries"]["active-node"];
    assert_eq!(node["description"], "oldest Up member");
    assert_eq!(node["data"]["activeNode"], "127.0.0.1:7000");
    assert_canonical(&active);
}

#[actix_web::test]
async fn entries_keep_registration_order() {
    let reg = HealthRegistry::new();
    for name in ["zeta", "alpha", "mid", "beta"] {
        reg.add(fixed(name, Healthy)).unwrap();
    }
    let server = serve(map_zb_health(reg));
    let body = String::from_utf8(request(server.addr, "GET", "/health/ready").await.body).unwrap();
    let pos: Vec<usize> = ["zeta", "alpha", "mid", "beta"]
        .iter()
        .map(|n| body.find(&format!("\"{n}\"")).unwrap())
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{body}");
}

#[actix_web::test]
async fn paths_and_writer_can_be_overridden() {
    let endpoints = ZbHealth::new(registry(Unhealthy, Healthy))
        .paths(EndpointPaths::be_hlth_009())
        .writer(
            |report: &zb_health::report::HealthReport, mut res: actix_web::HttpResponseBuilder| {
                res.content_type("application/json").json(json!({
                    "status": if report.status.is_serving() { "pass" } else { "fail" }
                }))
            },
        )
        .build()
        .unwrap();
    let server = serve(endpoints);
    let r = request(server.addr, "GET", "/healthz/ready").await;
    assert_eq!((r.status, r.json()), (503, json!({"status": "fail"})));
    let l = request(server.addr, "GET", "/healthz/live").await;
    assert_eq!((l.status, l.json()), (200, json!({"status": "pass"})));
    assert_eq!(
        request(server.addr, "GET", "/health/ready").await.status,
        404
    );
}

/// BE-HLTH-009 on its own preset paths: every method but GET (and HEAD,
/// the recorded deviation) gets 405 with `Allow`, over a real socket.
#[actix_web::test]
async fn the_be_hlth_009_paths_refuse_other_methods_and_answer_head_like_get() {
    let endpoints = ZbHealth::new(registry(Unhealthy, Healthy))
        .paths(EndpointPaths::be_hlth_009())
        .build()
        .unwrap();
    let server = serve(endpoints);
    for (path, code) in [("/healthz/ready", 503), ("/healthz/live", 200)] {
        for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
            let r = request(server.addr, method, path).await;
            assert_eq!(r.status, 405, "{method} {path}");
            assert_eq!(r.header("allow"), Some("GET, HEAD"), "{method} {path}");
        }
        let get = request(server.addr, "GET", path).await;
        let head = request(server.addr, "HEAD", path).await;
        assert_eq!((get.status, head.status), (code, code), "{path}");
        assert!(head.body.is_empty() && !get.body.is_empty(), "{path}");
    }
}

#[actix_web::test]
async fn the_canonical_writer_serves_custom_handlers_too() {
    use actix_web::{HttpResponse, web};
    let reg = registry(Degraded, Healthy);
    let app = actix_test::init_service(App::new().route(
        "/custom",
        web::get().to(move || {
            let reg = reg.clone();
            async move {
                let report = reg.check(zb_health::prelude::Tag::Ready).await;
                write_json(&report, HttpResponse::Ok())
            }
        }),
    ))
    .await;
    let res = actix_test::call_service(
        &app,
        actix_test::TestRequest::get().uri("/custom").to_request(),
    )
    .await;
    assert_eq!(
        res.headers().get("content-type").unwrap(),
        "application/json"
    );
    let body: Value = actix_test::read_body_json(res).await;
    assert_eq!(body["status"], "Degraded");
    assert_canonical(&body);
}

#[test]
fn colliding_or_relative_paths_are_refused() {
    let err = ZbHealth::new(HealthRegistry::new())
        .ready_path("/health")
        .active_path("/health/")
        .build()
        .err()
        .unwrap();
    assert_eq!(err.rules(), [Rule::EndpointPath]);
    let err = ZbHealth::new(HealthRegistry::new())
        .live_path("healthz")
        .build()
        .err()
        .unwrap();
    assert_eq!(err.rules(), [Rule::EndpointPath]);
    assert!(err.to_string().contains("write `/healthz`"), "{err}");
}

#[actix_web::test]
async fn degraded_and_unhealthy_bodies_validate_against_the_schema() {
    for status in [Healthy, Degraded, Unhealthy] {
        let reg = registry(status, status);
        for tier in zb_health::prelude::Tag::ALL {
            let report = reg.check(tier).await;
            let body: Value = serde_json::from_slice(&canonical_json(&report)).unwrap();
            assert_canonical(&body);
        }
    }
}

/// AT-3 over a real socket: a check that panics in its synchronous part
/// (here a `from_fn` closure that panics before it returns its future)
/// fails only its own entry; the worker survives and keeps answering.
#[actix_web::test]
async fn a_synchronous_panic_fails_only_its_entry_over_a_real_socket() {
    use zb_health::prelude::{ProbeRegistration, ProbeResult, from_fn};
    let reg = HealthRegistry::new();
    reg.add(fixed("database", Healthy)).unwrap();
    #[allow(unreachable_code)]
    reg.add(ProbeRegistration::new(
        "exploding",
        from_fn(|| {
            panic!("secret synchronous panic text");
            async { Ok(ProbeResult::healthy()) }
        }),
    ))
    .unwrap();
    let server = serve(map_zb_health(reg));
    for _ in 0..3 {
        let r = request(server.addr, "GET", "/health/ready").await;
        assert_eq!(r.status, 503);
        let body = r.json();
        assert_eq!(body["entries"]["database"]["status"], "Healthy");
        assert_eq!(body["entries"]["exploding"]["status"], "Unhealthy");
        assert_eq!(
            body["entries"]["exploding"]["description"],
            "check panicked"
        );
        assert!(!String::from_utf8_lossy(&r.body).contains("secret"));
    }
    assert_eq!(request(server.addr, "GET", "/healthz").await.status, 200);
}

/// ZB-5 and the management-port seam: one tier mounted on its own answers
/// like the bundle does, from the same registry, and the other tiers are
/// simply not there.
#[actix_web::test]
async fn one_tier_can_be_mounted_alone_over_a_real_socket() {
    use zb_health::prelude::Tag;
    let endpoints = map_zb_health(registry(Unhealthy, Healthy));
    let ready = endpoints.tier(Tag::Ready);
    assert_eq!((ready.tag(), ready.path()), (Tag::Ready, "/health/ready"));
    let server = support::serve_with(move |c| {
        c.service(ready.clone());
    });
    let r = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["entries"]["database"]["status"], "Unhealthy");
    assert_eq!(
        request(server.addr, "POST", "/health/ready").await.status,
        405
    );
    assert_eq!(request(server.addr, "GET", "/healthz").await.status, 404);
    assert_eq!(
        request(server.addr, "GET", "/health/active").await.status,
        404
    );
}

/// A body larger than one slice (`BENCH=limit`'s P12: with
/// `pace_large_bodies`, a large body is handed to actix in slices so it
/// grows no connection's write buffer) arrives whole over a real socket,
/// paced or not, with the `Content-Length` of its bytes, for `GET`, and
/// `HEAD` states the same length with no body.
#[actix_web::test]
async fn a_large_body_arrives_whole_with_its_length_over_a_real_socket() {
    let registry = HealthRegistry::new();
    for i in 0..1200 {
        let name: &'static str = Box::leak(format!("probe-{i:04}").into_boxed_str());
        registry.add(fixed(name, Healthy)).unwrap();
    }
    for paced in [true, false] {
        let endpoints = ZbHealth::new(registry.clone())
            .pace_large_bodies(paced)
            .build()
            .unwrap();
        let server = serve(endpoints);
        let r = request(server.addr, "GET", "/health/ready").await;
        assert_eq!(r.status, 200);
        assert!(r.body.len() > 2 * 32 * 1024, "{} bytes", r.body.len());
        assert_eq!(
            r.header("Content-Length"),
            Some(r.body.len().to_string().as_str())
        );
        let body = r.json();
        assert_canonical(&body);
        let entries = body["entries"].as_object().unwrap();
        assert_eq!(entries.len(), 1200);
        assert!(
            entries
                .keys()
                .cloned()
                .eq((0..1200).map(|i| format!("probe-{i:04}")))
        );
        let head = request(server.addr, "HEAD", "/health/ready").await;
        assert!(head.body.is_empty());
        assert!(head.header("Content-Length").is_some());
    }
}
