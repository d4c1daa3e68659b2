//! [`ClusterActiveNodeGate`]: the cluster's answer to "is this node the
//! active one?" for gated routes (ZB-4), from the same rule and view as the
//! active-node probe.

use std::sync::Arc;

use super::active::ClusterActiveNode;
use super::view::ClusterView;
use crate::gate::ActiveNodeGate;

/// The cluster's [`ActiveNodeGate`] (ZB-4, the spec's `AkkaActiveNodeGate`):
/// reads the view directly with [`ClusterActiveNode`], so a gated endpoint
/// and the `/health/active` probe cannot disagree. `false` while no
/// cluster is available.
pub struct ClusterActiveNodeGate {
    view: Arc<dyn ClusterView>,
    rule: ClusterActiveNode,
}

impl ClusterActiveNodeGate {
    /// The gate over `view` with `rule`, on the view's hand-over timing
    /// ([`ClusterView::handover`]) unless the rule sets one, as the probe.
    pub fn new(view: Arc<dyn ClusterView>, rule: ClusterActiveNode) -> Self {
        Self {
            rule: rule.timed_by(view.handover()),
            view,
        }
    }
}

impl ActiveNodeGate for ClusterActiveNodeGate {
    fn is_active_node(&self) -> bool {
        self.view
            .state()
            .is_some_and(|s| self.rule.decide(&s).is_active())
    }
}
