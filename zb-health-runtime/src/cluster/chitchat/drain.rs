//! A drain that takes this node out of the chitchat cluster cleanly
//! (AT-6).

use std::sync::Arc;

use super::view::ChitchatClusterView;
use crate::cluster::view::MemberStatus;

/// Makes a drain take this node out of the chitchat cluster cleanly: on
/// [`HealthRegistry::begin_drain`](crate::HealthRegistry::begin_drain) the node gossips `Leaving` (keeping
/// `roles`), so its peers stop counting it as an `Up` candidate and the
/// next-oldest node takes the active role within a few gossip rounds,
/// without waiting for failure detection (AT-6).
///
/// Publishing needs chitchat's async lock, so the hook spawns it on the
/// current tokio runtime (the drain runs on one under [`crate::server`]); with no
/// runtime it logs and does nothing.
pub fn leave_cluster_on_drain(
    registry: &crate::registry::HealthRegistry,
    view: Arc<ChitchatClusterView>,
    roles: Vec<String>,
) {
    registry.on_drain(move || match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                view.publish(MemberStatus::Leaving, roles).await;
            });
        }
        Err(_) => tracing::warn!("drain outside a tokio runtime: cannot announce Leaving"),
    });
}
