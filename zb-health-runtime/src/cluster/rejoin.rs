//! Leaving the cluster and joining it again is the library's job (AT-6):
//! [`RejoinableView`] is the one view every cluster probe, the gate and the
//! shared verdicts are built on, and [`rejoin`](RejoinableView::rejoin)
//! points all of them at the new membership at once.
//!
//! Without it a service that restarts its gossip (a new chitchat node
//! after leaving) would have to re-create and `replace` every cluster
//! registration itself, and forget one. With it the registrations stay
//! as they are: after the leave ([`ClusterView::leave`], forwarded to the
//! current incarnation) they read the incarnation that left, which keeps
//! them failing (AT-6: the checks stay registered and failing, ready
//! answers 503), and from the re-join on they read the new one, which has
//! not left: the re-join is what clears the leave's latch, and nothing
//! else does.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use zb_health_spec::HealthStatus;

use super::view::{ClusterState, ClusterView};
use crate::shared::{SharedVerdicts, Tally};
use crate::sync::lock;

/// A [`ClusterView`] that a node can leave and join again: it reads the
/// current incarnation's membership, which [`rejoin`](Self::rejoin)
/// replaces. Give it wherever the manifest's `HealthDeps` (or your code)
/// takes the view, keep the `Arc`, and call `rejoin` with the new view
/// after the node joins again.
pub struct RejoinableView {
    current: RwLock<Arc<dyn ClusterView>>,
    /// The verdicts this node published, replayed into a new incarnation
    /// (a shared probe publishes only when its verdict changes).
    published: Mutex<Published>,
}

#[derive(Default)]
struct Published {
    verdicts: BTreeMap<String, bool>,
    ready: Option<HealthStatus>,
}

impl RejoinableView {
    /// A view over `first`, the node's first incarnation.
    pub fn new(first: Arc<dyn ClusterView>) -> Arc<Self> {
        Arc::new(Self {
            current: RwLock::new(first),
            published: Mutex::default(),
        })
    }

    /// The incarnation every probe reads now.
    pub fn current(&self) -> Arc<dyn ClusterView> {
        Arc::clone(&crate::sync::read(&self.current))
    }

    /// The node joined again with `view`: every probe, gate and shared
    /// verdict built on this view reads it from now on, and this node's
    /// last published verdicts are published into it. A leave of the
    /// former incarnation stays with it: `view` answers for itself, so
    /// the probes pass again once it is `Up` (AT-6: a later re-join
    /// replaces the checks).
    pub fn rejoin(&self, view: Arc<dyn ClusterView>) {
        *crate::sync::write(&self.current) = Arc::clone(&view);
        let published = lock(&self.published);
        if let Some(verdicts) = view.shared_verdicts() {
            for (probe, failing) in &published.verdicts {
                verdicts.publish(probe, *failing);
            }
            if let Some(ready) = published.ready {
                verdicts.publish_ready(ready);
            }
        }
        tracing::info!("rejoined the cluster: the cluster probes read the new membership");
    }

    fn verdicts(&self) -> Option<Arc<dyn SharedVerdicts>> {
        self.current().shared_verdicts()
    }
}

impl std::fmt::Debug for RejoinableView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RejoinableView").finish_non_exhaustive()
    }
}

impl ClusterView for RejoinableView {
    fn state(&self) -> Option<Arc<ClusterState>> {
        self.current().state()
    }

    fn shared_verdicts(self: Arc<Self>) -> Option<Arc<dyn SharedVerdicts>> {
        Some(self)
    }

    fn handover(&self) -> Option<super::handover::Handover> {
        self.current().handover()
    }

    fn step_down(&self, on: bool) -> bool {
        self.current().step_down(on)
    }

    /// The current incarnation leaves; a later [`rejoin`](Self::rejoin)
    /// replaces it with one that has not.
    fn leave(&self) -> bool {
        self.current().leave()
    }

    fn has_left(&self) -> bool {
        self.current().has_left()
    }
}

/// Forwards to the current incarnation; without shared verdicts there,
/// nothing is published and every tally is `None` (ordinary probes).
impl SharedVerdicts for RejoinableView {
    fn publish(&self, probe: &str, failing: bool) {
        lock(&self.published)
            .verdicts
            .insert(probe.to_owned(), failing);
        if let Some(v) = self.verdicts() {
            v.publish(probe, failing);
        }
    }

    fn tally(&self, probe: &str) -> Option<Tally> {
        self.verdicts()?.tally(probe)
    }

    fn member_verdicts(&self, address: &str) -> Vec<(String, bool)> {
        self.verdicts()
            .map(|v| v.member_verdicts(address))
            .unwrap_or_default()
    }

    fn publish_ready(&self, status: HealthStatus) {
        lock(&self.published).ready = Some(status);
        if let Some(v) = self.verdicts() {
            v.publish_ready(status);
        }
    }

    fn member_ready(&self, address: &str) -> Option<HealthStatus> {
        self.verdicts()?.member_ready(address)
    }
}
