//! The snapshot a `ChitchatClusterView` reads, and the background task
//! that rebuilds it from chitchat: on every live-node change, at least
//! every `refresh`, and frozen once gossip stops.

use std::collections::HashSet;
use std::future::{Future, pending, poll_fn};
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::{Arc, RwLock};
use std::task::Poll;

use ::chitchat::Chitchat;
use tokio::sync::{Mutex, oneshot};
use tokio::time::Instant;

use super::config::ChitchatViewConfig;
use super::hearing::Heartbeats;
use super::keys::BEAT_KEY;
use super::members::cluster_state;
use super::verdicts::{Verdicts, peer_verdicts};
use crate::cluster::view::{ClusterState, MemberStatus};

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
    heartbeats: std::sync::Mutex<Heartbeats>,
    verdicts: std::sync::Mutex<Verdicts>,
    /// Wakes the background task to write a changed verdict.
    pub(super) verdict_changed: tokio::sync::Notify,
    /// The beats written, and when the last one was.
    beat: std::sync::Mutex<(u64, Option<std::time::Instant>)>,
    started: Instant,
    pub(super) config: ChitchatViewConfig,
    /// The [`CLUSTER_MEMBERS_UP`](crate::observe::CLUSTER_MEMBERS_UP)
    /// value last set (`u64::MAX`: never), so a steady count sets nothing.
    members_up: std::sync::atomic::AtomicU64,
}

impl ViewState {
    /// Nothing seen yet: the join wait starts now.
    pub(super) fn new(config: ChitchatViewConfig) -> Self {
        Self {
            cell: RwLock::default(),
            heartbeats: std::sync::Mutex::default(),
            verdicts: std::sync::Mutex::default(),
            verdict_changed: tokio::sync::Notify::new(),
            beat: std::sync::Mutex::default(),
            members_up: std::sync::atomic::AtomicU64::new(u64::MAX),
            started: Instant::now(),
            config,
        }
    }

    /// The snapshot: `None` until the node has joined.
    pub(super) fn state(&self) -> Option<Arc<ClusterState>> {
        self.read().state.clone()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Cell> {
        // Every write is a whole-value swap: poisoning cannot leave it torn.
        self.cell.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Cell> {
        self.cell.write().unwrap_or_else(|e| e.into_inner())
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

    pub(super) fn verdicts(&self) -> std::sync::MutexGuard<'_, Verdicts> {
        self.verdicts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes [`BEAT_KEY`] when `lease / 8` has passed since the last beat.
    fn write_beat(&self, chitchat: &mut Chitchat) {
        let now = std::time::Instant::now();
        let mut beat = self.beat.lock().unwrap_or_else(|e| e.into_inner());
        let due = beat
            .1
            .is_none_or(|last| now.saturating_duration_since(last) >= self.config.lease / 8);
        if due {
            beat.0 = beat.0.wrapping_add(1);
            beat.1 = Some(now);
            chitchat.self_node_state().set(BEAT_KEY, beat.0.to_string());
        }
    }

    /// Writes this node's changed verdicts into its gossip state.
    fn write_verdicts(&self, chitchat: &mut Chitchat) {
        self.verdicts().write(chitchat);
    }

    /// Rebuilds the snapshot from `chitchat` (whose lock the caller holds).
    pub(super) fn refresh(&self, chitchat: &Chitchat) {
        self.note_peer_verdicts(chitchat);
        let joined = self.read().joined || self.has_joined(chitchat);
        if !joined {
            return;
        }
        let mut state = cluster_state(chitchat);
        self.heartbeats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .note(
                chitchat,
                &mut state,
                std::time::Instant::now(),
                self.config.lease,
            );
        let up = state
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Up && m.reachable)
            .count() as u64;
        if self
            .members_up
            .swap(up, std::sync::atomic::Ordering::Relaxed)
            != up
        {
            metrics::gauge!(crate::observe::CLUSTER_MEMBERS_UP).set(up as f64);
        }
        let state = Arc::new(state);
        let mut cell = self.write();
        if !cell.terminated {
            cell.joined = true;
            cell.state = Some(state);
        }
    }

    /// Reads every peer's shared-probe verdicts from its gossip state.
    fn note_peer_verdicts(&self, chitchat: &Chitchat) {
        let peers = peer_verdicts(chitchat);
        self.verdicts().note_peers(peers);
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
        let mut cell = self.write();
        cell.terminated = true;
        cell.state = Some(Arc::new(state));
    }
}

/// Resolves once the chitchat server has stopped.
pub(super) type Terminated = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The background task: rebuild on every live-node change and at least
/// every `refresh`, until the view is dropped or gossip stops.
pub(super) async fn run(
    shared: Arc<ViewState>,
    chitchat: Arc<Mutex<Chitchat>>,
    mut stop: oneshot::Receiver<()>,
    terminated: Option<Terminated>,
) {
    let mut terminated = terminated.unwrap_or_else(|| Box::pin(pending()));
    let mut watcher = chitchat.lock().await.live_nodes_watcher();
    let mut watching = true;
    loop {
        {
            let mut guard = chitchat.lock().await;
            shared.write_beat(&mut guard);
            shared.write_verdicts(&mut guard);
            shared.refresh(&guard);
        }
        let (watch_now, watcher) = (watching, &mut watcher);
        let changed = async move {
            if watch_now {
                watcher.changed().await.is_ok()
            } else {
                pending().await
            }
        };
        let tick = tokio::time::sleep(shared.config.refresh);
        let verdict = shared.verdict_changed.notified();
        let (mut changed, mut tick, mut verdict) = (pin!(changed), pin!(tick), pin!(verdict));
        let event = poll_fn(|cx| {
            if Pin::new(&mut stop).poll(cx).is_ready() {
                Poll::Ready(Event::Stop)
            } else if terminated.as_mut().poll(cx).is_ready() {
                Poll::Ready(Event::Terminated)
            } else if let Poll::Ready(ok) = changed.as_mut().poll(cx) {
                Poll::Ready(Event::Changed(ok))
            } else if tick.as_mut().poll(cx).is_ready() || verdict.as_mut().poll(cx).is_ready() {
                Poll::Ready(Event::Changed(true))
            } else {
                Poll::Pending
            }
        })
        .await;
        match event {
            Event::Stop => return,
            Event::Terminated => {
                shared.terminate(&*chitchat.lock().await);
                return;
            }
            Event::Changed(ok) => watching &= ok,
        }
    }
}

/// What woke the background task.
enum Event {
    /// The view was dropped.
    Stop,
    /// The chitchat server stopped.
    Terminated,
    /// Time to rebuild; `false` when the live-node watcher has closed.
    Changed(bool),
}
