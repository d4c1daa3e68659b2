//! The health endpoints on actix-web (ZB-1.1, ZB-5): one call maps them
//! all, each answering `GET` and `HEAD` and `405` otherwise.
//!
//! * the three tiers, and under `ready` and `active` one path per probe
//!   (`<tier path>/{probe}`);
//! * the startup path (`/health/started`), which runs no probe;
//! * each health group at its own path (R23–R25);
//! * when turned on, the history (`/health/history`) and the health page
//!   (`/health/ui`).
//!
//! [`ZbHealth`] sets the paths, the body (format, disclosure levels, the
//! level a bearer token unlocks) and the groups, and checks them;
//! [`ZbHealthEndpoints`] is what it builds, ready to mount.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::Either;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, web};
use zb_health_spec::{
    Disclosure, Endpoint, EndpointPaths, HealthStatus, NameOf, ResponseFormat, SpecError, Tag,
    Violations, check_group_paths, check_group_probes, check_group_tiers, check_history_paths,
    check_name, check_name_of, check_paths, resolve_authorized,
};

use crate::answer::{KeptTier, healthy_live_body};
use crate::lifecycle::LiveAnswer;
use crate::paced::{self, Paced};
use crate::registry::HealthRegistry;
use crate::report::HealthReport;
use crate::token::BearerToken;
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
    registry: HealthRegistry,
    paths: EndpointPaths,
    /// Each tier's built-in body, indexed by `Tag as usize`.
    styles: [BodyStyle; 3],
    /// A custom writer replacing the built-in one, fed the disclosed report.
    writer: Option<Arc<dyn ResponseWriter>>,
    /// [`authorized`](Self::authorized): one level for every tier.
    authorized_every_tier: Option<Disclosure>,
    /// [`tier_authorized`](Self::tier_authorized), per tier.
    authorized: [Option<Disclosure>; 3],
    /// The bearer token, when given in code.
    token: Option<Arc<BearerToken>>,
    /// The health groups, each served at its own path.
    groups: Vec<HealthGroup>,
    /// The history endpoints, off by default.
    history: HistoryOptions,
    /// [`pace_large_bodies`](Self::pace_large_bodies).
    paced: bool,
}

/// Where and whether the history is served: `/health/history`
/// (the JSON document) and `/health/ui` (the page that reads it).
#[derive(Debug, Clone)]
struct HistoryOptions {
    json: bool,
    ui: bool,
    path: String,
    ui_path: String,
}

/// The history document's default path.
pub const DEFAULT_HISTORY_PATH: &str = "/health/history";
/// The health page's default path.
pub const DEFAULT_HISTORY_UI_PATH: &str = "/health/ui";

