//! [`ZbHealthEndpoints`]: what [`ZbHealth`](super::ZbHealth) builds, the
//! routes of every endpoint, mounted with one `App::service` call.

use std::sync::Arc;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::web;
use zb_health_spec::Tag;

use super::group::GroupEndpoint;
use super::history::{HistoryEndpoint, history_page};
use super::respond::{TierEndpoint, ZbHealthTier, get_and_head};
use super::started::StartedEndpoint;
use crate::token::BearerToken;

/// Every endpoint [`ZbHealth`](super::ZbHealth) built (the tiers and their per-probe
/// paths, the startup path, the groups and, when on, the history and the
/// health page), ready to mount:
/// `App::new().service(endpoints)` or
/// `App::new().configure(|c| endpoints.configure(c))`. Cheap to clone into
/// each actix worker's `App` factory.
#[derive(Clone)]
pub struct ZbHealthEndpoints {
    pub(super) tiers: [Arc<TierEndpoint>; 3],
    pub(super) started: Arc<StartedEndpoint>,
    pub(super) groups: Vec<Arc<GroupEndpoint>>,
    pub(super) history: Option<Arc<HistoryEndpoint>>,
    /// The health page's path, when served.
    pub(super) history_ui: Option<String>,
}

impl ZbHealthEndpoints {
    /// Registers every endpoint on a `ServiceConfig`.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        config.service(self.clone());
    }

    /// The path each tier is served on.
    pub fn path(&self, tier: Tag) -> &str {
        &self.tiers[tier as usize].path
    }

    /// One tier on its own, to mount where the others are not: on a
    /// management server, behind its own middleware, or alone. It answers
    /// from the same registry as the bundle, so every mount of a tier
    /// reports the same probes.
    ///
    /// ```no_run
    /// use actix_web::App;
    /// use zb_health::prelude::{map_zb_health, HealthRegistry, Tag};
    ///
    /// let endpoints = map_zb_health(HealthRegistry::process().clone());
    /// let live_only = App::new().service(endpoints.tier(Tag::Live));
    /// # let _ = live_only;
    /// ```
    pub fn tier(&self, tier: Tag) -> ZbHealthTier {
        ZbHealthTier(self.tiers[tier as usize].clone())
    }

    /// The path the startup endpoint is served on.
    pub fn started_path(&self) -> &str {
        &self.started.path
    }

    /// The path the history is served on, if it is
    /// ([`ZbHealth::history`](super::ZbHealth::history)).
    pub fn history_path(&self) -> Option<&str> {
        self.history.as_ref().map(|h| h.path.as_str())
    }

    /// The path the health page is served on, if it is
    /// ([`ZbHealth::history_ui`](super::ZbHealth::history_ui)).
    pub fn history_ui_path(&self) -> Option<&str> {
        self.history_ui.as_deref()
    }

    /// The path the health group `name` is served on, if there is one.
    pub fn group_path(&self, name: &str) -> Option<&str> {
        self.groups
            .iter()
            .find(|g| &*g.group.name == name)
            .map(|g| g.group.path.as_str())
    }

    /// Whether any tier shows more to a request with the bearer token
    /// ([`ZbHealth::authorized`](super::ZbHealth::authorized)).
    pub fn offers_authorized(&self) -> bool {
        self.tiers.iter().any(|t| t.body.authorized.style.is_some())
    }

    /// The same endpoints with `token` as the bearer token that unlocks
    /// the authorized levels ([`ZbHealth::authorized`](super::ZbHealth::authorized)),
    /// compared in constant time; a token they had is replaced. Without
    /// one every request sees the public levels.
    ///
    /// The token is a secret of the run, not a setting of the endpoints:
    /// it is given to endpoints once built, never in their settings or the
    /// manifest (which is in the repository). [`ZbHealthServer`](crate::server::ZbHealthServer)
    /// gives it to both its ports' endpoints from `HEALTH_TOKEN` or its own
    /// [`bearer_token`](crate::server::ZbHealthServer::bearer_token), and
    /// the management port's operator controls take the same one.
    pub fn with_bearer_token(&self, token: impl Into<Arc<BearerToken>>) -> Self {
        let token = Some(token.into());
        let mut with = self.with_tiers(|tier| tier.body.authorized.token = token.clone());
        Arc::make_mut(&mut with.started).authorized.token = token.clone();
        if let Some(history) = &mut with.history {
            Arc::make_mut(history).authorized.token = token;
        }
        with
    }

    /// The same endpoints as a `tcp_nodelay(true)` server serves them:
    /// with large tier bodies in slices, which such a server sends without
    /// waiting on Nagle's algorithm ([`ZbHealth::pace_large_bodies`](super::ZbHealth::pace_large_bodies),
    /// the setting). [`ZbHealthServer`](crate::server::ZbHealthServer)
    /// serves its servers' endpoints so, and leaves the endpoints it hands
    /// out (to mount on a server of your own) as they were set.
    pub(crate) fn on_nodelay_server(&self) -> Self {
        self.with_tiers(|tier| tier.body.paced = true)
    }

    /// The same endpoints with each tier's copy changed by `change`.
    fn with_tiers(&self, change: impl Fn(&mut TierEndpoint)) -> Self {
        let tiers = self.tiers.each_ref().map(|t| {
            let mut tier = TierEndpoint::clone(t);
            change(&mut tier);
            Arc::new(tier)
        });
        Self {
            tiers,
            ..self.clone()
        }
    }

    /// The bearer token these endpoints accept, if any: the management
    /// port's operator controls accept the same one.
    pub(crate) fn token(&self) -> Option<&Arc<BearerToken>> {
        self.started.authorized.token.as_ref()
    }
}

impl HttpServiceFactory for ZbHealthEndpoints {
    fn register(self, config: &mut AppService) {
        // Every exact path before any per-probe one: actix matches in
        // registration order, and a tier at `/health` must not take
        // `/health/active` for a probe name. `ready` first, then `live`:
        // each resource a request passes over costs it about 200
        // instructions, and `ready` is asked by the kubelet as often as
        // `live` and by every load balancer besides; a kept `ready` answer
        // is meant to cost what `live` does (the bench's P2+), and `live`
        // stays cheaper than a bare static handler on an app of its own.
        let [ready, active, live] = &self.tiers;
        for tier in [ready, live, active] {
            tier.register_tier(config);
        }
        let started = self.started;
        let path = started.path.clone();
        get_and_head(path, move |r| started.clone().respond(r), config);
        for group in self.groups {
            let path = group.group.path.clone();
            get_and_head(path, move |r| group.clone().respond(r), config);
        }
        if let Some(history) = self.history {
            let path = history.path.clone();
            get_and_head(path, move |r| history.clone().respond(r), config);
        }
        if let Some(path) = self.history_ui {
            get_and_head(path, |_| std::future::ready(history_page()), config);
        }
        for tier in &self.tiers {
            tier.register_probes(config);
        }
    }
}
