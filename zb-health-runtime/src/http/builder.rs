//! [`ZbHealth`]: the paths, bodies, disclosure levels, groups and
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
use super::history::HistoryEndpoint;
use super::respond::{Authorized, Body, TierEndpoint};
use super::settings::EndpointSettings;
use super::started::StartedEndpoint;
use crate::registry::HealthRegistry;
use crate::setting::setters;
use crate::writer::ResponseWriter;

/// Options for mapping the three tiers; [`build`](Self::build) checks them.
///
/// Each tier's body is the built-in writer's, shaped by a
/// [`BodyStyle`](crate::writer::BodyStyle):
/// [`format`](Self::format) (ZB or pass/fail, BE-HLTH-001),
/// [`disclosure`](Self::disclosure) per tier (BE-HLTH-007) and, on
/// `ready`, [`cluster_ready`](Self::cluster_ready) (AT-8):
///
/// ```
/// use zb_health::spec::{Disclosure, ResponseFormat};
/// use zb_health::prelude::{HealthRegistry, Tag, ZbHealth};
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
/// use zb_health::prelude::{HealthRegistry, ZbHealth};
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
    pub(super) settings: EndpointSettings,
}

// Each setting's setter, written once: on `EndpointSettings`, and as the
// chained forward of this view over it.
setters!(&mut EndpointSettings => ZbHealth.settings {
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
    fn pace_large_bodies(on: bool) => paced = on;

    /// Serves the history at [`history_path`](Self::history_path)
    /// (`/health/history`): each probe's recent results, transitions and
    /// flaps, each tier's last answer, the lifecycle and the cluster, as
    /// JSON (`spec/health-history.schema.json`), at the `ready` tier's
    /// disclosure level of these endpoints (and its authorized level for a
    /// request with the bearer token), with the cluster addresses where
    /// the tiers show them. Reading it never runs a probe. `build` turns
    /// the recording on
    /// ([`HealthRegistry::enable_history`](crate::registry::HealthRegistry::enable_history)).
    /// Off by default.
    fn history(on: bool) => history = on;

    /// Serves the health page at [`history_ui_path`](Self::history_ui_path)
    /// (`/health/ui`): one self-contained HTML document
    /// ([`zb_health_spec::history::PAGE`]) that polls the history at the
    /// sibling path `history`, so turn [`history`](Self::history) on with
    /// it. Off by default.
    fn history_ui(on: bool) => history_ui = on;

    /// Overrides the history's path (`/health/history` by default); R6
    /// checks it with the others.
    fn history_path(path: impl Into<String>) => history_path = path.into();

    /// Overrides the health page's path (`/health/ui` by default); R6
    /// checks it with the others.
    fn history_ui_path(path: impl Into<String>) => history_ui_path = path.into();

    /// Serves a [`HealthGroup`] at its path beside the tiers.
    /// [`build`](super::ZbHealth::build) refuses a group that names an
    /// unregistered probe or selects nothing (R23), whose path collides
    /// with a tier's, the startup path, another group's or a per-probe
    /// path (R24), or that selects `live` (R25).
    fn group(group: HealthGroup) |s| { s.groups.push(group); };

    /// Replaces all the paths, e.g. with [`EndpointPaths::be_hlth_009`].
    fn paths(paths: EndpointPaths) => paths = paths;

    /// Overrides the ready tier's path.
    fn ready_path(path: impl Into<String>) => paths.ready = path.into();

    /// Overrides the active tier's path.
    fn active_path(path: impl Into<String>) => paths.active = path.into();

    /// Overrides the live tier's path.
    fn live_path(path: impl Into<String>) => paths.live = path.into();

    /// Overrides the startup path (`/health/started` by default).
    fn started_path(path: impl Into<String>) => paths.started = path.into();

    /// Overrides the response writer of all three tiers (and the startup
    /// path). It gets each report as the tier's [`Disclosure`] shows it
    /// ([`HealthReport::disclosed`](crate::report::HealthReport::disclosed));
    /// the format and `clusterReady` settings are the built-in writer's
    /// and do not apply to it.
    fn writer(writer: impl ResponseWriter) => writer = Some(Arc::new(writer));

    /// The body format of all three tiers (BE-HLTH-001): ZB's canonical
    /// statuses (the default) or `pass`/`fail`. Same 200/503 either way.
    fn format(format: ResponseFormat) |s| {
        s.styles.iter_mut().for_each(|style| style.format = format);
    };

    /// The disclosure level of all three tiers (BE-HLTH-007); `full` by
    /// default. Raw error text is shown at no level.
    fn disclosure(level: Disclosure) |s| { s.restyle(&Tag::ALL, |style| style.disclosure(level)) };

    /// The disclosure level of one tier, e.g. `names` on `ready` and
    /// `status` on `live`.
    fn tier_disclosure(tier: Tag, level: Disclosure) |s| {
        s.restyle(&[tier], |style| style.disclosure(level))
    };

    /// Whether the bodies show the cluster addresses (`selfAddress`,
    /// `activeNode` in `data`, ZB-2.3c): `true` by default, as in ZB's
    /// body. A manifest's `install` sets `false` on the application port
    /// unless `endpoints.cluster_addresses: true`, and `true` on the
    /// management port.
    fn cluster_addresses(shown: bool) |s| {
        s.restyle(&Tag::ALL, |style| style.cluster_addresses(shown))
    };

    /// The level shown to a request with the bearer token
    /// ([`ZbHealthEndpoints::with_bearer_token`](super::ZbHealthEndpoints::with_bearer_token),
    /// or `HEALTH_TOKEN` through `ZbHealthServer::from_env`), on every tier
    /// whose own level it shows more than; everyone else sees the tier's own level, with the same
    /// status code. The authorized view shows the cluster addresses too.
    /// [`build`](super::ZbHealth::build) refuses a level that no tier
    /// gains from (R7).
    fn authorized(level: Disclosure) => authorized_every_tier = Some(level);

    /// [`authorized`](Self::authorized) for one tier, overriding it; the
    /// level must show more than the tier's own (R7).
    fn tier_authorized(tier: Tag, level: Disclosure) |s| {
        s.authorized[tier as usize] = Some(level)
    };

    /// Adds `clusterReady` to the ready tier's body (AT-8), read from the
    /// entry `membership_entry` (the cluster-membership probe's registered
    /// name) of the same report as [`writer::cluster_ready`](crate::writer::cluster_ready)
    /// reads it: `true` when it is `Healthy` and its member status (if
    /// reported) is `up`, or when the report has no such entry. Shown at
    /// every disclosure level.
    fn cluster_ready(membership_entry: impl Into<Arc<str>>) |s| {
        let entry: Arc<str> = membership_entry.into();
        s.restyle(&[Tag::Ready], |style| style.cluster_ready(entry.clone()))
    };
});

