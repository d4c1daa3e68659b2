//! A tier's endpoint ([`ZbHealthTier`]: `ready`, `active`, `live` and the
//! per-probe paths `<tier path>/{probe}`) and how an answer becomes an
//! HTTP response ([`Body::render`], the one rendering): the status code
//! (ZB-1.2), what a request with the bearer token sees (decided before any
//! probe runs, BE-HLTH-007), `Cache-Control: no-store` on every answer, a
//! body already made, the writer's body, and `GET`/`HEAD` routes with
//! `405` otherwise.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::Either;

use actix_web::body::BoxBody;
use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, web};
use zb_health_spec::query::TierQuery;
use zb_health_spec::{HealthStatus, Tag};

use super::verbose::{mark_excluded, verbose_body};
use crate::answer::body_key;
use crate::paced::{self, Paced};
use crate::registry::{Answer, Exclusion, HealthRegistry, Selection};
use crate::report::HealthReport;
use crate::token::BearerToken;
use crate::writer::{BodyStyle, ResponseWriter};

/// The HTTP status of an answer (ZB-1.2), on every tier: 200 while serving
/// (`Healthy`, `Degraded`), 503 when `Unhealthy` (on `live`, only a
/// stalled watchdog or a restart request makes it so). Public so custom
/// endpoints map statuses the same way.
pub fn status_code(status: HealthStatus) -> StatusCode {
    StatusCode::from_u16(status.http_code()).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
}

/// The body of a per-probe path whose tier has no probe of that name: the
/// same for every name, so nothing of the request is echoed back.
pub(super) const UNKNOWN_PROBE_BODY: &str = r#"{"error":"no probe of this tier has this name"}"#;

/// One tier's endpoint, from [`ZbHealthEndpoints::tier`](super::ZbHealthEndpoints::tier): `GET` and `HEAD`
/// on its path, and for `ready` and `active` on `<path>/{probe}` (one
/// probe's answer, see [`Selection::Probe`]); `405` with
/// `Allow` for any other method. Cheap to clone into each actix worker's
/// `App` factory.
#[derive(Clone)]
pub struct ZbHealthTier(pub(super) Arc<TierEndpoint>);

impl ZbHealthTier {
    /// The tier it serves.
    pub fn tag(&self) -> Tag {
        self.0.tag
    }

    /// The path it is served on.
    pub fn path(&self) -> &str {
        &self.0.path
    }
}

impl HttpServiceFactory for ZbHealthTier {
    fn register(self, config: &mut AppService) {
        self.0.register_tier(config);
        self.0.register_probes(config);
    }
}

/// The per-probe path of a tier served on `path`: `<path>/{probe}`; `None`
/// for a tier at `/`, whose per-probe path would take every one-segment
/// path of the application.
pub(super) fn probe_path(path: &str) -> Option<String> {
    let base = path.trim_end_matches('/');
    (!base.is_empty()).then(|| format!("{base}/{{probe}}"))
}

pub(super) struct TierEndpoint {
    pub(super) tag: Tag,
    pub(super) path: String,
    pub(super) registry: HealthRegistry,
    /// How its answers become bodies.
    pub(super) body: Body,
}

/// A copy with the same settings and nothing kept: its answers are its
/// own (another token may change who sees what).
impl Clone for TierEndpoint {
    fn clone(&self) -> Self {
        Self {
            tag: self.tag,
            path: self.path.clone(),
            registry: self.registry.clone(),
            body: self.body.clone(),
        }
    }
}

impl TierEndpoint {
    /// `GET` and `HEAD` on the tier's own path.
    pub(super) fn register_tier(self: &Arc<Self>, config: &mut AppService) {
        let tier = self.clone();
        get_and_head(self.path.clone(), move |r| tier.clone().respond(r), config);
    }

