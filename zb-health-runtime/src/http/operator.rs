//! [`OperatorControls`]: what an operator may change on a running pod, on
//! the management port and only with the bearer token: maintenance mode
//! at `/health/maintenance`, and with a cluster the step-down at
//! `/health/step-down`.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde_json::{Value, json};
use zb_health_spec::operator::{FieldError, check_reason, check_ttl};

use super::respond::fixed_json;
use crate::registry::HealthRegistry;
use crate::setting::setters;
use crate::token::BearerToken;
use crate::wallclock::{rfc3339, unix_ms};

/// Where maintenance mode is served.
pub const MAINTENANCE_PATH: &str = "/health/maintenance";
/// Where the step-down is served (with a [`StepDown`](crate::cluster::StepDown)).
pub const STEP_DOWN_PATH: &str = "/health/step-down";

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
/// | `POST` `{"reason": "kernel patch", "ttl": "10m"}` | [`begin_maintenance`](crate::lifecycle::Lifecycle::begin_maintenance); 200 with the window |
/// | `DELETE` | [`end_maintenance`](crate::lifecycle::Lifecycle::end_maintenance); 200 with the window that ended, or none |
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
    #[cfg(feature = "cluster")]
    pub(crate) step_down: Option<Arc<crate::cluster::StepDown>>,
}

impl OperatorControls {
    /// The controls over `registry`, refusing every request until a token
    /// is given.
    pub fn new(registry: HealthRegistry) -> Self {
        Self {
            registry,
            token: None,
            #[cfg(feature = "cluster")]
            step_down: None,
        }
    }

    async fn respond(
        self: Arc<Self>,
        control: Control,
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
        let act = match *request.method() {
            Method::GET | Method::HEAD => Act::Current,
            Method::DELETE => Act::End,
            Method::POST => match read_request(body).await {
                Ok((reason, ttl)) => Act::Begin(reason, ttl),
                Err(e) => return bad_request(&e),
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
                return response;
            }
        };
        match self.act(&control, &act) {
            Ok(value) => answer(StatusCode::OK, value),
            Err(e) => bad_request(&e),
        }
    }

    /// Does `act` on `control`, and answers with the window it began, the
    /// one that ended (beside a `null` window), or the open one, under the
    /// control's key.
    fn act(&self, control: &Control, act: &Act) -> Result<Value, FieldError> {
        let (key, window) = match control {
            Control::Maintenance => {
                let lifecycle = self.registry.lifecycle();
                let w = match act {
                    Act::Current => lifecycle.maintenance(),
                    Act::End => lifecycle.end_maintenance(),
                    Act::Begin(reason, ttl) => Some(lifecycle.begin_maintenance(reason, *ttl)?),
                };
                (
                    "maintenance",
                    w.map(|w| window(&w.reason, w.since, w.until)),
                )
            }
            #[cfg(feature = "cluster")]
            Control::StepDown(step_down) => {
                let w = match act {
                    Act::Current => step_down.current(),
                    Act::End => step_down.end(),
                    Act::Begin(reason, ttl) => Some(step_down.begin(reason, *ttl)?),
                };
                ("stepDown", w.map(|w| window(&w.reason, w.since, w.until)))
            }
        };
        Ok(match act {
            Act::End => json!({key: null, "ended": window}),
            Act::Current | Act::Begin(..) => json!({key: window}),
        })
    }
}

setters!(OperatorControls {
    /// The bearer token a request must carry.
    fn bearer_token(token: impl Into<Arc<BearerToken>>) => token = Some(token.into());

    /// Serves `/health/step-down` ([`STEP_DOWN_PATH`]) too: a deliberate
    /// hand-over of the active role ([`StepDown`](crate::cluster::StepDown)),
    /// with the same requests and answers as maintenance (`POST` a reason
    /// and a TTL, `DELETE`, `GET`), the window under `stepDown`.
    #[cfg(feature = "cluster")]
    fn step_down(step_down: Arc<crate::cluster::StepDown>) => step_down = Some(step_down);
});

/// What a request asks of a control: its open window, to end it, or to
/// begin one with a reason and a TTL.
enum Act {
    Current,
    End,
    Begin(String, Duration),
}

/// Which control a route serves; the step-down's route carries the
/// step-down it drives.
#[derive(Clone)]
enum Control {
    Maintenance,
    #[cfg(feature = "cluster")]
    StepDown(Arc<crate::cluster::StepDown>),
}

impl HttpServiceFactory for OperatorControls {
    fn register(self, config: &mut AppService) {
        let controls = Arc::new(self);
        let route = |path: &str, control: Control, config: &mut AppService| {
            let controls = controls.clone();
            web::resource(path.to_owned())
                .default_service(web::to(move |request: HttpRequest, body: web::Payload| {
                    controls.clone().respond(control.clone(), request, body)
                }))
                .register(config);
        };
        route(MAINTENANCE_PATH, Control::Maintenance, config);
        #[cfg(feature = "cluster")]
        if let Some(step_down) = controls.step_down.clone() {
            route(STEP_DOWN_PATH, Control::StepDown(step_down), config);
        }
    }
}

/// The body of a `POST`: a JSON object with a `reason` and a `ttl`,
/// checked by the spec's rules (the CLI checks with the same ones).
async fn read_request(mut body: web::Payload) -> Result<(String, Duration), FieldError> {
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

/// A maintenance or step-down window as the controls answer it.
fn window(reason: &str, since: SystemTime, until: SystemTime) -> Value {
    json!({
        "reason": reason,
        "since": rfc3339(unix_ms(since)),
        "until": rfc3339(unix_ms(until)),
    })
}

fn bad_request(e: &FieldError) -> HttpResponse {
    answer(
        StatusCode::BAD_REQUEST,
        json!({"error": {"field": e.field, "message": e.message}}),
    )
}

fn answer(status: StatusCode, body: Value) -> HttpResponse {
    fixed_json(status, body.to_string().into(), false)
}
