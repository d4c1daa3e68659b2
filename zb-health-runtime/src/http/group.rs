//! Health groups (R23–R25): a named set of probes served at a path of
//! its own, answered as `ready` is.

use std::sync::Arc;

use actix_web::{HttpRequest, HttpResponse};
use zb_health_spec::{Disclosure, Tag};

use super::respond::Body;
use crate::registry::{HealthRegistry, Selection};
use crate::setting::setters;

/// A health group (a manifest's `groups`; R23–R25): a named set of
/// probes, by name or by tier, served at a path of its own with its own
/// disclosure level, and answered as `ready` is: the worst of its entries,
/// 200 while serving, 503 when `Unhealthy`, with the startup and shutdown
/// entries first while they apply. For an operator who gates a canary on
/// one dependency.
///
/// ```
/// use zb_health::http::HealthGroup;
/// use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, Tag, ZbHealth, from_fn};
///
/// let registry = HealthRegistry::new();
/// registry
///     .add(ProbeRegistration::new("database", from_fn(|| async { Ok(ProbeResult::healthy()) })))
///     .unwrap();
/// let health = ZbHealth::new(registry)
///     .group(HealthGroup::new("canary", "/health/canary").probes(["database"]))
///     .group(HealthGroup::new("writes", "/health/writes").tiers([Tag::Active]))
///     .build()
///     .expect("valid groups");
/// assert_eq!(health.group_path("canary"), Some("/health/canary"));
/// ```
#[derive(Debug, Clone)]
pub struct HealthGroup {
    pub(super) name: Arc<str>,
    pub(super) path: String,
    pub(super) probes: Vec<Arc<str>>,
    pub(super) tiers: Vec<Tag>,
    pub(super) disclosure: Option<Disclosure>,
}

impl HealthGroup {
    /// A group named `name` (R9) served at `path` (R24), selecting nothing
    /// yet: add [`probes`](Self::probes) or [`tiers`](Self::tiers) (R23).
    pub fn new(name: impl Into<Arc<str>>, path: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            path: path.into(),
            probes: Vec::new(),
            tiers: Vec::new(),
            disclosure: None,
        }
    }
}

setters!(HealthGroup {
    /// Adds probes by their registered names; each must be registered when
    /// [`ZbHealth::build`](super::ZbHealth::build) runs (R23).
    fn probes(names: impl IntoIterator<Item = impl Into<Arc<str>>>) |s| {
        s.probes.extend(names.into_iter().map(Into::into));
    };

    /// Adds every probe of these tiers, as registered at each request;
    /// `ready` or `active`, never `live` (R25).
    fn tiers(tiers: impl IntoIterator<Item = Tag>) |s| { s.tiers.extend(tiers) };

    /// What the group's body shows; by default the `ready` tier's level of
    /// the same endpoints.
    fn disclosure(level: Disclosure) => disclosure = Some(level);
});

/// A health group's endpoint: `GET` and `HEAD` on its path.
pub(super) struct GroupEndpoint {
    pub(super) group: HealthGroup,
    pub(super) registry: HealthRegistry,
    /// The ready tier's body style at the group's level; no token.
    pub(super) body: Body,
}

impl GroupEndpoint {
    pub(super) async fn respond(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        let selection = Selection::Group {
            probes: &self.group.probes,
            tiers: &self.group.tiers,
        };
        let answer = self.registry.answer(selection).await;
        self.body.render(&answer, &request, None, None)
    }
}
