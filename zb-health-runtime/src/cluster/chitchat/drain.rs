//! A drain that takes this node out of the chitchat cluster cleanly
//! (AT-6).

use std::sync::Arc;

use super::view::ChitchatClusterView;
use crate::cluster::view::ClusterView;

/// Makes a drain take this node out of the chitchat cluster cleanly: on
/// [`Lifecycle::begin_drain`](crate::lifecycle::Lifecycle::begin_drain)
/// (a SIGTERM under [`crate::server`]) the node leaves
/// ([`ClusterView::leave`]): it gossips `Leaving`, keeping its roles, so
/// its peers stop counting it as an `Up` candidate and the next-oldest
/// node takes the active role within a few gossip rounds, without waiting
/// for failure detection (AT-6). The drain is the same leave an
/// application makes by hand, latched for the rest of the process.
pub fn leave_cluster_on_drain(
    registry: &crate::registry::HealthRegistry,
    view: Arc<ChitchatClusterView>,
) {
    registry.lifecycle().on_drain(move || {
        view.leave();
    });
}
