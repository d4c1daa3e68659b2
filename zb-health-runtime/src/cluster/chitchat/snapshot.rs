//! The snapshot a `ChitchatClusterView` reads, and the background task
//! that rebuilds it from chitchat: on every live-node change, at least
//! every `refresh`, and frozen once gossip stops.

use std::collections::HashSet;
use std::future::{Future, pending};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as SyncMutex, MutexGuard, RwLock};

use ::chitchat::Chitchat;
use tokio::sync::{Mutex, oneshot};
use tokio::time::Instant;

use super::config::ChitchatViewConfig;
use super::hearing::Heartbeats;
use super::keys::BEAT_KEY;
use super::members::cluster_state;
use super::verdicts::{Verdicts, peer_verdicts};
use crate::cluster::view::{ClusterState, MemberStatus};
use crate::sync::lock;

/// What `state()` reads: the snapshot and whether gossip has stopped, under
/// one lock so a late refresh cannot overwrite the final snapshot.
#[derive(Default)]
struct Cell {
    state: Option<Arc<ClusterState>>,
    joined: bool,
    terminated: bool,
}

/// What a view and its background task share.
pub(super) struct ViewState {
    cell: RwLock<Cell>,
    heartbeats: SyncMutex<Heartbeats>,
    verdicts: SyncMutex<Verdicts>,
    /// Wakes the background task to write a changed verdict.
    pub(super) verdict_changed: tokio::sync::Notify,
    /// The beats written, and when the last one was.
    beat: SyncMutex<(u64, Option<std::time::Instant>)>,
    started: Instant,
    pub(super) config: ChitchatViewConfig,
    /// The [`CLUSTER_MEMBERS_UP`](crate::observe::CLUSTER_MEMBERS_UP)
    /// value last set (`u64::MAX`: never), so a steady count sets nothing.
    members_up: AtomicU64,
}

impl ViewState {
    /// Nothing seen yet: the join wait starts now.
    pub(super) fn new(config: ChitchatViewConfig) -> Self {
        Self {
            cell: RwLock::default(),
            heartbeats: SyncMutex::default(),
            verdicts: SyncMutex::default(),
            verdict_changed: tokio::sync::Notify::new(),
            beat: SyncMutex::default(),
            members_up: AtomicU64::new(u64::MAX),
            started: Instant::now(),
            config,
        }
    }

    /// The snapshot: `None` until the node has joined.
    pub(super) fn state(&self) -> Option<Arc<ClusterState>> {
        crate::sync::read(&self.cell).state.clone()
    }

    /// Whether every seed other than self is live, or the wait is over.
    fn has_joined(&self, chitchat: &Chitchat) -> bool {
        if self.started.elapsed() >= self.config.join_timeout {
            return true;
        }
        let own = chitchat.self_chitchat_id().gossip_advertise_addr;
        let live: HashSet<SocketAddr> = chitchat
            .live_nodes()
            .map(|id| id.gossip_advertise_addr)
            .collect();
        chitchat
            .seed_nodes()
            .into_iter()
            .filter(|s| *s != own)
            .all(|s| live.contains(&s))
    }

    pub(super) fn verdicts(&self) -> MutexGuard<'_, Verdicts> {
        lock(&self.verdicts)
    }

    /// Writes [`BEAT_KEY`] when `lease / 8` has passed since the last beat.
    fn write_beat(&self, chitchat: &mut Chitchat) {
        let now = std::time::Instant::now();
        let mut beat = lock(&self.beat);
        let due = beat
            .1
            .is_none_or(|last| now.saturating_duration_since(last) >= self.config.lease / 8);
        if due {
            beat.0 = beat.0.wrapping_add(1);
            beat.1 = Some(now);
            chitchat.self_node_state().set(BEAT_KEY, beat.0.to_string());
        }
    }

    /// Rebuilds the snapshot from `chitchat` (whose lock the caller holds).
    pub(super) fn refresh(&self, chitchat: &Chitchat) {
        self.verdicts().note_peers(peer_verdicts(chitchat));
        let joined = crate::sync::read(&self.cell).joined || self.has_joined(chitchat);
        if !joined {
            return;
        }
        let mut state = cluster_state(chitchat);
        let now = std::time::Instant::now();
        lock(&self.heartbeats).note(chitchat, &mut state, now, self.config.lease);
        let up = state
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Up && m.reachable)
            .count() as u64;
        if self.members_up.swap(up, Ordering::Relaxed) != up {
            metrics::gauge!(crate::observe::CLUSTER_MEMBERS_UP).set(up as f64);
        }
        let state = Arc::new(state);
        let mut cell = crate::sync::write(&self.cell);
        if !cell.terminated {
            cell.joined = true;
            cell.state = Some(state);
        }
    }

    /// Freezes the final snapshot once gossip has stopped: self `Removed`,
    /// every peer unreachable.
    fn terminate(&self, chitchat: &Chitchat) {
        let mut state = cluster_state(chitchat);
        for m in &mut state.members {
            if m.address == state.self_address {
                m.status = MemberStatus::Removed;
            } else {
                m.reachable = false;
            }
        }
        let mut cell = crate::sync::write(&self.cell);
        cell.terminated = true;
        cell.state = Some(Arc::new(state));
    }
}

/// Resolves once the chitchat server has stopped.
pub(super) type Terminated = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The background task: rebuild on every live-node change and at least
/// every `refresh` (or on a changed verdict), until the view is dropped
/// or gossip stops.
pub(super) async fn run(
    shared: Arc<ViewState>,
    chitchat: Arc<Mutex<Chitchat>>,
    mut stop: oneshot::Receiver<()>,
    terminated: Option<Terminated>,
) {
    let mut terminated = terminated.unwrap_or_else(|| Box::pin(pending()));
    let mut watcher = chitchat.lock().await.live_nodes_watcher();
    // `false` once the live-node watcher has closed.
    let mut watching = true;
    loop {
        {
            let mut guard = chitchat.lock().await;
            shared.write_beat(&mut guard);
            shared.verdicts().write(&mut guard);
            shared.refresh(&guard);
        }
        tokio::select! {
            biased;
            _ = &mut stop => return,
            () = &mut terminated => {
                shared.terminate(&*chitchat.lock().await);
                return;
            }
            changed = watcher.changed(), if watching => watching = changed.is_ok(),
            () = tokio::time::sleep(shared.config.refresh) => {}
            () = shared.verdict_changed.notified() => {}
        }
    }
}
