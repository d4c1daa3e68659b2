//! [`OperatorControls`]: what an operator may change on a running pod, on
//! the management port and only with the bearer token. Today: maintenance
//! mode at `/health/maintenance`.

use std::sync::Arc;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde_json::{Value, json};
use zb_health_spec::maintenance::{FieldError, check_reason, check_ttl};

use super::respond::no_store;
use crate::lifecycle::{MaintenanceWindow, rfc3339, unix_ms};
use crate::registry::HealthRegistry;
use crate::token::BearerToken;

/// Where maintenance mode is served.
pub const MAINTENANCE_PATH: &str = "/health/maintenance";

/// The largest request body read: a reason and a TTL fit many times over.
const MAX_BODY_BYTES: usize = 4096;

/// The operator's controls, to mount on the **management** port only:
/// [`ZbHealthServer`](crate::server::ZbHealthServer) mounts them there when
/// it has a management port and a bearer token (`HEALTH_TOKEN`), and
/// never on the application port.
///
/// `/health/maintenance` ([`MAINTENANCE_PATH`]), every answer JSON and
/// `Cache-Control: no-store`:
///
/// | Request | Effect |
/// |---|---|
/// | `POST` `{"reason": "kernel patch", "ttl": "10m"}` | [`begin_maintenance`](HealthRegistry::begin_maintenance); 200 with the window |
/// | `DELETE` | [`end_maintenance`](HealthRegistry::end_maintenance); 200 with the window that ended, or none |
/// | `GET` | 200 with the open window, or none |
///
/// A request without the token, or with a wrong one, gets exactly what an
/// unknown path gets (404, empty body), so the controls' existence is not
/// disclosed; with no token configured every request does. Bad input gets
/// a 400 that names the field (`{"error": {"field": "ttl", "message":
/// …}}`), and changes nothing.
#[derive(Clone)]
pub struct OperatorControls {
    registry: HealthRegistry,
    token: Option<Arc<BearerToken>>,
}

impl OperatorControls {
    /// The controls over `registry`, refusing every request until a token
    /// is given.
    pub fn new(registry: HealthRegistry) -> Self {
        Self {
            registry,
            token: None,
        }
    }

    /// The bearer token a request must carry.
    pub fn bearer_token(mut self, token: impl Into<Arc<BearerToken>>) -> Self {
        self.token = Some(token.into());
        self
    }

    async fn maintenance(
        self: Arc<Self>,
        request: HttpRequest,
        body: web::Payload,
    ) -> HttpResponse {
        if !self
            .token
            .as_deref()
            .is_some_and(|token| token.authorizes(&request))
        {
            // What actix answers for a path it does not serve.
            return HttpResponse::new(StatusCode::NOT_FOUND);
        }
        match *request.method() {
            Method::GET | Method::HEAD => {
                answer(StatusCode::OK, window_json(self.registry.maintenance()))
            }
            Method::DELETE => {
                let ended = self.registry.end_maintenance();
                answer(
                    StatusCode::OK,
                    json!({"maintenance": null, "ended": ended.map(|w| window(&w))}),
                )
            }
            Method::POST => match read_request(body).await {
                Ok((reason, ttl)) => match self.registry.begin_maintenance(&reason, ttl) {
                    Ok(w) => answer(StatusCode::OK, json!({"maintenance": window(&w)})),
                    Err(e) => bad_request(&e),
                },
                Err(e) => bad_request(&e),
            },
            _ => {
                let mut response = answer(
                    StatusCode::METHOD_NOT_ALLOWED,
                    json!({"error": {"field": "method", "message": "GET, POST or DELETE"}}),
                );
                response.headers_mut().insert(
                    header::ALLOW,
                    HeaderValue::from_static("GET, HEAD, POST, DELETE"),
                );
                response
            }
        }
    }
}

impl HttpServiceFactory for OperatorControls {
    fn register(self, config: &mut AppService) {
        let controls = Arc::new(self);
        web::resource(MAINTENANCE_PATH)
            .default_service(web::to(move |request: HttpRequest, body: web::Payload| {
                controls.clone().maintenance(request, body)
            }))
            .register(config);
    }
}

/// The body of a `POST`: a JSON object with a `reason` and a `ttl`,
/// checked by the spec's rules (the CLI checks with the same ones).
async fn read_request(mut body: web::Payload) -> Result<(String, std::time::Duration), FieldError> {
    let error = |message: &str| FieldError {
        field: "body",
        message: message.into(),
    };
    let mut bytes = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|_| error("could not be read"))?;
        if bytes.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(error("larger than 4 KiB; send {\"reason\": …, \"ttl\": …}"));
        }
        bytes.extend_from_slice(&chunk);
    }
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|_| error("not JSON; send {\"reason\": \"kernel patch\", \"ttl\": \"10m\"}"))?;
    let Value::Object(fields) = value else {
        return Err(error(
            "not a JSON object; send {\"reason\": \"kernel patch\", \"ttl\": \"10m\"}",
        ));
    };
    let text = |name: &'static str| match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(FieldError {
            field: name,
            message: "must be a string".into(),
        }),
    };
    let reason = check_reason(text("reason")?)?.to_owned();
    let ttl = check_ttl(text("ttl")?)?;
    Ok((reason, ttl))
}

fn window(w: &MaintenanceWindow) -> Value {
    json!({
        "reason": &*w.reason,
        "since": rfc3339(unix_ms(w.since)),
        "until": rfc3339(unix_ms(w.until)),
    })
}

fn window_json(w: Option<MaintenanceWindow>) -> Value {
    json!({"maintenance": w.as_ref().map(window)})
}

fn bad_request(e: &FieldError) -> HttpResponse {
    answer(
        StatusCode::BAD_REQUEST,
        json!({"error": {"field": e.field, "message": e.message}}),
    )
}

fn answer(status: StatusCode, body: Value) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header(no_store())
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ))
        .body(body.to_string())
}