    /// `GET` and `HEAD` on `<path>/{probe}` for `ready` and `active`;
    /// nothing for `live`, which carries no probes (ZB-1.3).
    pub(super) fn register_probes(self: &Arc<Self>, config: &mut AppService) {
        if self.tag == Tag::Live {
            return;
        }
        if let Some(path) = probe_path(&self.path) {
            let tier = self.clone();
            get_and_head(path, move |r| tier.clone().respond_probe(r), config);
        }
    }

    /// One probe's answer ([`Selection::Probe`]): a 404 when the tier has
    /// no such probe.
    pub(super) async fn respond_probe(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        let name = request.match_info().get("probe").unwrap_or_default();
        let answer = self
            .registry
            .answer(Selection::Probe(Some(self.tag), name))
            .await;
        self.body.render(&answer, &request, None, Some(name))
    }

    /// The tier's answer; with `?verbose` or `?exclude=` (one length check
    /// on the common path), the answer with those exclusions.
    pub(super) async fn respond(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        let query = if request.query_string().is_empty() {
            None
        } else {
            Some(TierQuery::parse(request.query_string())).filter(|q| !q.is_plain())
        };
        let selection = match &query {
            None => Selection::Tier(self.tag),
            Some(query) => Selection::Excluding(self.tag, &query.exclude),
        };
        // A kept answer, or `live`, without a state machine of its own.
        let answer = match self.registry.answer_now(selection) {
            Ok(answer) => answer,
            Err(pending) => self.registry.answer_pending(pending).await,
        };
        self.body.render(&answer, &request, query.as_ref(), None)
    }
}

/// How an endpoint's answers become responses: its body style, a custom
/// writer, what the bearer token unlocks, its key in the kept answers'
/// bodies ([`crate::answer`]) and whether large bodies are paced.
pub(super) struct Body {
    /// The built-in writer's settings.
    pub(super) style: BodyStyle,
    /// A custom writer instead of the built-in one.
    pub(super) writer: Option<Arc<dyn ResponseWriter>>,
    /// What a request with the bearer token sees.
    pub(super) authorized: Authorized,
    /// Large bodies go out in slices ([`ZbHealth::pace_large_bodies`](super::ZbHealth::pace_large_bodies)).
    pub(super) paced: bool,
    key: u64,
    /// The last public body's length, to size the next one's buffer.
    last_len: AtomicUsize,
}

/// A copy with the same settings and a key of its own: its bodies are its
/// own (another token may change who sees what).
impl Clone for Body {
    fn clone(&self) -> Self {
        Self {
            style: self.style.clone(),
            writer: self.writer.clone(),
            authorized: self.authorized.clone(),
            paced: self.paced,
            key: body_key(),
            last_len: AtomicUsize::new(self.last_len.load(Ordering::Relaxed)),
        }
    }
}

impl Body {
    pub(super) fn new(
        style: BodyStyle,
        writer: Option<Arc<dyn ResponseWriter>>,
        authorized: Authorized,
        paced: bool,
    ) -> Self {
        Self {
            style,
            writer,
            authorized,
            paced,
            key: body_key(),
            last_len: AtomicUsize::new(0),
        }
    }

