//! The cluster in the history (`spec/history.md`): every member as this
//! node's view has it, which one is active, and each member's
//! shared-probe verdicts and ready verdict where the gossip carries them.

use std::sync::Arc;

use super::{ClusterActiveNode, ClusterView};
use crate::history::{ClusterDoc, ClusterSource, MemberDoc};
use crate::registry::HealthRegistry;
use crate::shared::SharedVerdicts;

/// The history's reading of a cluster view.
struct ViewSource {
    view: Arc<dyn ClusterView>,
    verdicts: Option<Arc<dyn SharedVerdicts>>,
}

impl ClusterSource for ViewSource {
    fn cluster(&self) -> Option<ClusterDoc> {
        let Some(state) = self.view.state() else {
            // A view that has not joined yet: no members to show.
            return Some(ClusterDoc::default());
        };
        // The rule `cluster::active` applies, unscoped: the oldest
        // reachable `Up` member.
        let active = ClusterActiveNode::unscoped()
            .oldest_up(&state, None)
            .map(|m| m.address.clone());
        let verdicts = self.verdicts.as_deref();
        let members = state
            .members
            .iter()
            .map(|m| MemberDoc {
                address: m.address.clone(),
                status: m.status.as_str(),
                reachable: m.reachable,
                active: active.as_deref() == Some(m.address.as_str()),
                is_self: m.address == state.self_address,
                shared: verdicts.map_or_else(Vec::new, |v| v.member_verdicts(&m.address)),
                ready: verdicts.and_then(|v| v.member_ready(&m.address)),
                history: verdicts.and_then(|v| v.member_history(&m.address)),
            })
            .collect();
        Some(ClusterDoc {
            self_address: Some(state.self_address.clone()),
            active,
            members,
        })
    }
}

/// The cluster in the history.
impl HealthRegistry {
    /// The cluster view the history (`/health/history`) shows: every member
    /// with its status and reachability, the active one (the oldest
    /// reachable `Up` member, as [`ClusterActiveNode::unscoped`] decides),
    /// and, when the view carries the shared-probe gossip
    /// ([`ClusterView::shared_verdicts`]), each member's verdicts and the
    /// ready verdict it publishes (this node publishes its own while the
    /// history is enabled). A
    /// manifest's `install` sets its `cluster_view`. Reading it never
    /// runs a probe.
    pub fn set_cluster_view(&self, view: Arc<dyn ClusterView>) {
        let verdicts = Arc::clone(&view).shared_verdicts();
        self.set_history_cluster(Arc::new(ViewSource { view, verdicts }));
    }
}
