//! A tier's endpoint (`ready`, `active`, `live`) and its per-probe paths
//! (`<tier path>/{probe}`): the built-in body through its kept answer
//! (`crate::answer`), or a writer's body for each answer.

use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use zb_health_spec::query::TierQuery;
use zb_health_spec::{HealthStatus, Tag};

use super::auth::Authorized;
use super::respond::{fixed_json, get_and_head, no_store, tier_status_code, write_body};
use super::verbose::{mark_excluded, verbose_body, verbose_response};
use crate::answer::{KeptTier, healthy_live_body};
use crate::lifecycle::LiveAnswer;
use crate::registry::HealthRegistry;
use crate::report::HealthReport;
use crate::writer::{BodyStyle, ResponseWriter};

/// One tier's endpoint, from [`ZbHealthEndpoints::tier`](super::ZbHealthEndpoints::tier): `GET` and `HEAD`
/// on its path, and for `ready` and `active` on `<path>/{probe}` (one
/// probe's answer, see [`HealthRegistry::answer_probe`]); `405` with
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

/// The body of a per-probe path whose tier has no probe of that name: the
/// same for every name, so nothing of the request is echoed back.
pub(super) const UNKNOWN_PROBE_BODY: &str = r#"{"error":"no probe of this tier has this name"}"#;

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
    /// The built-in writer's settings for this tier.
    pub(super) style: BodyStyle,
    /// A custom writer instead of the built-in one.
    pub(super) writer: Option<Arc<dyn ResponseWriter>>,
    /// Whether the body is ZB's canonical one, so the kept healthy `live`
    /// body can be served as it is.
    pub(super) canonical: bool,
    /// The precomputed body of `live` with the built-in writer and no
    /// watchdog registered, when its answer cannot change.
    pub(super) fixed_body: Option<Bytes>,
    /// What a request with the bearer token sees.
    pub(super) authorized: Authorized,
    /// The kept answer of `ready` or `active` (see [`crate::answer`]). Per
    /// endpoint, so per disclosure level and port.
    pub(super) kept: KeptTier,
    /// Large bodies go out in slices ([`ZbHealth::pace_large_bodies`](super::ZbHealth::pace_large_bodies)).
    pub(super) paced: bool,
}

