//! The history (`spec/history.md`): recording it, and the document that
//! `/health/history` serves.

use std::sync::Arc;

use super::inner::HealthRegistry;
use crate::history::{ClusterSource, Document, render};
use zb_health_spec::{Disclosure, Tag};

/// The history (`spec/history.md`): what `/health/history` and
/// `/health/ui` show.
impl HealthRegistry {
    /// Starts recording the history: from now on every probe result (the
    /// reported entry, after hysteresis and the shared comparison) goes
    /// into its probe's fixed-size history, and each tier's answer is
    /// kept; see [`crate::history`]. [`ZbHealth::build`](crate::ZbHealth::build)
    /// calls it for endpoints that serve the history. Until then a result
    /// costs one relaxed load. There is no way back.
    pub fn enable_history(&self) {
        self.inner.executor.enable_history();
    }

    /// Whether the history is recorded.
    pub fn is_history_enabled(&self) -> bool {
        self.inner.executor.history_enabled()
    }

    /// The service's name, shown as the history's `service` (a manifest's
    /// `install` sets its `service`).
    pub fn set_service_name(&self, name: impl Into<Arc<str>>) {
        *self
            .inner
            .history
            .service
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(name.into());
    }

    /// Where the history reads the cluster from (see `set_cluster_view`).
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    pub(crate) fn set_history_cluster(&self, source: Arc<dyn ClusterSource>) {
        *self
            .inner
            .history
            .cluster
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(source);
    }

    /// The history document (`spec/health-history.schema.json`) at
    /// `level`, with the cluster addresses when `cluster_addresses`: what
    /// `/health/history` answers. It copies what was recorded and never
    /// runs a probe; raw error text is never recorded, so it shows at no
    /// level.
    pub fn history_json(&self, level: Disclosure, cluster_addresses: bool) -> String {
        let now = crate::history::now_ms();
        let probes = self
            .inner
            .table
            .all()
            .iter()
            .map(|p| (p.name.clone(), p.tags, p.history_view(now)))
            .collect();
        let h = &self.inner.history;
        let cluster = h.cluster.read().unwrap_or_else(|e| e.into_inner()).clone();
        let doc = Document {
            service: h.service.read().unwrap_or_else(|e| e.into_inner()).clone(),
            now_ms: now,
            started_ms: h.started_ms,
            tiers: Tag::ALL.map(|t| h.tiers.last(t)),
            probes,
            lifecycle: self.inner.lifecycle.history_view(),
            events: self.inner.lifecycle.events(),
            cluster: cluster.and_then(|c| c.cluster()),
        };
        render(&doc, level, cluster_addresses)
    }
}
