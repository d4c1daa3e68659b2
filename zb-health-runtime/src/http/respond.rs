//! How an answer becomes an HTTP response: the status code of a tier's
//! answer (ZB-1.2), `Cache-Control: no-store` on every answer, a body
//! already made, the writer's body, and `GET`/`HEAD` routes with `405`
//! otherwise.

use std::future::Future;

use futures_util::future::Either;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, web};
use zb_health_spec::{HealthStatus, Tag};

use crate::paced::{self, Paced};
use crate::report::HealthReport;
use crate::writer::{BodyStyle, ResponseWriter};

/// The HTTP status of a tier's answer from its probes (ZB-1.2): `live` is
/// always 200 here (only a stalled watchdog, which is not a probe, makes the
/// live endpoint 503);
/// `ready` and `active` are 200 while serving (Healthy, Degraded) and 503
/// when Unhealthy. Public so custom endpoints map statuses the same way.
pub fn tier_status_code(tier: Tag, status: HealthStatus) -> StatusCode {
    match tier {
        Tag::Live => StatusCode::OK,
        Tag::Ready | Tag::Active if status.is_serving() => StatusCode::OK,
        Tag::Ready | Tag::Active => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// `GET` and `HEAD` on `path`, answered by `respond`; `405` with `Allow`
/// for any other method. One route without guards, the method told apart
/// here: actix's method guard also records every method it checks for its
/// own `405`, which costs more than the whole `live` answer.
pub(super) fn get_and_head<F, R>(path: String, respond: F, config: &mut AppService)
where
    F: Fn(HttpRequest) -> R + Clone + 'static,
    R: Future<Output = HttpResponse> + 'static,
{
    web::resource(path)
        .route(web::route().to(move |request: HttpRequest| {
            if matches!(*request.method(), Method::GET | Method::HEAD) {
                Either::Left(respond(request))
            } else {
                Either::Right(std::future::ready(method_not_allowed()))
            }
        }))
        .register(config);
}

/// The body: the built-in writer in `style`, or the custom writer over the
/// report as `style`'s disclosure shows it.
pub(super) fn write_body(
    style: &BodyStyle,
    writer: Option<&dyn ResponseWriter>,
    report: &HealthReport,
    response: HttpResponseBuilder,
) -> HttpResponse {
    match writer {
        None => style.write(report, response),
        Some(writer) => writer.write(&style.shown(report), response),
    }
}

/// A JSON body already made, with `Cache-Control: no-store`. Built
/// directly rather than through the response builder, whose conversions
/// and error slot a fixed answer does not need: the hot path of `live`
/// and of a kept body.
///
/// With `paced`, a body of more than one slice goes out in slices
/// ([`Paced`]), so it leaves no write buffer grown to its size on the
/// connection.
pub(super) fn fixed_json(status: StatusCode, body: Bytes, paced: bool) -> HttpResponse {
    let mut response = if paced && body.len() > paced::SLICE {
        HttpResponse::with_body(status, Paced::new(body)).map_into_boxed_body()
    } else {
        HttpResponse::with_body(status, body).map_into_boxed_body()
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) fn method_not_allowed() -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, HeaderValue::from_static("GET, HEAD")))
        .insert_header(no_store())
        .finish()
}

/// Health answers describe one instant; a cache in between would serve a
/// stale verdict to the orchestrator.
pub(super) fn no_store() -> (header::HeaderName, HeaderValue) {
    (header::CACHE_CONTROL, HeaderValue::from_static("no-store"))
}
