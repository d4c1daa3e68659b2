//! [`ZbHealth`]: the paths, bodies, disclosure levels, token, groups and
//! history of the endpoints, checked once by [`ZbHealth::build`].

use std::sync::Arc;

use zb_health_spec::{
    Disclosure, Endpoint, EndpointPaths, NameOf, ResponseFormat, SpecError, Tag, Violations,
    rules::{
        check_group_paths, check_group_probes, check_group_tiers, check_history_paths, check_name,
        check_name_of, check_paths, resolve_authorized,
    },
};

use super::endpoints::ZbHealthEndpoints;
use super::group::{GroupEndpoint, HealthGroup};
use super::history::{
    DEFAULT_HISTORY_PATH, DEFAULT_HISTORY_UI_PATH, HistoryEndpoint, HistoryOptions,
};
use super::respond::Authorized;
use super::respond::Body;
use super::started::StartedEndpoint;
use super::tier::TierEndpoint;
use crate::registry::HealthRegistry;
use crate::token::BearerToken;
use crate::writer::{BodyStyle, ResponseWriter};

/// Options for mapping the three tiers; [`build`](Self::build) checks them.
///
/// Each tier's body is the built-in writer's, shaped by a [`BodyStyle`]:
/// [`format`](Self::format) (ZB or pass/fail, BE-HLTH-001),
/// [`disclosure`](Self::disclosure) per tier (BE-HLTH-007) and, on
/// `ready`, [`cluster_ready`](Self::cluster_ready) (AT-8):
///
/// ```
/// use zb_health::spec::{Disclosure, ResponseFormat};
/// use zb_health::{HealthRegistry, Tag, ZbHealth};
///
/// let health = ZbHealth::new(HealthRegistry::new())
///     .format(ResponseFormat::PassFail)
///     .disclosure(Disclosure::Names)
///     .tier_disclosure(Tag::Live, Disclosure::Status)
///     .cluster_ready("akka-cluster")
///     .build()
///     .expect("valid health paths");
/// # let _ = health;
/// ```
///
/// ```no_run
/// use actix_web::{App, HttpServer};
/// use zb_health::{HealthRegistry, ZbHealth};
///
/// # async fn run() -> std::io::Result<()> {
/// let health = ZbHealth::new(HealthRegistry::process().clone())
///     .live_path("/healthz")
///     .build()
///     .expect("valid health paths");
/// HttpServer::new(move || App::new().service(health.clone()))
///     .bind(("127.0.0.1", 8080))?
///     .run()
///     .await
/// # }
/// ```
pub struct ZbHealth {
    pub(super) registry: HealthRegistry,
    pub(super) paths: EndpointPaths,
    /// Each tier's built-in body, indexed by `Tag as usize`.
    pub(super) styles: [BodyStyle; 3],
    /// A custom writer replacing the built-in one, fed the disclosed report.
    pub(super) writer: Option<Arc<dyn ResponseWriter>>,
    /// [`authorized`](Self::authorized): one level for every tier.
    pub(super) authorized_every_tier: Option<Disclosure>,
    /// [`tier_authorized`](Self::tier_authorized), per tier.
    pub(super) authorized: [Option<Disclosure>; 3],
    /// The bearer token, when given in code.
    pub(super) token: Option<Arc<BearerToken>>,
    /// The health groups, each served at its own path.
    pub(super) groups: Vec<HealthGroup>,
    /// The history endpoints, off by default.
    pub(super) history: HistoryOptions,
    /// [`pace_large_bodies`](Self::pace_large_bodies).
    pub(super) paced: bool,
}

impl ZbHealth {
    /// The ZB defaults over `registry`: `/health/ready`, `/health/active`,
    /// `/healthz`, and the canonical JSON body at `full` disclosure.
    pub fn new(registry: HealthRegistry) -> Self {
        Self {
            registry,
            paths: EndpointPaths::zb(),
            styles: [BodyStyle::CANONICAL; 3],
            writer: None,
            authorized_every_tier: None,
            authorized: [None; 3],
            token: None,
            groups: Vec::new(),
            history: HistoryOptions {
                json: false,
                ui: false,
                path: DEFAULT_HISTORY_PATH.to_owned(),
                ui_path: DEFAULT_HISTORY_UI_PATH.to_owned(),
            },
            paced: false,
        }
    }

