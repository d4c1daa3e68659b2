//! [`ChitchatClusterView`]: the [`ClusterView`] and the [`SharedVerdicts`]
//! over a running chitchat node.

use std::sync::Arc;

use ::chitchat::{Chitchat, ChitchatHandle};
use tokio::sync::{Mutex, oneshot};

use zb_health_spec::HealthStatus;

use super::config::ChitchatViewConfig;
use super::keys::{STEP_DOWN_KEY, write_member, write_status};
use super::snapshot::{Terminated, ViewState, run};
use super::verdicts::{Record, Verdicts};
use crate::cluster::handover::Handover;
use crate::cluster::view::{ClusterState, ClusterView, MemberStatus};
use crate::executor::spawn_on_probe_thread;
use crate::shared::{RestartClaim, SharedVerdicts, Tally};
use crate::sync::lock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A [`ClusterView`] over a running chitchat node: a snapshot kept current
/// by a background task, so [`state`](ClusterView::state) costs one
/// `Arc` clone and never waits for gossip.
///
/// Share it as `Arc<dyn ClusterView>` with the probes and the gate; the
/// background task stops when the last `Arc` is dropped.
pub struct ChitchatClusterView {
    shared: Arc<ViewState>,
    chitchat: Arc<Mutex<Chitchat>>,
    /// This node's own step-down, as it decided it: its own decisions
    /// read this at once, its peers the gossiped [`STEP_DOWN_KEY`].
    stepped_down: Arc<std::sync::Mutex<Option<OwnStepDown>>>,
    /// Set by [`ClusterView::leave`], never cleared: this view's own
    /// decisions read it at once, its peers the gossiped `Leaving`.
    left: AtomicBool,
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
            stepped_down: Arc::default(),
            left: AtomicBool::new(false),
            _stop: stop_tx,
        })
    }

    /// Publishes this node's status and roles into its gossip state (its
    /// peers see them within a few gossip rounds) and refreshes the local
    /// snapshot at once, so this node's own probes and gate see the change
    /// before the next gossip round. After
    /// [`leave`](ClusterView::leave) the status published is `Leaving`
    /// whatever `status` says (a late `Up` must not make the node a
    /// candidate again); the roles are still written. Publishing `Leaving`
    /// is not a leave: it changes the gossiped status only (the policy's
    /// to map), without the latch [`leave`](ClusterView::leave) sets.
    pub async fn publish<I, S>(&self, status: MemberStatus, roles: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut guard = self.chitchat.lock().await;
        // Read under the lock that `leave` writes under, so a publish
        // racing a leave cannot gossip its status after the `Leaving`.
        let status = if self.has_left() {
            MemberStatus::Leaving
        } else {
            status
        };
        write_member(&mut guard, status, roles);
        self.shared.refresh(&guard);
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

    /// `state` with this node's own step-down as it decided it.
    fn own_step_down(&self, state: Arc<ClusterState>) -> Arc<ClusterState> {
        // This node's own step-down is what it decided, not what its
        // gossip says yet: patched in only when they differ (rarely).
        let own = lock(&self.stepped_down).map(OwnStepDown::since);
        let gossiped = state.self_member().map(|m| m.stepped_down_since);
        if gossiped.is_none() || gossiped == Some(own) {
            return state;
        }
        Arc::new(state.with_self_member(|m| m.stepped_down_since = own))
    }
}

/// This node's own step-down: stepped down, or standing again but still
/// out for the hand-over margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OwnStepDown {
    Stepped(Instant),
    Returning(Instant),
}

impl OwnStepDown {
    /// Since when the node counts as stepped down in its own decisions.
    fn since(self) -> Instant {
        match self {
            OwnStepDown::Stepped(at) | OwnStepDown::Returning(at) => at,
        }
    }
}

impl ClusterView for ChitchatClusterView {
    fn state(&self) -> Option<Arc<ClusterState>> {
        let state = self.own_step_down(self.shared.state()?);
        // A leave holds here at once, before (and whatever) gossip says.
        Some(state.as_left(self.has_left()))
    }

    /// Announces `Leaving` in gossip and latches it here at once: this
    /// node's own probes fail and its rule stops naming it from this call,
    /// its peers pass it over when the gossip reaches them. Only this
    /// node's [`STATUS_KEY`](super::STATUS_KEY) changes; its roles stay.
    fn leave(&self) -> bool {
        if self.left.swap(true, Ordering::Relaxed) {
            return true;
        }
        let (chitchat, shared) = (self.chitchat.clone(), self.shared.clone());
        spawn_on_probe_thread(async move {
            let mut guard = chitchat.lock().await;
            write_status(&mut guard, MemberStatus::Leaving);
            shared.refresh(&guard);
        });
        tracing::info!("left the cluster: Leaving gossiped, ready fails from now on");
        true
    }

    fn has_left(&self) -> bool {
        self.left.load(Ordering::Relaxed)
    }

