//! [`ZbHealth`]: the paths, bodies, disclosure levels, groups and
//! history of the endpoints, checked once by [`ZbHealth::build`].

use std::sync::Arc;

use zb_health_spec::{
    Endpoint, NameOf, SpecError, Tag, Violations,
    rules::{
        check_group_paths, check_group_probes, check_group_tiers, check_history_paths, check_name,
        check_name_of, check_paths, resolve_authorized,
    },
};

use super::endpoints::ZbHealthEndpoints;
use super::group::GroupEndpoint;
use super::history::HistoryEndpoint;
use super::respond::{Authorized, Body, TierEndpoint};
use super::settings::EndpointSettings;
use super::started::StartedEndpoint;
use crate::registry::HealthRegistry;

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

/// `build` and the checks read the settings as if they were the
/// builder's own fields: the builder is a view over them. Hidden: the
/// chained setters are the public way in.
#[doc(hidden)]
impl std::ops::Deref for ZbHealth {
    type Target = EndpointSettings;

    fn deref(&self) -> &EndpointSettings {
        &self.settings
    }
}

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
        // addresses: it is an operator, not the public. No token yet: it
        // is given to the built endpoints
        // (`ZbHealthEndpoints::with_bearer_token`).
        let unlocked = |tag: Tag| Authorized {
            style: authorized[tag as usize].map(|level| {
                self.styles[tag as usize]
                    .clone()
                    .disclosure(level)
                    .cluster_addresses(true)
            }),
            token: None,
        };
        let tier = |tag: Tag| {
            let authorized = unlocked(tag);
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
            authorized: unlocked(Tag::Live),
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
                let public = Authorized::default();
                Arc::new(GroupEndpoint {
                    group: g.clone(),
                    registry: self.registry.clone(),
                    body: Body::new(style, self.writer.clone(), public, false),
                })
            })
            .collect();
        // The history speaks at the ready tier's levels: it shows the
        // probes that tier shows, and no more.
        let history = self.history.then(|| {
            self.registry.enable_history();
            Arc::new(HistoryEndpoint {
                path: self.history_path.clone(),
                registry: self.registry.clone(),
                style: self.styles[Tag::Ready as usize].clone(),
                authorized: unlocked(Tag::Ready),
            })
        });
        let history_ui = self.history_ui.then(|| self.history_ui_path.clone());
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
        if self.history {
            paths.push(("history", self.history_path.as_str(), ()));
        }
        if self.history_ui {
            paths.push(("ui", self.history_ui_path.as_str(), ()));
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
    // The ZB default paths satisfy R6; a failure here is a bug in this
    // crate, caught by its own tests.
    ZbHealth::new(registry)
        .build()
        .unwrap_or_else(|e| unreachable!("the ZB default paths are valid: {e}"))
}