    /// Hands a tier body larger than 32 KiB (some 380 probes and more) to
    /// actix in 32 KiB slices, so no keep-alive connection keeps a write
    /// buffer the size of that body (actix keeps up to 128 KiB per
    /// connection); each keeps about one slice instead. Off by default.
    ///
    /// **Only for a server with `HttpServer::tcp_nodelay(true)`.** A body
    /// in slices goes out in several writes, and with Nagle's algorithm
    /// (actix's default) each write after the first waits for the client
    /// to acknowledge the one before, which a keep-alive client delays by
    /// up to 40 ms. [`ZbHealthServer`](crate::server::ZbHealthServer) sets
    /// both on the servers it builds.
    pub fn pace_large_bodies(mut self, on: bool) -> Self {
        self.paced = on;
        self
    }

    /// Serves the history at [`history_path`](Self::history_path)
    /// (`/health/history`): each probe's recent results, transitions and
    /// flaps, each tier's last answer, the lifecycle and the cluster, as
    /// JSON (`spec/health-history.schema.json`), at the `ready` tier's
    /// disclosure level of these endpoints (and its authorized level for a
    /// request with the bearer token), with the cluster addresses where
    /// the tiers show them. Reading it never runs a probe. `build` turns
    /// the recording on ([`HealthRegistry::enable_history`]). Off by
    /// default.
    pub fn history(mut self, on: bool) -> Self {
        self.history.json = on;
        self
    }

    /// Serves the health page at [`history_ui_path`](Self::history_ui_path)
    /// (`/health/ui`): one self-contained HTML document
    /// ([`zb_health_spec::history::PAGE`]) that polls the history at the
    /// sibling path `history`, so turn [`history`](Self::history) on with
    /// it. Off by default.
    pub fn history_ui(mut self, on: bool) -> Self {
        self.history.ui = on;
        self
    }

    /// Overrides the history's path (`/health/history` by default); R6
    /// checks it with the others.
    pub fn history_path(mut self, path: impl Into<String>) -> Self {
        self.history.path = path.into();
        self
    }

    /// Overrides the health page's path (`/health/ui` by default); R6
    /// checks it with the others.
    pub fn history_ui_path(mut self, path: impl Into<String>) -> Self {
        self.history.ui_path = path.into();
        self
    }

    /// Serves a [`HealthGroup`] at its path beside the tiers. [`build`](Self::build)
    /// refuses a group that names an unregistered probe or selects nothing
    /// (R23), whose path collides with a tier's, the startup path, another
    /// group's or a per-probe path (R24), or that selects `live` (R25).
    pub fn group(mut self, group: HealthGroup) -> Self {
        self.groups.push(group);
        self
    }

    /// Replaces all the paths, e.g. with [`EndpointPaths::be_hlth_009`].
    pub fn paths(mut self, paths: EndpointPaths) -> Self {
        self.paths = paths;
        self
    }

    /// Overrides the ready tier's path.
    pub fn ready_path(mut self, path: impl Into<String>) -> Self {
        self.paths.ready = path.into();
        self
    }

    /// Overrides the active tier's path.
    pub fn active_path(mut self, path: impl Into<String>) -> Self {
        self.paths.active = path.into();
        self
    }

    /// Overrides the live tier's path.
    pub fn live_path(mut self, path: impl Into<String>) -> Self {
        self.paths.live = path.into();
        self
    }

    /// Overrides the startup path (`/health/started` by default).
    pub fn started_path(mut self, path: impl Into<String>) -> Self {
        self.paths.started = path.into();
        self
    }

    /// Overrides the response writer of all three tiers (and the startup
    /// path). It gets each
    /// report as the tier's [`Disclosure`] shows it
    /// ([`HealthReport::disclosed`](crate::report::HealthReport::disclosed)); the format and `clusterReady`
    /// settings are the built-in writer's and do not apply to it.
    pub fn writer(mut self, writer: impl ResponseWriter) -> Self {
        self.writer = Some(Arc::new(writer));
        self
    }

    /// The body format of all three tiers (BE-HLTH-001): ZB's canonical
    /// statuses (the default) or `pass`/`fail`. Same 200/503 either way.
    pub fn format(mut self, format: ResponseFormat) -> Self {
        for style in &mut self.styles {
            style.format = format;
        }
        self
    }