impl ZbHealth {
    /// The ZB defaults over `registry`: `/health/ready`, `/health/active`,
    /// `/healthz`, and the canonical JSON body at `full` disclosure.
    pub fn new(registry: HealthRegistry) -> Self {
        Self::with_settings(registry, EndpointSettings::default())
    }

    /// `settings` over `registry`.
    pub fn with_settings(registry: HealthRegistry, settings: EndpointSettings) -> Self {
        Self { registry, settings }
    }

    /// Checks the paths, the startup path's with the tiers' (rule R6:
    /// non-empty, absolute, distinct) and the
    /// [`cluster_ready`](Self::cluster_ready) entry name (R9: a probe name)
    /// and yields the endpoints.
    pub fn build(self) -> Result<ZbHealthEndpoints, SpecError> {
        let (registry, s) = (&self.registry, &self.settings);
        let mut sink = Violations::new();
        let paths: Vec<(Endpoint, &str, ())> = Endpoint::ALL
            .iter()
            .map(|e| (*e, s.paths.endpoint(*e), ()))
            .collect();
        check_paths(&paths, &mut sink);
        // The entry `clusterReady` reads is a probe's name (R9).
        if let Some(name) = &s.styles[Tag::Ready as usize].cluster_ready {
            check_name(name, (), &mut sink);
        }
        s.check_groups(&registry.names(), &mut sink);
        s.check_history(&mut sink);
        let authorized = resolve_authorized(
            s.styles.each_ref().map(|style| style.disclosure),
            s.authorized_every_tier.map(|l| (l, ())),
            s.authorized.map(|l| l.map(|l| (l, ()))),
            &mut sink,
        );
        sink.into_result()?;
        let style = |tag: Tag| s.styles[tag as usize].clone();
        // A token holder sees the level it unlocks, and the cluster
        // addresses: it is an operator, not the public. No token yet: it
        // is given to the built endpoints
        // (`ZbHealthEndpoints::with_bearer_token`).
        let unlocked = |tag: Tag| Authorized {
            style: authorized[tag as usize]
                .map(|level| style(tag).disclosure(level).cluster_addresses(true)),
            token: None,
        };
        let tier = |tag: Tag| {
            Arc::new(TierEndpoint {
                tag,
                path: s.paths.get(tag).to_owned(),
                registry: registry.clone(),
                body: Body::new(style(tag), s.writer.clone(), unlocked(tag), s.paced),
            })
        };
        // The startup path speaks of the process, as `live` does: it takes
        // that tier's body style.
        let started = Arc::new(StartedEndpoint {
            path: s.paths.started.clone(),
            registry: registry.clone(),
            style: style(Tag::Live),
            writer: s.writer.clone(),
            authorized: unlocked(Tag::Live),
        });
        // A group answers as `ready` does, at its own level; it has no
        // `clusterReady` (a verdict of the ready tier's membership entry).
        let groups = s
            .groups
            .iter()
            .map(|g| {
                let mut ready = style(Tag::Ready);
                ready.cluster_ready = None;
                if let Some(level) = g.disclosure {
                    ready.disclosure = level;
                }
                Arc::new(GroupEndpoint {
                    group: g.clone(),
                    registry: registry.clone(),
                    body: Body::new(ready, s.writer.clone(), Authorized::default(), false),
                })
            })
            .collect();
        // The history speaks at the ready tier's levels: it shows the
        // probes that tier shows, and no more.
        let history = s.history.then(|| {
            registry.enable_history();
            Arc::new(HistoryEndpoint {
                path: s.history_path.clone(),
                registry: registry.clone(),
                style: style(Tag::Ready),
                authorized: unlocked(Tag::Ready),
            })
        });
        let history_ui = s.history_ui.then(|| s.history_ui_path.clone());
        Ok(ZbHealthEndpoints {
            tiers: [tier(Tag::Ready), tier(Tag::Active), tier(Tag::Live)],
            started,
            groups,
            history,
            history_ui,
        })
    }
}

impl EndpointSettings {
    /// R6 on the history's paths, when served.
    fn check_history(&self, sink: &mut Violations<()>) {
        let mut paths = Vec::new();
        if self.history {
            paths.push(("history", self.history_path.as_str(), ()));
        }
        if self.history_ui {
            paths.push(("ui", self.history_ui_path.as_str(), ()));
        }
        let groups: Vec<&str> = self.groups.iter().map(|g| g.path.as_str()).collect();
        check_history_paths(&self.paths, &groups, &paths, sink);
    }

    /// R9, R23, R24 and R25 on the groups, the probes looked up in `known`,
    /// the registry's as it is now.
    fn check_groups(&self, known: &[Arc<str>], sink: &mut Violations<()>) {
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
    // The ZB default paths satisfy R6; a failure here is a bug in this
    // crate, caught by its own tests.
    ZbHealth::new(registry)
        .build()
        .unwrap_or_else(|e| unreachable!("the ZB default paths are valid: {e}"))
}
