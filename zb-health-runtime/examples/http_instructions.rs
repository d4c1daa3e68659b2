//! Instructions per HTTP request in process (actix's test service, no
//! socket), for `valgrind --tool=callgrind`: zb-health's `/healthz`
//! (`live`) against a bare static handler on an app of its own (`bare`), as
//! `BENCH=limit`'s P1 compares them; the ready tier of three cached probes
//! (`cached`, P2+; P10 with a probe count after the mode); the ready tier
//! of uncached probes (`uncached`) against P2's baseline, a hand-written
//! `tokio::join!` of three checks writing the same body shape with serde
//! (`bare-join`). `bench/instructions.sh` runs the modes of issue 40's
//! three ratios. The operator features' cost: `cached-off` is `cached`
//! behind the servers' `CloseWhenDraining`, `cached-on` the same with the
//! operator controls mounted and a transition publisher added
//! (spec/observability.md). Arguments: the repetitions, the mode and the
//! probe count. The difference between two repetition counts is the cost
//! of the extra requests.

use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use actix_web::{App, HttpResponse, test, web};
use zb_health::http::OperatorControls;
use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, from_fn, map_zb_health};
use zb_health::probe::Probe;
use zb_health::publish::{Transition, TransitionPublisher};
use zb_health::server::CloseWhenDraining;

fn main() {
    let mut args = std::env::args().skip(1);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let mode = args.next().unwrap_or_else(|| "live".into());
    let probes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let registry = HealthRegistry::new();
    for i in 0..probes {
        let probe = from_fn(|| async { Ok(ProbeResult::healthy().with_description("ok")) });
        let r = ProbeRegistration::new(format!("probe-{i}"), probe);
        // `uncached`: P2's zb-health side (issue 40 item 4 measurement).
        let r = match mode.as_str() {
            "uncached" => r,
            _ => r.cache(Duration::from_secs(3)),
        };
        std::mem::forget(registry.add(r).expect("a valid registration"));
    }
    let live = Bytes::from_static(br#"{"status":"Healthy","totalDurationMs":0,"entries":{}}"#);
    actix_web::rt::System::new().block_on(async move {
        let total = if mode == "bare-join" {
            // P2's baseline: a hand-written `tokio::join!` of three checks,
            // each timed, one serde body of the canonical shape.
            let app = App::new().route(
                "/ready3",
                web::get().to(|| async {
                    let check = || async { Ok(ProbeResult::healthy().with_description("ok")) };
                    let (a, b, c) = (from_fn(check), from_fn(check), from_fn(check));
                    let started = std::time::Instant::now();
                    let (a, b, c) =
                        tokio::join!(timed(a.check()), timed(b.check()), timed(c.check()));
                    let body = ReadyBody {
                        status: "Healthy",
                        total_duration_ms: started.elapsed().as_millis() as u64,
                        entries: ReadyEntries {
                            probe_0: entry(a),
                            probe_1: entry(b),
                            probe_2: entry(c),
                        },
                    };
                    json_no_store(Bytes::from(serde_json::to_vec(&body).unwrap_or_default()))
                }),
            );
            drive(test::init_service(app).await, "/ready3", reps).await
        } else if mode == "bare" {
            let app = App::new().route(
                "/healthz",
                web::get().to(move || {
                    let body = live.clone();
                    async move { json_no_store(body) }
                }),
            );
            drive(test::init_service(app).await, "/healthz", reps).await
        } else if mode == "cached-off" || mode == "cached-on" {
            let endpoints = map_zb_health(registry.clone());
            if mode == "cached-on" {
                registry.add_transition_publisher(Discard);
                let token = zb_health::token::BearerToken::new("bench-token").expect("a token");
                let controls = OperatorControls::new(registry.clone()).bearer_token(token);
                let app = App::new()
                    .wrap(CloseWhenDraining::new(registry))
                    .service(endpoints)
                    .service(controls);
                drive(test::init_service(app).await, "/health/ready", reps).await
            } else {
                let app = App::new()
                    .wrap(CloseWhenDraining::new(registry))
                    .service(endpoints);
                drive(test::init_service(app).await, "/health/ready", reps).await
            }
        } else {
            let app = test::init_service(App::new().service(map_zb_health(registry))).await;
            let path = if mode == "cached" || mode == "uncached" {
                "/health/ready"
            } else {
                "/healthz"
            };
            drive(app, path, reps).await
        };
        println!("{total}");
    });
}

/// A publisher that takes every batch and does nothing with it.
struct Discard;

impl TransitionPublisher for Discard {
    fn publish<'a>(
        &'a self,
        _batch: &'a [Transition],
    ) -> futures_util::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

/// `reps` GETs of `path`; the bytes of all the bodies.
async fn drive<S, B>(app: S, path: &str, reps: usize) -> usize
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let mut total = 0;
    for _ in 0..reps {
        let response =
            test::call_service(&app, test::TestRequest::get().uri(path).to_request()).await;
        assert!(response.status().is_success());
        // The body as the server made it: a finished body is taken as it
        // is, as a socket writer takes it, and only a streamed one is
        // collected. Copying it here would charge the client's copy, which
        // grows with the body's length, to the server.
        total += match response.into_body().try_into_bytes() {
            Ok(body) => body.len(),
            Err(streamed) => actix_web::body::to_bytes(streamed)
                .await
                .map_or(0, |b| b.len()),
        };
    }
    total
}

async fn timed(
    check: impl Future<Output = zb_health::probe::ProbeOutcome>,
) -> (zb_health::probe::ProbeOutcome, Duration) {
    let started = std::time::Instant::now();
    let outcome = check.await;
    (outcome, started.elapsed())
}

fn entry((outcome, duration): (zb_health::probe::ProbeOutcome, Duration)) -> EntryBody {
    let description = outcome.ok().and_then(|r| r.description);
    EntryBody {
        status: "Healthy",
        description,
        duration_ms: duration.as_micros() as f64 / 1000.0,
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ReadyBody {
    status: &'static str,
    total_duration_ms: u64,
    entries: ReadyEntries,
}

#[derive(serde::Serialize)]
struct ReadyEntries {
    #[serde(rename = "probe-0")]
    probe_0: EntryBody,
    #[serde(rename = "probe-1")]
    probe_1: EntryBody,
    #[serde(rename = "probe-2")]
    probe_2: EntryBody,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct EntryBody {
    status: &'static str,
    description: Option<std::borrow::Cow<'static, str>>,
    duration_ms: f64,
}

/// A hand-written handler's 200: the JSON body with `no-store`, the headers
/// zb-health sends, so both baselines answer alike.
#[inline]
fn json_no_store(body: Bytes) -> HttpResponse {
    HttpResponse::build(StatusCode::OK)
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .body(body)
}