    /// The one rendering of an answer as an HTTP response:
    ///
    /// * a [`Selection::Probe`](crate::registry::Selection::Probe) that
    ///   named no probe is a 404 (`probe` is the name asked);
    /// * `?verbose` is plain text, one line per check;
    /// * the public body of the built-in writer is rendered once per kept
    ///   answer and served again while the answer holds;
    /// * any other body is rendered for this request, at the level the
    ///   request's token unlocks, with `Health-Excluded` for `?exclude=`.
    pub(super) fn render(
        &self,
        answer: &Answer,
        request: &HttpRequest,
        query: Option<&TierQuery>,
        probe: Option<&str>,
    ) -> HttpResponse {
        if answer.is_unknown() {
            return HttpResponse::NotFound()
                .insert_header(no_store())
                .insert_header((
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                ))
                .body(UNKNOWN_PROBE_BODY);
        }
        let status = status_code(answer.status);
        let authorized = self.authorized.style_for(request);
        if query.is_none()
            && probe.is_none()
            && self.writer.is_none()
            && authorized.is_none()
            && !self.authorized.varies()
        {
            let render = |report: &HealthReport| {
                let body = self
                    .style
                    .json_sized(report, self.last_len.load(Ordering::Relaxed));
                self.last_len.store(body.len(), Ordering::Relaxed);
                Bytes::from(body)
            };
            let body = match answer.kept() {
                Some(kept) => kept.body(self.key, render),
                None => render(answer),
            };
            return fixed_json(status, body, self.paced);
        }
        let mut style = Cow::Borrowed(authorized.unwrap_or(&self.style));
        let none = Exclusion::default();
        let exclusion = answer.exclusion().unwrap_or(&none);
        if let Some(query) = query
            && query.verbose
        {
            let body = verbose_body(answer.tier, answer, style.disclosure, exclusion);
            let mut response = verbose_response(status, body);
            if self.authorized.varies() {
                response
                    .headers_mut()
                    .insert(header::VARY, HeaderValue::from_static("authorization"));
            }
            return response;
        }
        // `clusterReady` is a verdict of the membership entry: shown on
        // that probe's own path, left out of every other probe's (where it
        // would read `false` for an entry that is not there).
        if let Some(name) = probe
            && style.cluster_ready.as_deref().is_some_and(|m| m != name)
        {
            style.to_mut().cluster_ready = None;
        }
        let mut response = HttpResponse::build(status);
        response.insert_header(no_store());
        self.authorized.mark(&mut response);
        let mut response = write_body(&style, self.writer.as_deref(), answer, response);
        if query.is_some() {
            mark_excluded(&mut response, style.disclosure, exclusion);
        }
        response
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
    // The boxed body is built directly: `map_into_boxed_body` is a call
    // the compiler does not always inline.
    let body = if paced && body.len() > paced::SLICE {
        BoxBody::new(Paced::new(body))
    } else {
        BoxBody::new(body)
    };
    fixed(status, body, HeaderValue::from_static("application/json"))
}

/// A body already made, with `Cache-Control: no-store` and its content
/// type: the JSON of [`fixed_json`], the verbose text, the health page.
/// The type is given as a value made where it is written, so a literal's
/// check happens at compile time, not per answer.
#[inline]
pub(super) fn fixed(status: StatusCode, body: BoxBody, content_type: HeaderValue) -> HttpResponse {
    let mut response = HttpResponse::with_body(status, body);
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::CONTENT_TYPE, content_type);
    response
}

/// The plain-text response, with the tier's status code.
fn verbose_response(status: StatusCode, body: String) -> HttpResponse {
    let mut response = fixed(
        status,
        BoxBody::new(body),
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
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

/// What a request with the bearer token sees instead of the public body.
#[derive(Clone, Default)]
pub(super) struct Authorized {
    /// The body style it unlocks; `None` when the tier shows everyone the
    /// same.
    pub(super) style: Option<BodyStyle>,
    /// The token; `None` leaves every request at the public level.
    pub(super) token: Option<Arc<BearerToken>>,
}

impl Authorized {
    /// Whether the answer depends on the request's `Authorization`, so a
    /// cache must key on it (`Vary`).
    pub(super) fn varies(&self) -> bool {
        self.style.is_some() && self.token.is_some()
    }

    /// The authorized style when `request` carries the token. A missing or
    /// wrong token is the public answer, never a 401: kubelets and load
    /// balancers cannot authenticate.
    pub(super) fn style_for(&self, request: &HttpRequest) -> Option<&BodyStyle> {
        let (style, token) = (self.style.as_ref()?, self.token.as_deref()?);
        token.authorizes(request).then_some(style)
    }

    /// `Vary: Authorization` on `response` when the answer depends on it.
    pub(super) fn mark(&self, response: &mut HttpResponseBuilder) {
        if self.varies() {
            response.insert_header((header::VARY, HeaderValue::from_static("authorization")));
        }
    }
}
