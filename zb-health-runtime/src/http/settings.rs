//! [`EndpointSettings`]: the paths, bodies, disclosure levels, groups
//! and history of one port's endpoints, as plain data. Each
//! setting's setter is written here once; [`ZbHealth`](super::ZbHealth)
//! forwards to them, and a manifest's [`Settings`](crate::install::Settings)
//! holds one per port.

use std::sync::Arc;

use zb_health_spec::{Disclosure, EndpointPaths, ResponseFormat, Tag};

use super::builder::ZbHealth;
use super::group::HealthGroup;
use super::history::{DEFAULT_HISTORY_PATH, DEFAULT_HISTORY_UI_PATH};
use crate::setting::setters;
use crate::writer::{BodyStyle, ResponseWriter};

/// One port's endpoint settings; [`ZbHealth::build`](super::ZbHealth::build)
/// checks them against a registry. The defaults are ZB's: `/health/ready`,
/// `/health/active`, `/healthz`, and the canonical JSON body at `full`
/// disclosure.
#[derive(Clone)]
pub struct EndpointSettings {
    pub(super) paths: EndpointPaths,
    /// Each tier's built-in body, indexed by `Tag as usize`.
    pub(super) styles: [BodyStyle; 3],
    /// A custom writer replacing the built-in one, fed the disclosed report.
    pub(super) writer: Option<Arc<dyn ResponseWriter>>,
    /// [`authorized`](Self::authorized): one level for every tier.
    pub(super) authorized_every_tier: Option<Disclosure>,
    /// [`tier_authorized`](Self::tier_authorized), per tier.
    pub(super) authorized: [Option<Disclosure>; 3],
    /// The health groups, each served at its own path.
    pub(super) groups: Vec<HealthGroup>,
    /// Whether the history document is served, and where; off by default.
    pub(super) history: bool,
    pub(super) history_path: String,
    /// Whether the health page that reads it is served, and where.
    pub(super) history_ui: bool,
    pub(super) history_ui_path: String,
    /// [`pace_large_bodies`](Self::pace_large_bodies).
    pub(super) paced: bool,
}

impl Default for EndpointSettings {
    fn default() -> Self {
        Self {
            paths: EndpointPaths::zb(),
            styles: [BodyStyle::CANONICAL; 3],
            writer: None,
            authorized_every_tier: None,
            authorized: [None; 3],
            groups: Vec::new(),
            history: false,
            history_path: DEFAULT_HISTORY_PATH.to_owned(),
            history_ui: false,
            history_ui_path: DEFAULT_HISTORY_UI_PATH.to_owned(),
            paced: false,
        }
    }
}

impl EndpointSettings {
    /// Changes the built-in body of `tiers` with `BodyStyle`'s own setter,
    /// where that setting is written.
    fn restyle(&mut self, tiers: &[Tag], change: impl Fn(BodyStyle) -> BodyStyle) {
        for tier in tiers {
            let style = &mut self.styles[*tier as usize];
            *style = change(style.clone());
        }
    }

    /// Whether the history document is served.
    pub(crate) fn serves_history(&self) -> bool {
        self.history
    }
}

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
    /// or `HEALTH_TOKEN` through `ZbHealthServer::from_env`), on every tier whose own level it shows
    /// more than; everyone else sees the tier's own level, with the same
    /// status code. The authorized view shows the cluster addresses too.
    /// [`build`](super::ZbHealth::build) refuses a level that no tier
    /// gains from (R7).
    fn authorized(level: Disclosure) => authorized_every_tier = Some(level);

    /// [`authorized`](Self::authorized) for one tier, overriding it; the
    /// level must show more than the tier's own (R7).
    fn tier_authorized(tier: Tag, level: Disclosure) |s| { s.authorized[tier as usize] = Some(level) };

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