/// A copy with the same settings and nothing kept: its answers are its
/// own (another token may change who sees what).
impl Clone for TierEndpoint {
    fn clone(&self) -> Self {
        Self {
            tag: self.tag,
            path: self.path.clone(),
            registry: self.registry.clone(),
            style: self.style.clone(),
            writer: self.writer.clone(),
            canonical: self.canonical,
            fixed_body: self.fixed_body.clone(),
            authorized: self.authorized.clone(),
            kept: KeptTier::sized_like(&self.kept),
            paced: self.paced,
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

    /// One probe's answer: the tier's body with that entry alone (and the
    /// lifecycle's entries before it while they apply), its status code
    /// from that report as the tier's is, at the tier's disclosure and
    /// authorized levels; a 404 when the tier has no such probe.
    pub(super) async fn respond_probe(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        let name = request.match_info().get("probe").unwrap_or_default();
        let authorized = self.authorized.style_for(&request);
        let Some(report) = self.registry.answer_probe(self.tag, name).await else {
            return HttpResponse::NotFound()
                .insert_header(no_store())
                .insert_header((
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                ))
                .body(UNKNOWN_PROBE_BODY);
        };
        let mut response = HttpResponse::build(tier_status_code(self.tag, report.status));
        response.insert_header(no_store());
        self.authorized.mark(&mut response);
        let mut style = authorized.unwrap_or(&self.style).clone();
        // `clusterReady` is a verdict of the membership entry: shown on
        // that probe's own path, left out of every other probe's (where it
        // would read `false` for an entry that is not there).
        if style.cluster_ready.as_deref().is_some_and(|m| m != name) {
            style.cluster_ready = None;
        }
        write_body(&style, self.writer.as_deref(), &report, response)
    }

    pub(super) async fn respond(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        // Decided before the probes run, and the same way for every
        // request: the status code never depends on it.
        let authorized = self.authorized.style_for(&request);
        // `?verbose`, `?exclude=`: one length check on the common path.
        if !request.query_string().is_empty() {
            let query = TierQuery::parse(request.query_string());
            if !query.is_plain() {
                return self.respond_query(&query, authorized).await;
            }
        }
        if self.tag == Tag::Live {
            return self.respond_live(authorized);
        }
        // The kept body is the public one: a tier whose answer depends on
        // the request's token renders each answer for its reader.
        if self.writer.is_none() && authorized.is_none() && !self.authorized.varies() {
            return self.respond_built_in().await;
        }
        // The startup gate and the drain put their entries first (BE-HLTH-004,
        // -005); in the steady state the report passes through unchanged.
        let report = self.registry.answer(self.tag).await;
        let mut response = HttpResponse::build(tier_status_code(self.tag, report.status));
        response.insert_header(no_store());
        self.write(authorized, &report, response)
    }

    /// The answer to `?verbose` or `?exclude=` (kube-apiserver's query):
    /// the tier with the excluded checks left out, as plain text when
    /// verbose, else in the tier's own body with `Health-Excluded`; at the
    /// request's disclosure level either way. Never a kept body.
    async fn respond_query(
        &self,
        query: &TierQuery,
        authorized: Option<&BodyStyle>,
    ) -> HttpResponse {
        let (report, exclusion) = self
            .registry
            .answer_excluding(self.tag, &query.exclude)
            .await;
        let status = match self.tag {
            Tag::Live if report.status == HealthStatus::Unhealthy => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            tag => tier_status_code(tag, report.status),
        };
        let level = authorized.unwrap_or(&self.style).disclosure;
        if query.verbose {
            let mut response =
                verbose_response(status, verbose_body(self.tag, &report, level, &exclusion));
            if self.authorized.varies() {
                response
                    .headers_mut()
                    .insert(header::VARY, HeaderValue::from_static("authorization"));
            }
            return response;
        }
        let mut response = HttpResponse::build(status);
        response.insert_header(no_store());
        let mut response = self.write(authorized, &report, response);
        mark_excluded(&mut response, level, &exclusion);
        response
    }

    /// `ready` or `active` with the built-in writer, through its kept
    /// answer ([`KeptTier`]).
    pub(super) async fn respond_built_in(&self) -> HttpResponse {
        let (status, body) = self
            .kept
            .answer(&self.registry, self.tag, &self.style)
            .await;
        fixed_json(tier_status_code(self.tag, status), body, self.paced)
    }

    /// The body: the built-in writer in this tier's style (or the
    /// authorized one), or the custom writer over the report as that
    /// style's disclosure shows it.
    pub(super) fn write(
        &self,
        authorized: Option<&BodyStyle>,
        report: &HealthReport,
        mut response: HttpResponseBuilder,
    ) -> HttpResponse {
        self.authorized.mark(&mut response);
        let style = authorized.unwrap_or(&self.style);
        write_body(style, self.writer.as_deref(), report, response)
    }

    /// `live` runs no probes (ZB-1.3); only a stalled watchdog makes it 503
    /// (BE-HLTH-002). With the canonical writer and every loop in time the
    /// answer is a precomputed body (never for an authorized request, whose
    /// style is not the public one).
    pub(super) fn respond_live(&self, authorized: Option<&BodyStyle>) -> HttpResponse {
        let public = authorized.is_none() && !self.authorized.varies();
        let (status, report) = match self.registry.live_answer() {
            LiveAnswer::Fixed => match &self.fixed_body {
                Some(body) if public => {
                    return fixed_json(StatusCode::OK, body.clone(), self.paced);
                }
                _ => (
                    StatusCode::OK,
                    HealthReport::new(Tag::Live, Vec::new(), Duration::ZERO),
                ),
            },
            LiveAnswer::Healthy(healthy) => {
                if self.canonical && public {
                    return fixed_json(StatusCode::OK, healthy_live_body(&healthy), self.paced);
                }
                (StatusCode::OK, healthy.report())
            }
            LiveAnswer::Stalled(report) => (StatusCode::SERVICE_UNAVAILABLE, report),
        };
        let mut response = HttpResponse::build(status);
        response.insert_header(no_store());
        self.write(authorized, &report, response)
    }
}