    /// The disclosure level of all three tiers (BE-HLTH-007); `full` by
    /// default. Raw error text is shown at no level.
    pub fn disclosure(mut self, level: Disclosure) -> Self {
        for style in &mut self.styles {
            style.disclosure = level;
        }
        self
    }

    /// The disclosure level of one tier, e.g. `names` on `ready` and
    /// `status` on `live`.
    pub fn tier_disclosure(mut self, tier: Tag, level: Disclosure) -> Self {
        self.styles[tier as usize].disclosure = level;
        self
    }

    /// Whether the bodies show the cluster addresses (`selfAddress`,
    /// `activeNode` in `data`, ZB-2.3c): `true` by default, as in ZB's
    /// body. A manifest's `install` sets `false` on the application port
    /// unless `endpoints.cluster_addresses: true`, and `true` on the
    /// management port.
    pub fn cluster_addresses(mut self, shown: bool) -> Self {
        for style in &mut self.styles {
            style.cluster_addresses = shown;
        }
        self
    }

    /// The level shown to a request with the bearer token
    /// ([`bearer_token`](Self::bearer_token), or `HEALTH_TOKEN` through
    /// `ZbHealthServer::from_env`), on every tier whose own level it shows
    /// more than; everyone else sees the tier's own level, with the same
    /// status code. The authorized view shows the cluster addresses too.
    /// [`build`](Self::build) refuses a level that no tier gains from
    /// (R7).
    pub fn authorized(mut self, level: Disclosure) -> Self {
        self.authorized_every_tier = Some(level);
        self
    }

    /// [`authorized`](Self::authorized) for one tier, overriding it; the
    /// level must show more than the tier's own (R7).
    pub fn tier_authorized(mut self, tier: Tag, level: Disclosure) -> Self {
        self.authorized[tier as usize] = Some(level);
        self
    }

    /// The token that unlocks the [`authorized`](Self::authorized) levels,
    /// compared in constant time. Without one every request sees the
    /// public levels. A service reads it from the environment instead
    /// (`ZbHealthServer::from_env`), never from its manifest.
    pub fn bearer_token(mut self, token: BearerToken) -> Self {
        self.token = Some(Arc::new(token));
        self
    }

    /// Adds `clusterReady` to the ready tier's body (AT-8), read from the
    /// entry `membership_entry` (the cluster-membership probe's registered
    /// name) of the same report as [`writer::cluster_ready`](crate::writer::cluster_ready)
    /// reads it: `true` when it is `Healthy` and its member status (if
    /// reported) is `up`, or when the report has no such entry. Shown at
    /// every disclosure level.
    pub fn cluster_ready(mut self, membership_entry: impl Into<Arc<str>>) -> Self {
        self.styles[Tag::Ready as usize].cluster_ready = Some(membership_entry.into());
        self
    }

