//! The history (`spec/history.md`): recording it, and the document that
//! `/health/history` serves.

use std::sync::Arc;

use super::inner::HealthRegistry;
use crate::history::{ClusterSource, Document, render};
use zb_health_spec::history::Since;
use zb_health_spec::{Disclosure, Tag};

/// The history (`spec/history.md`): what `/health/history` and
/// `/health/ui` show.
impl HealthRegistry {
    /// Starts recording the history: from now on every probe result (the
    /// reported entry, after hysteresis and the shared comparison) goes
    /// into its probe's fixed-size history, and each tier's answer is
    /// kept; see [`crate::history`]. [`ZbHealth::build`](crate::http::ZbHealth::build)
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
        *crate::sync::write(&self.inner.history.service) = Some(name.into());
    }

    /// Where the history reads the cluster from (see `set_cluster_view`).
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    pub(crate) fn set_history_cluster(&self, source: Arc<dyn ClusterSource>) {
        *crate::sync::write(&self.inner.history.cluster) = Some(source);
    }

    /// Tells the cluster where this node serves its history: the
    /// management server's bound `port` and the document's `path`, through
    /// the shared verdicts' gossip
    /// ([`SharedVerdicts::publish_history`](crate::shared::SharedVerdicts::publish_history)),
    /// so each member's history names every member's URL and a dashboard
    /// finds the fleet from one pod. Nothing without shared verdicts. The
    /// server calls it when it binds the management port.
    pub fn announce_history(&self, port: u16, path: &str) {
        if let Some(verdicts) = self.inner.executor.shared_verdicts() {
            verdicts.publish_history(port, path);
        }
    }

    /// The history document (`spec/health-history.schema.json`) at
    /// `level`, with the cluster addresses when `cluster_addresses`: what
    /// `/health/history` answers. It copies what was recorded and never
    /// runs a probe; raw error text is never recorded, so it shows at no
    /// level.
    pub fn history_json(&self, level: Disclosure, cluster_addresses: bool) -> String {
        self.history_delta_json(level, cluster_addresses, None)
    }

    /// The history document, or with `since` its delta
    /// (`/health/history?since=MS&cluster=DIGEST`, `spec/history.md`):
    /// only the probes with a result or transition at or after
    /// `since.since_ms`, with only those samples and transitions, the
    /// events from then, every probe's name in `delta.names`, and no
    /// cluster while its digest is the reader's. A quiet service's delta
    /// is a few hundred bytes where the document is tens of kilobytes.
    pub fn history_delta_json(
        &self,
        level: Disclosure,
        cluster_addresses: bool,
        since: Option<&Since>,
    ) -> String {
        let now = crate::history::now_ms();
        // A delta copies only the samples and transitions it sends.
        let from = since.map_or(0, |s| s.since_ms);
        let mut probes: Vec<_> = self
            .inner
            .table
            .all()
            .iter()
            .map(|p| (p.name.clone(), p.tags, p.history_view(now, from)))
            .collect();
        let h = &self.inner.history;
        let cluster = crate::sync::read(&h.cluster).clone();
        let mut events = self.inner.lifecycle.events();
        let mut names = Vec::new();
        if since.is_some() {
            names = probes.iter().map(|(name, _, _)| name.clone()).collect();
            probes.retain(|(_, _, view)| {
                !view.samples.is_empty()
                    || !view.transitions.is_empty()
                    || view.since_ms.is_some_and(|at| at >= from)
            });
            events.retain(|e| e.at_ms >= from);
        }
        let doc = Document {
            service: crate::sync::read(&h.service).clone(),
            now_ms: now,
            started_ms: h.started_ms,
            tiers: Tag::ALL.map(|t| h.tiers.last(t)),
            probes,
            lifecycle: self.inner.lifecycle.history_view(),
            events,
            cluster: cluster.and_then(|c| c.cluster()),
        };
        render(&doc, level, cluster_addresses, since.map(|s| (s, names)))
    }
}