    /// Stepping down takes effect here at once; standing again is
    /// lease-safe too: the peers hear `0` at once and stop treating this
    /// node as stepped down, while it keeps itself out for the hand-over
    /// margin, so the node that took over has heard it and stood down
    /// before it claims the role.
    fn step_down(&self, on: bool) -> bool {
        let now = Instant::now();
        let returning = {
            let mut own = lock(&self.stepped_down);
            *own = match (on, *own) {
                (true, Some(OwnStepDown::Returning(_)) | None) => Some(OwnStepDown::Stepped(now)),
                (false, Some(OwnStepDown::Stepped(_))) => Some(OwnStepDown::Returning(now)),
                (_, unchanged) => unchanged,
            };
            matches!(*own, Some(OwnStepDown::Returning(at)) if at == now)
        };
        // Gossip it; the task writes the state as it is when it runs, so
        // quick on/off calls cannot leave a stale value behind.
        let (chitchat, shared, own) = (
            self.chitchat.clone(),
            self.shared.clone(),
            self.stepped_down.clone(),
        );
        let margin = self.shared.config.handover().margin().unwrap_or_default();
        spawn_on_probe_thread(async move {
            {
                let mut guard = chitchat.lock().await;
                let stepped = matches!(*lock(&own), Some(OwnStepDown::Stepped(_)));
                guard
                    .self_node_state()
                    .set(STEP_DOWN_KEY, if stepped { "1" } else { "0" });
                shared.refresh(&guard);
            }
            if returning {
                tokio::time::sleep(margin).await;
                let mut own = lock(&own);
                if *own == Some(OwnStepDown::Returning(now)) {
                    *own = None;
                }
            }
        });
        true
    }

    fn handover(&self) -> Option<Handover> {
        Some(self.shared.config.handover())
    }

    fn shared_verdicts(self: Arc<Self>) -> Option<Arc<dyn SharedVerdicts>> {
        Some(self)
    }
}

impl ChitchatClusterView {
    /// Applies `change` to this node's verdicts; a change wakes the task
    /// that writes them into gossip.
    fn note(&self, change: impl FnOnce(&mut Verdicts) -> bool) {
        if change(&mut self.shared.verdicts()) {
            self.shared.verdict_changed.notify_one();
        }
    }

    /// `read` of what the member at `address` gossips (this node's own
    /// latest, for its own address).
    fn member<T>(&self, address: &str, read: impl FnOnce(&Record) -> Option<T>) -> Option<T> {
        let own = self.state().is_some_and(|s| s.self_address == address);
        self.shared.verdicts().member(address, own).and_then(read)
    }
}

/// Each node gossips its verdicts in its own key-values
/// ([`SHARED_VERDICT_PREFIX`](super::SHARED_VERDICT_PREFIX)); a tally counts the `Up`, reachable members
/// of the current snapshot that report one, this node's latest (not yet
/// gossiped, perhaps) included.
impl SharedVerdicts for ChitchatClusterView {
    fn publish(&self, probe: &str, failing: bool) {
        self.note(|v| v.publish(probe, failing));
    }

    fn publish_ready(&self, status: HealthStatus) {
        self.note(|v| v.publish_ready(status));
    }

    fn member_ready(&self, address: &str) -> Option<HealthStatus> {
        self.member(address, |r| r.ready)
    }

    fn member_verdicts(&self, address: &str) -> Vec<(String, bool)> {
        self.member(address, |r| Some(r.verdicts()))
            .unwrap_or_default()
    }

    /// Written into this node's key-values
    /// ([`HISTORY_KEY`](super::HISTORY_KEY)) as `:<port><path>`.
    fn publish_history(&self, port: u16, path: &str) {
        self.note(|v| v.publish_history(format!(":{port}{path}")));
    }

    fn member_history(&self, address: &str) -> Option<String> {
        self.member(address, |r| r.history_url(address))
    }

    fn tally(&self, probe: &str) -> Option<Tally> {
        let state = self.state()?;
        Some(self.shared.verdicts().tally(&state, probe))
    }

    /// Written into this node's key-values ([`RESTART_CLAIM_KEY`](super::RESTART_CLAIM_KEY))
    /// with the verdicts, on a change.
    fn claim_restart(&self, claim: Option<&RestartClaim>) -> bool {
        self.note(|v| v.claim_restart(claim.map(|c| (c.at_ms, c.probe.clone()))));
        true
    }

    fn restart_claims(&self) -> Vec<RestartClaim> {
        self.state()
            .map(|state| self.shared.verdicts().restart_claims(&state))
            .unwrap_or_default()
    }

    /// The hand-over margin: what the view allows gossip to reach every
    /// reachable member (its hand-over is always a lease, with a margin).
    fn claim_settle(&self) -> Duration {
        self.shared.config.handover().margin().unwrap_or_default()
    }
}