/// A health group (a manifest's `groups`; R23–R25): a named set of
/// probes, by name or by tier, served at a path of its own with its own
/// disclosure level, and answered as `ready` is: the worst of its entries,
/// 200 while serving, 503 when `Unhealthy`, with the startup and shutdown
/// entries first while they apply. For an operator who gates a canary on
/// one dependency.
///
/// ```
/// use zb_health::http::HealthGroup;
/// use zb_health::{HealthRegistry, ProbeRegistration, ProbeResult, Tag, ZbHealth, from_fn};
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
    name: Arc<str>,
    path: String,
    probes: Vec<Arc<str>>,
    tiers: Vec<Tag>,
    disclosure: Option<Disclosure>,
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

    /// Adds probes by their registered names; each must be registered when
    /// [`ZbHealth::build`] runs (R23).
    pub fn probes<N: Into<Arc<str>>>(mut self, names: impl IntoIterator<Item = N>) -> Self {
        self.probes.extend(names.into_iter().map(Into::into));
        self
    }

    /// Adds every probe of these tiers, as registered at each request;
    /// `ready` or `active`, never `live` (R25).
    pub fn tiers(mut self, tiers: impl IntoIterator<Item = Tag>) -> Self {
        self.tiers.extend(tiers);
        self
    }

    /// What the group's body shows; by default the `ready` tier's level of
    /// the same endpoints.
    pub fn disclosure(mut self, level: Disclosure) -> Self {
        self.disclosure = Some(level);
        self
    }
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
    /// ([`HealthReport::disclosed`]); the format and `clusterReady`
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
            let style = self.styles[tag as usize].clone();
            // The live tier carries no probes (ZB-1.3), so with the built-in
            // writer its answer without watchdogs never changes: serialise
            // it once.
            let fixed_body = (tag == Tag::Live && self.writer.is_none()).then(|| {
                Bytes::from(style.json(&HealthReport::new(Tag::Live, Vec::new(), Duration::ZERO)))
            });
            Arc::new(TierEndpoint {
                tag,
                path: self.paths.get(tag).to_owned(),
                registry: self.registry.clone(),
                canonical: self.writer.is_none() && style.is_canonical(),
                style,
                writer: self.writer.clone(),
                fixed_body,
                authorized: Authorized {
                    style: authorized_style(tag),
                    token: self.token.clone(),
                },
                kept: KeptTier::default(),
                paced: self.paced,
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
                Arc::new(GroupEndpoint {
                    group: g.clone(),
                    registry: self.registry.clone(),
                    style,
                    writer: self.writer.clone(),
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
    fn check_history(&self, sink: &mut Violations<()>) {
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
    fn check_groups(&self, sink: &mut Violations<()>) {
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

/// A health group's endpoint: `GET` and `HEAD` on its path.
struct GroupEndpoint {
    group: HealthGroup,
    registry: HealthRegistry,
    /// The ready tier's body style at the group's level.
    style: BodyStyle,
    writer: Option<Arc<dyn ResponseWriter>>,
}

impl GroupEndpoint {
    async fn respond(self: Arc<Self>, _request: HttpRequest) -> HttpResponse {
        let report = self
            .registry
            .answer_group(&self.group.probes, &self.group.tiers)
            .await;
        let mut response = HttpResponse::build(tier_status_code(Tag::Ready, report.status));
        response.insert_header(no_store());
        write_body(&self.style, self.writer.as_deref(), &report, response)
    }
}

/// Every endpoint [`ZbHealth`] built (the tiers and their per-probe
/// paths, the startup path, the groups and, when on, the history and the
/// health page), ready to mount:
/// `App::new().service(endpoints)` or
/// `App::new().configure(|c| endpoints.configure(c))`. Cheap to clone into
/// each actix worker's `App` factory.
#[derive(Clone)]
pub struct ZbHealthEndpoints {
    tiers: [Arc<TierEndpoint>; 3],
    started: Arc<StartedEndpoint>,
    groups: Vec<Arc<GroupEndpoint>>,
    history: Option<Arc<HistoryEndpoint>>,
    /// The health page's path, when served.
    history_ui: Option<String>,
}

/// The history endpoint: `GET` and `HEAD`, the document at the ready
/// tier's level, or its authorized level for a request with the token.
#[derive(Clone)]
struct HistoryEndpoint {
    path: String,
    registry: HealthRegistry,
    level: Disclosure,
    addresses: bool,
    authorized: Authorized,
}

impl HistoryEndpoint {
    async fn respond(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        let (level, addresses) = match self.authorized.style_for(&request) {
            Some(style) => (style.disclosure, style.cluster_addresses),
            None => (self.level, self.addresses),
        };
        let body = self.registry.history_json(level, addresses);
        let mut response = HttpResponse::Ok();
        response.insert_header(no_store()).insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ));
        self.authorized.mark(&mut response);
        response.body(body)
    }
}

/// The health page: the same bytes for every request, embedded at build
/// time.
fn history_page() -> HttpResponse {
    let mut response = HttpResponse::with_body(
        StatusCode::OK,
        Bytes::from_static(zb_health_spec::history::PAGE.as_bytes()),
    );
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response.map_into_boxed_body()
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

impl ZbHealthEndpoints {
    /// Registers every endpoint on a `ServiceConfig`.
    pub fn configure(&self, config: &mut web::ServiceConfig) {
        config.service(self.clone());
    }

    /// The path each tier is served on.
    pub fn path(&self, tier: Tag) -> &str {
        &self.tiers[tier as usize].path
    }

    /// The path the startup endpoint is served on.
    pub fn started_path(&self) -> &str {
        &self.started.path
    }

    /// The path the history is served on, if it is
    /// ([`ZbHealth::history`]).
    pub fn history_path(&self) -> Option<&str> {
        self.history.as_ref().map(|h| h.path.as_str())
    }

    /// The path the health page is served on, if it is
    /// ([`ZbHealth::history_ui`]).
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
    /// ([`ZbHealth::authorized`]).
    pub fn offers_authorized(&self) -> bool {
        self.tiers.iter().any(|t| t.authorized.style.is_some())
    }

    /// The same endpoints with `token` as the bearer token that unlocks
    /// the authorized levels (the ones it had are replaced). The wiring
    /// path calls it with `HEALTH_TOKEN`.
    pub fn with_bearer_token(&self, token: Arc<BearerToken>) -> Self {
        let tiers = self.tiers.each_ref().map(|t| {
            let mut tier = TierEndpoint::clone(t);
            tier.authorized.token = Some(token.clone());
            Arc::new(tier)
        });
        let mut started = StartedEndpoint::clone(&self.started);
        started.authorized.token = Some(token.clone());
        let history = self.history.as_ref().map(|h| {
            let mut history = HistoryEndpoint::clone(h);
            history.authorized.token = Some(token);
            Arc::new(history)
        });
        Self {
            tiers,
            started: Arc::new(started),
            groups: self.groups.clone(),
            history,
            history_ui: self.history_ui.clone(),
        }
    }

    /// The same endpoints with large tier bodies given in slices or not
    /// ([`ZbHealth::pace_large_bodies`]: only on a server with
    /// `tcp_nodelay(true)`). [`ZbHealthServer`](crate::server::ZbHealthServer)
    /// turns it on for the servers it builds.
    pub fn pace_large_bodies(&self, on: bool) -> Self {
        let tiers = self.tiers.each_ref().map(|t| {
            let mut tier = TierEndpoint::clone(t);
            tier.paced = on;
            Arc::new(tier)
        });
        Self {
            tiers,
            ..self.clone()
        }
    }
}

/// What a request with the bearer token sees instead of the public body.
#[derive(Clone)]
struct Authorized {
    /// The body style it unlocks; `None` when the tier shows everyone the
    /// same.
    style: Option<BodyStyle>,
    /// The token; `None` leaves every request at the public level.
    token: Option<Arc<BearerToken>>,
}

impl Authorized {
    /// Whether the answer depends on the request's `Authorization`, so a
    /// cache must key on it (`Vary`).
    fn varies(&self) -> bool {
        self.style.is_some() && self.token.is_some()
    }

    /// The authorized style when `request` carries the token. A missing or
    /// wrong token is the public answer, never a 401: kubelets and load
    /// balancers cannot authenticate.
    fn style_for(&self, request: &HttpRequest) -> Option<&BodyStyle> {
        let (style, token) = (self.style.as_ref()?, self.token.as_deref()?);
        token.authorizes(request).then_some(style)
    }

    /// `Vary: Authorization` on `response` when the answer depends on it.
    fn mark(&self, response: &mut HttpResponseBuilder) {
        if self.varies() {
            response.insert_header((header::VARY, HeaderValue::from_static("authorization")));
        }
    }
}

impl HttpServiceFactory for ZbHealthEndpoints {
    fn register(self, config: &mut AppService) {
        // Every exact path before any per-probe one: actix matches in
        // registration order, and a tier at `/health` must not take
        // `/health/active` for a probe name. `live` first: the liveness
        // path is the one asked most often and meant to cost least.
        let [ready, active, live] = &self.tiers;
        for tier in [live, ready, active] {
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

/// `GET` and `HEAD` on `path`, answered by `respond`; `405` with `Allow`
/// for any other method. One route without guards, the method told apart
/// here: actix's method guard also records every method it checks for its
/// own `405`, which costs more than the whole `live` answer.
fn get_and_head<F, R>(path: String, respond: F, config: &mut AppService)
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

/// The startup path: 200 once the process has started
/// ([`HealthRegistry::started`]), 503 before. It runs no probe.
#[derive(Clone)]
struct StartedEndpoint {
    path: String,
    registry: HealthRegistry,
    /// The live tier's body style.
    style: BodyStyle,
    writer: Option<Arc<dyn ResponseWriter>>,
    /// The live tier's authorized view.
    authorized: Authorized,
}

impl StartedEndpoint {
    async fn respond(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        let report = self.registry.started();
        let status = if report.status == HealthStatus::Healthy {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        let mut response = HttpResponse::build(status);
        response.insert_header(no_store());
        self.authorized.mark(&mut response);
        let style = self.authorized.style_for(&request).unwrap_or(&self.style);
        write_body(style, self.writer.as_deref(), &report, response)
    }
}

/// The body: the built-in writer in `style`, or the custom writer over the
/// report as `style`'s disclosure shows it.
fn write_body(
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

impl ZbHealthEndpoints {
    /// One tier on its own, to mount where the others are not: on a
    /// management server, behind its own middleware, or alone. It answers
    /// from the same registry as the bundle, so every mount of a tier
    /// reports the same probes.
    ///
    /// ```no_run
    /// use actix_web::App;
    /// use zb_health::{map_zb_health, HealthRegistry, Tag};
    ///
    /// let endpoints = map_zb_health(HealthRegistry::process().clone());
    /// let live_only = App::new().service(endpoints.tier(Tag::Live));
    /// # let _ = live_only;
    /// ```
    pub fn tier(&self, tier: Tag) -> ZbHealthTier {
        ZbHealthTier(self.tiers[tier as usize].clone())
    }
}

/// One tier's endpoint, from [`ZbHealthEndpoints::tier`]: `GET` and `HEAD`
/// on its path, and for `ready` and `active` on `<path>/{probe}` (one
/// probe's answer, see [`HealthRegistry::answer_probe`]); `405` with
/// `Allow` for any other method. Cheap to clone into each actix worker's
/// `App` factory.
#[derive(Clone)]
pub struct ZbHealthTier(Arc<TierEndpoint>);

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
const UNKNOWN_PROBE_BODY: &str = r#"{"error":"no probe of this tier has this name"}"#;

/// The per-probe path of a tier served on `path`: `<path>/{probe}`; `None`
/// for a tier at `/`, whose per-probe path would take every one-segment
/// path of the application.
fn probe_path(path: &str) -> Option<String> {
    let base = path.trim_end_matches('/');
    (!base.is_empty()).then(|| format!("{base}/{{probe}}"))
}

struct TierEndpoint {
    tag: Tag,
    path: String,
    registry: HealthRegistry,
    /// The built-in writer's settings for this tier.
    style: BodyStyle,
    /// A custom writer instead of the built-in one.
    writer: Option<Arc<dyn ResponseWriter>>,
    /// Whether the body is ZB's canonical one, so the kept healthy `live`
    /// body can be served as it is.
    canonical: bool,
    /// The precomputed body of `live` with the built-in writer and no
    /// watchdog registered, when its answer cannot change.
    fixed_body: Option<Bytes>,
    /// What a request with the bearer token sees.
    authorized: Authorized,
    /// The kept answer of `ready` or `active` (see [`crate::answer`]). Per
    /// endpoint, so per disclosure level and port.
    kept: KeptTier,
    /// Large bodies go out in slices ([`ZbHealth::pace_large_bodies`]).
    paced: bool,
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
    fn register_tier(self: &Arc<Self>, config: &mut AppService) {
        let tier = self.clone();
        get_and_head(self.path.clone(), move |r| tier.clone().respond(r), config);
    }

    /// `GET` and `HEAD` on `<path>/{probe}` for `ready` and `active`;
    /// nothing for `live`, which carries no probes (ZB-1.3).
    fn register_probes(self: &Arc<Self>, config: &mut AppService) {
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
    async fn respond_probe(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
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

    async fn respond(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        // Decided before the probes run, and the same way for every
        // request: the status code never depends on it.
        let authorized = self.authorized.style_for(&request);
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

    /// `ready` or `active` with the built-in writer, through its kept
    /// answer ([`KeptTier`]).
    async fn respond_built_in(&self) -> HttpResponse {
        let (status, body) = self
            .kept
            .answer(&self.registry, self.tag, &self.style)
            .await;
        fixed_json(tier_status_code(self.tag, status), body, self.paced)
    }

    /// The body: the built-in writer in this tier's style (or the
    /// authorized one), or the custom writer over the report as that
    /// style's disclosure shows it.
    fn write(
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
    fn respond_live(&self, authorized: Option<&BodyStyle>) -> HttpResponse {
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

/// A JSON body already made, with `Cache-Control: no-store`. Built
/// directly rather than through the response builder, whose conversions
/// and error slot a fixed answer does not need: the hot path of `live`
/// and of a kept body.
///
/// With `paced`, a body of more than one slice goes out in slices
/// ([`Paced`]), so it leaves no write buffer grown to its size on the
/// connection.
fn fixed_json(status: StatusCode, body: Bytes, paced: bool) -> HttpResponse {
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

fn method_not_allowed() -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, HeaderValue::from_static("GET, HEAD")))
        .insert_header(no_store())
        .finish()
}

/// Health answers describe one instant; a cache in between would serve a
/// stale verdict to the orchestrator.
fn no_store() -> (header::HeaderName, HeaderValue) {
    (header::CACHE_CONTROL, HeaderValue::from_static("no-store"))
}

/// The kept body of a cached tier: reused while nothing changed, rendered
/// again on every change (a new result, a new probe, the drain), per
/// endpoint.
#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use actix_web::body::MessageBody;
    use actix_web::dev::{Service, ServiceResponse};
    use actix_web::test::{TestRequest, init_service};
    use actix_web::{App, web::Bytes};
    use zb_health_spec::Disclosure;

    use crate::{HealthRegistry, ProbeRegistration, ProbeResult, ZbHealth, from_fn};

    /// A probe whose description names its run: `run 1`, `run 2`…
    fn counted(name: &'static str) -> (ProbeRegistration, Arc<AtomicUsize>) {
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = runs.clone();
        let probe = from_fn(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            async move { Ok(ProbeResult::healthy().with_description(format!("run {n}"))) }
        });
        (ProbeRegistration::new(name, probe), runs)
    }

    async fn get(
        app: &impl Service<actix_http::Request, Response = ServiceResponse, Error = actix_web::Error>,
        path: &str,
    ) -> (u16, Bytes) {
        let response = app
            .call(TestRequest::get().uri(path).to_request())
            .await
            .expect("an answer");
        let status = response.status().as_u16();
        // The body's own bytes, not a copy, so a reused body is seen as one.
        let body = match response.into_body().try_into_bytes() {
            Ok(bytes) => bytes,
            Err(_) => panic!("a body of bytes"),
        };
        (status, body)
    }

    /// A registry whose orchestrator notices changes within an hour, so
    /// that the long caches below fit it (R19).
    fn detection_time_of_an_hour() -> HealthRegistry {
        HealthRegistry::builder()
            .detection_time(Duration::from_secs(3600))
            .build()
    }

    #[actix_web::test]
    async fn a_cached_tier_serves_its_last_body_until_a_change() {
        let registry = detection_time_of_an_hour();
        let (db, runs) = counted("db");
        let _db = registry
            .add(db.cache(Duration::from_secs(600)))
            .expect("registered");
        let endpoints = ZbHealth::new(registry.clone()).build().expect("valid");
        let app = init_service(App::new().service(endpoints)).await;

        // The first answer runs the probe; the second, all cached, is kept.
        let (status, _) = get(&app, "/health/ready").await;
        assert_eq!(status, 200);
        let (_, kept) = get(&app, "/health/ready").await;
        let (_, again) = get(&app, "/health/ready").await;
        // The very bytes of the kept answer: nothing was rendered again.
        assert_eq!(again.as_ptr(), kept.as_ptr());
        assert_eq!(again, kept);
        assert_eq!(runs.load(Ordering::SeqCst), 1);

        // A new probe is a change: the body is rendered with it.
        let (cache, _) = counted("cache");
        let _cache = registry
            .add(cache.cache(Duration::from_secs(600)))
            .expect("registered");
        let (_, with_cache) = get(&app, "/health/ready").await;
        let text = std::str::from_utf8(&with_cache).expect("utf-8");
        assert!(text.contains(r#""cache":"#), "{text}");

        // The drain's entry comes first although every probe is cached.
        registry.begin_drain();
        let (status, draining) = get(&app, "/health/ready").await;
        assert_eq!(status, 503);
        let text = std::str::from_utf8(&draining).expect("utf-8");
        assert!(text.contains(r#""shutdown":"#), "{text}");
    }

    #[actix_web::test]
    async fn a_background_tier_is_kept_too() {
        let registry = detection_time_of_an_hour();
        let (db, _) = counted("db");
        let _db = registry
            .add(db.refresh(Duration::from_secs(600)))
            .expect("registered");
        let endpoints = ZbHealth::new(registry).build().expect("valid");
        let app = init_service(App::new().service(endpoints)).await;

        // The schedule's first run lands on its own; until then the entry
        // fails (no result yet), which is never kept.
        let deadline = Instant::now() + Duration::from_secs(10);
        let kept = loop {
            let (status, body) = get(&app, "/health/ready").await;
            if status == 200 {
                break body;
            }
            assert!(Instant::now() < deadline, "no background result");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let (_, again) = get(&app, "/health/ready").await;
        let (_, third) = get(&app, "/health/ready").await;
        // Kept from the first answer made of the background result.
        assert_eq!(third.as_ptr(), again.as_ptr());
        assert_eq!(again, kept);
    }

    #[actix_web::test]
    async fn an_expired_result_is_rendered_again() {
        let registry = HealthRegistry::new();
        let (db, _) = counted("db");
        let _db = registry
            .add(db.cache(Duration::from_millis(50)))
            .expect("registered");
        let endpoints = ZbHealth::new(registry).build().expect("valid");
        let app = init_service(App::new().service(endpoints)).await;

        let (_, first) = get(&app, "/health/ready").await;
        assert!(
            std::str::from_utf8(&first)
                .expect("utf-8")
                .contains("run 1")
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (_, body) = get(&app, "/health/ready").await;
            if std::str::from_utf8(&body).expect("utf-8").contains("run 2") {
                break;
            }
            assert!(Instant::now() < deadline, "the cache never expired");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[actix_web::test]
    async fn a_probe_path_goes_through_the_probes_policy() {
        let registry = detection_time_of_an_hour();
        let (db, db_runs) = counted("db");
        let (cache, cache_runs) = counted("cache");
        let _probes = registry
            .add_all([db.cache(Duration::from_secs(600)), cache])
            .expect("registered");
        let endpoints = ZbHealth::new(registry).build().expect("valid");
        let app = init_service(App::new().service(endpoints)).await;

        // The tier runs both; the probe path then serves `db`'s cached
        // result and runs nothing, not even `cache`.
        assert_eq!(get(&app, "/health/ready").await.0, 200);
        for _ in 0..2 {
            let (status, body) = get(&app, "/health/ready/db").await;
            assert_eq!(status, 200);
            let text = std::str::from_utf8(&body).expect("utf-8");
            assert!(
                text.contains("run 1") && !text.contains(r#""cache":"#),
                "{text}"
            );
        }
        assert_eq!(db_runs.load(Ordering::SeqCst), 1);
        assert_eq!(cache_runs.load(Ordering::SeqCst), 1);
        assert_eq!(get(&app, "/health/ready/nothing").await.0, 404);
        assert_eq!(get(&app, "/healthz/db").await.0, 404);
    }

    #[actix_web::test]
    async fn cluster_ready_is_shown_on_the_membership_probes_path_only() {
        let registry = HealthRegistry::new();
        let (db, _) = counted("db");
        let (members, _) = counted("members");
        let _probes = registry.add_all([db, members]).expect("registered");
        let endpoints = ZbHealth::new(registry)
            .cluster_ready("members")
            .build()
            .expect("valid");
        let app = init_service(App::new().service(endpoints)).await;
        let (_, body) = get(&app, "/health/ready/members").await;
        let text = std::str::from_utf8(&body).expect("utf-8");
        assert!(text.contains(r#""clusterReady":true"#), "{text}");
        let (_, body) = get(&app, "/health/ready/db").await;
        let text = std::str::from_utf8(&body).expect("utf-8");
        assert!(!text.contains("clusterReady"), "{text}");
    }

    #[actix_web::test]
    async fn each_disclosure_level_keeps_its_own_body() {
        let registry = detection_time_of_an_hour();
        let (db, _) = counted("db");
        let _db = registry
            .add(db.cache(Duration::from_secs(600)))
            .expect("registered");
        let full = ZbHealth::new(registry.clone()).build().expect("valid");
        let names = ZbHealth::new(registry)
            .disclosure(Disclosure::Names)
            .ready_path("/names/ready")
            .active_path("/names/active")
            .live_path("/names/live")
            .started_path("/names/started")
            .build()
            .expect("valid");
        let app = init_service(App::new().service(full).service(names)).await;
        for _ in 0..2 {
            let (_, full) = get(&app, "/health/ready").await;
            let (_, names) = get(&app, "/names/ready").await;
            assert!(std::str::from_utf8(&full).expect("utf-8").contains("run 1"));
            assert!(
                !std::str::from_utf8(&names)
                    .expect("utf-8")
                    .contains("run 1")
            );
        }
    }
}
