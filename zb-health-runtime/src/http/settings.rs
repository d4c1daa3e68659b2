//! [`EndpointSettings`]: the paths, bodies, disclosure levels, groups
//! and history of one port's endpoints, as plain data; a manifest's
//! [`Settings`](crate::install::Settings) holds one per port. Each
//! setting's setter is written once, in the table beside
//! [`ZbHealth`](super::ZbHealth) (`builder.rs`), which forwards to them.

use std::sync::Arc;

use zb_health_spec::{Disclosure, EndpointPaths, Tag};

use super::group::HealthGroup;
use super::history::{DEFAULT_HISTORY_PATH, DEFAULT_HISTORY_UI_PATH};
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
    /// Whether the history document is served; off by default.
    pub(super) history: bool,
    /// Where the history document is served.
    pub(super) history_path: String,
    /// Whether the health page that reads it is served; off by default.
    pub(super) history_ui: bool,
    /// Where the health page is served.
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
    pub(super) fn restyle(&mut self, tiers: &[Tag], change: impl Fn(BodyStyle) -> BodyStyle) {
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
