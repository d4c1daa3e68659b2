//! Instructions per HTTP request in process (actix's test service, no
//! socket), for `valgrind --tool=callgrind`: zb-health's `/healthz`
//! (`live`) against a bare static handler on an app of its own (`bare`), as
//! `BENCH=limit`'s P1 compares them, and the ready tier of three cached
//! probes (`cached`, P2+; P10 with a probe count after the mode). The
//! operator features' cost: `cached-off` is `cached` behind the servers'
//! `CloseWhenDraining`, `cached-on` the same with the operator controls
//! mounted and a transition publisher added (spec/observability.md).
//! Arguments: the repetitions, the mode and the probe count. The difference
//! between two repetition counts is the cost of the extra requests.

use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use actix_web::{App, HttpResponse, test, web};
use zb_health::http::OperatorControls;
use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, from_fn, map_zb_health};
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
        let r = ProbeRegistration::new(format!("probe-{i}"), probe).cache(Duration::from_secs(3));
        std::mem::forget(registry.add(r).expect("a valid registration"));
    }
    let live = Bytes::from_static(br#"{"status":"Healthy","totalDurationMs":0,"entries":{}}"#);
    actix_web::rt::System::new().block_on(async move {
        let total = if mode == "bare" {
            let app = App::new().route(
                "/healthz",
                web::get().to(move || {
                    let body = live.clone();
                    async move {
                        HttpResponse::build(StatusCode::OK)
                            .insert_header((
                                header::CONTENT_TYPE,
                                HeaderValue::from_static("application/json"),
                            ))
                            .insert_header((
                                header::CACHE_CONTROL,
                                HeaderValue::from_static("no-store"),
                            ))
                            .body(body)
                    }
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
            let path = if mode == "cached" {
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
        total += actix_web::body::to_bytes(response.into_body())
            .await
            .map_or(0, |b| b.len());
    }
    total
}