    /// Checks the paths, the startup path's with the tiers' (rule R6:
    /// non-empty, absolute, distinct) and the
    /// [`cluster_ready`](Self::cluster_ready) entry name (R9: a probe name)
    /// and yields the endpoints.
    pub fn build(self) -> Result<ZbHealthEndpoints, SpecError> {
        let mut sink = Violations::new();
        let paths: Vec<(Endpoint, &str, ())> = Endpoint::ALL
            .iter()
            .map(|e| (*e, self.paths.endpoint(*e), ()))
            .collect();
        check_paths(&paths, &mut sink);
        // The entry `clusterReady` reads is a probe's name (R9).
        if let Some(name) = &self.styles[Tag::Ready as usize].cluster_ready {
            check_name(name, (), &mut sink);
        }
        self.check_groups(&mut sink);
        self.check_history(&mut sink);
        let authorized = resolve_authorized(
            self.styles.each_ref().map(|s| s.disclosure),
            self.authorized_every_tier.map(|l| (l, ())),
            self.authorized.map(|l| l.map(|l| (l, ()))),
            &mut sink,
        );
        sink.into_result()?;
        // A token holder sees the level it unlocks, and the cluster
        // addresses: it is an operator, not the public.
        let authorized_style = |tag: Tag| {
            authorized[tag as usize].map(|level| {
                self.styles[tag as usize]
                    .clone()
                    .disclosure(level)
                    .cluster_addresses(true)
            })
        };
        let tier = |tag: Tag| {
            let authorized = Authorized {
                style: authorized_style(tag),
                token: self.token.clone(),
            };
            let style = self.styles[tag as usize].clone();
            Arc::new(TierEndpoint {
                tag,
                path: self.paths.get(tag).to_owned(),
                registry: self.registry.clone(),
                body: Body::new(style, self.writer.clone(), authorized, self.paced),
            })
        };
        // The startup path speaks of the process, as `live` does: it takes
        // that tier's body style.
        let started = Arc::new(StartedEndpoint {
            path: self.paths.started.clone(),
            registry: self.registry.clone(),
            style: self.styles[Tag::Live as usize].clone(),
            writer: self.writer.clone(),
            authorized: Authorized {
                style: authorized_style(Tag::Live),
                token: self.token.clone(),
            },
        });
        // A group answers as `ready` does, at its own level; it has no
        // `clusterReady` (a verdict of the ready tier's membership entry).
        let groups = self
            .groups
            .iter()
            .map(|g| {
                let mut style = self.styles[Tag::Ready as usize].clone();
                style.cluster_ready = None;
                if let Some(level) = g.disclosure {
                    style.disclosure = level;
                }
                let public = Authorized {
                    style: None,
                    token: None,
                };
                Arc::new(GroupEndpoint {
                    group: g.clone(),
                    registry: self.registry.clone(),
                    body: Body::new(style, self.writer.clone(), public, false),
                })
            })
            .collect();
        // The history speaks at the ready tier's levels: it shows the
        // probes that tier shows, and no more.
        let history = self.history.json.then(|| {
            self.registry.enable_history();
            let style = &self.styles[Tag::Ready as usize];
            Arc::new(HistoryEndpoint {
                path: self.history.path.clone(),
                registry: self.registry.clone(),
                level: style.disclosure,
                addresses: style.cluster_addresses,
                authorized: Authorized {
                    style: authorized_style(Tag::Ready),
                    token: self.token.clone(),
                },
            })
        });
        let history_ui = self.history.ui.then(|| self.history.ui_path.clone());
        Ok(ZbHealthEndpoints {
            tiers: [tier(Tag::Ready), tier(Tag::Active), tier(Tag::Live)],
            started,
            groups,
            history,
            history_ui,
        })
    }

    /// R6 on the history's paths, when served.
    pub(super) fn check_history(&self, sink: &mut Violations<()>) {
        let mut paths = Vec::new();
        if self.history.json {
            paths.push(("history", self.history.path.as_str(), ()));
        }
        if self.history.ui {
            paths.push(("ui", self.history.ui_path.as_str(), ()));
        }
        let groups: Vec<&str> = self.groups.iter().map(|g| g.path.as_str()).collect();
        check_history_paths(&self.paths, &groups, &paths, sink);
    }

    /// R9, R23, R24 and R25 on the groups, the probes looked up in the
    /// registry as it is now.
    pub(super) fn check_groups(&self, sink: &mut Violations<()>) {
        let known = self.registry.names();
        for g in &self.groups {
            check_name_of(NameOf::Group, &g.name, (), sink);
            let tiers: Vec<(Tag, ())> = g.tiers.iter().map(|t| (*t, ())).collect();
            check_group_tiers(&g.name, &tiers, sink);
            let probes: Vec<(&str, ())> = g.probes.iter().map(|p| (&**p, ())).collect();
            check_group_probes(
                &g.name,
                &probes,
                g.tiers.len(),
                known.iter().map(|k| &**k),
                (),
                sink,
            );
        }
        let paths: Vec<(&str, &str, ())> = self
            .groups
            .iter()
            .map(|g| (&*g.name, g.path.as_str(), ()))
            .collect();
        check_group_paths(&self.paths, &paths, sink);
    }
}

/// The ZB defaults over `registry`; the spec's `MapZbHealth()`.
pub fn map_zb_health(registry: HealthRegistry) -> ZbHealthEndpoints {
    match ZbHealth::new(registry).build() {
        Ok(endpoints) => endpoints,
        // The ZB default paths satisfy R6; a failure here is a bug in this
        // crate, caught by its own tests.
        Err(e) => unreachable!("the ZB default paths are valid: {e}"),
    }
}
