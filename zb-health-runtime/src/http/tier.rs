//! A tier's endpoint (`ready`, `active`, `live`) and its per-probe paths
//! (`<tier path>/{probe}`): the registry's answer, rendered by
//! [`Body::render`].

use std::sync::Arc;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::{HttpRequest, HttpResponse};
use zb_health_spec::Tag;
use zb_health_spec::query::TierQuery;

use super::respond::{Body, get_and_head};
use crate::registry::{HealthRegistry, Selection};

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
