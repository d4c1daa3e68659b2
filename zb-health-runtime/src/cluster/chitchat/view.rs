//! [`ChitchatClusterView`]: the [`ClusterView`] and the [`SharedVerdicts`]
//! over a running chitchat node.

use std::sync::Arc;

use ::chitchat::{Chitchat, ChitchatHandle};
use tokio::sync::{Mutex, oneshot};

use zb_health_spec::HealthStatus;

use super::config::ChitchatViewConfig;
use super::keys::publish_member;
use super::snapshot::{Terminated, ViewState, run};
use crate::cluster::handover::Handover;
use crate::cluster::view::{ClusterState, ClusterView, MemberStatus};
use crate::shared::{SharedVerdicts, Tally};

/// A [`ClusterView`] over a running chitchat node: a snapshot kept current
/// by a background task, so [`state`](ClusterView::state) costs one
/// `Arc` clone and never waits for gossip.
///
/// Share it as `Arc<dyn ClusterView>` with the probes and the gate; the
/// background task stops when the last `Arc` is dropped.
pub struct ChitchatClusterView {
    shared: Arc<ViewState>,
    chitchat: Arc<Mutex<Chitchat>>,
    /// Dropped with the view, which ends the background task.
    _stop: oneshot::Sender<()>,
}

impl std::fmt::Debug for ChitchatClusterView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChitchatClusterView")
            .field("config", &self.shared.config)
            .field("state", &self.shared.state())
            .finish_non_exhaustive()
    }
}

impl ChitchatClusterView {
    /// The view of the node behind `handle`, which also watches the
    /// server: once it stops (shutdown, abort, a fatal socket error), the
    /// view reports this node `Removed` and its peers unreachable rather
    /// than its last gossip. The usual constructor.
    ///
    /// Spawns a Tokio task: call it inside a Tokio runtime (actix's is one).
    pub fn for_handle(handle: &ChitchatHandle, config: ChitchatViewConfig) -> Arc<Self> {
        let terminated = handle.termination_watcher();
        Self::start(
            handle.chitchat(),
            config,
            Some(Box::pin(async move {
                let _ = terminated.await;
            })),
        )
    }

    /// The view of a chitchat instance without its server handle. It cannot
    /// tell when gossip stops, so prefer [`for_handle`](Self::for_handle).
    ///
    /// Spawns a Tokio task: call it inside a Tokio runtime.
    pub fn spawn(chitchat: Arc<Mutex<Chitchat>>, config: ChitchatViewConfig) -> Arc<Self> {
        Self::start(chitchat, config, None)
    }

    pub(super) fn start(
        chitchat: Arc<Mutex<Chitchat>>,
        config: ChitchatViewConfig,
        terminated: Option<Terminated>,
    ) -> Arc<Self> {
        let shared = Arc::new(ViewState::new(config));
        let (stop_tx, stop_rx) = oneshot::channel();
        tokio::spawn(run(shared.clone(), chitchat.clone(), stop_rx, terminated));
        Arc::new(Self {
            shared,
            chitchat,
            _stop: stop_tx,
        })
    }

    /// Publishes this node's status and roles (see [`publish_member`]) and
    /// refreshes the local snapshot at once, so this node's own probes and
    /// gate see the change before the next gossip round.
    pub async fn publish<I, S>(&self, status: MemberStatus, roles: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        publish_member(&self.chitchat, status, roles).await;
        self.refresh().await;
    }

    /// Rebuilds the snapshot now instead of at the next gossip round.
    pub async fn refresh(&self) {
        let guard = self.chitchat.lock().await;
        self.shared.refresh(&guard);
    }

    /// The chitchat instance behind the view.
    pub fn chitchat(&self) -> &Arc<Mutex<Chitchat>> {
        &self.chitchat
    }
}

impl ClusterView for ChitchatClusterView {
    fn state(&self) -> Option<Arc<ClusterState>> {
        self.shared.state()
    }

    fn handover(&self) -> Option<Handover> {
        Some(self.shared.config.handover())
    }

    fn shared_verdicts(self: Arc<Self>) -> Option<Arc<dyn SharedVerdicts>> {
        Some(self)
    }
}

/// Each node gossips its verdicts in its own key-values
/// ([`SHARED_VERDICT_PREFIX`](super::SHARED_VERDICT_PREFIX)); a tally counts the `Up`, reachable members
/// of the current snapshot that report one, this node's latest (not yet
/// gossiped, perhaps) included.
impl SharedVerdicts for ChitchatClusterView {
    fn publish(&self, probe: &str, failing: bool) {
        let mut verdicts = self.shared.verdicts();
        if verdicts.publish(probe, failing) {
            self.shared.verdict_changed.notify_one();
        }
    }

    fn publish_ready(&self, status: HealthStatus) {
        let mut verdicts = self.shared.verdicts();
        if verdicts.publish_ready(status) {
            self.shared.verdict_changed.notify_one();
        }
    }

    fn member_ready(&self, address: &str) -> Option<HealthStatus> {
        let own = self.state().is_some_and(|s| s.self_address == address);
        self.shared.verdicts().member_ready(address, own)
    }

    fn member_verdicts(&self, address: &str) -> Vec<(String, bool)> {
        let own = self.state().is_some_and(|s| s.self_address == address);
        self.shared.verdicts().member_verdicts(address, own)
    }

    fn tally(&self, probe: &str) -> Option<Tally> {
        let state = self.state()?;
        let verdicts = self.shared.verdicts();
        Some(verdicts.tally(&state, probe))
    }
}
