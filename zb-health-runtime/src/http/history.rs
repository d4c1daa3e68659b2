//! The history endpoints: the JSON document (`/health/history`) and the
//! health page that reads it (`/health/ui`), and where they are served.

use std::sync::Arc;

use actix_web::body::BoxBody;
use actix_web::http::StatusCode;
use actix_web::http::header::HeaderValue;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};
use zb_health_spec::history::Since;

use super::respond::{Authorized, fixed, no_store};
use crate::registry::HealthRegistry;
use crate::writer::BodyStyle;

/// The history document's default path.
pub const DEFAULT_HISTORY_PATH: &str = "/health/history";
/// The health page's default path.
pub const DEFAULT_HISTORY_UI_PATH: &str = "/health/ui";

/// The history endpoint: `GET` and `HEAD`, the document at the ready
/// tier's level, or its authorized level for a request with the token.
#[derive(Clone)]
pub(super) struct HistoryEndpoint {
    pub(super) path: String,
    pub(super) registry: HealthRegistry,
    /// The ready tier's body style: its level and whether it shows the
    /// cluster addresses.
    pub(super) style: BodyStyle,
    pub(super) authorized: Authorized,
}

impl HistoryEndpoint {
    pub(super) async fn respond(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        let style = self.authorized.style_for(&request).unwrap_or(&self.style);
        // `?since=MS&cluster=DIGEST`: the delta (`spec/history.md`); a bad
        // value is the reader's error, named.
        let since = match Since::from_query(request.query_string()) {
            Ok(since) => since,
            Err(why) => {
                return HttpResponse::BadRequest()
                    .insert_header(no_store())
                    .content_type("text/plain; charset=utf-8")
                    .body(format!("{why}\n"));
            }
        };
        let body = self.registry.history_delta_json(
            style.disclosure,
            style.cluster_addresses,
            since.as_ref(),
        );
        let mut response = HttpResponse::Ok();
        response
            .insert_header(no_store())
            .content_type("application/json");
        self.authorized.mark(&mut response);
        response.body(body)
    }
}

/// The health page: the same bytes for every request, embedded at build
/// time.
pub(super) fn history_page() -> HttpResponse {
    let page = Bytes::from_static(zb_health_spec::history::PAGE.as_bytes());
    let html = HeaderValue::from_static("text/html; charset=utf-8");
    fixed(StatusCode::OK, BoxBody::new(page), html)
}
