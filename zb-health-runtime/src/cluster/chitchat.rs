//! A [`ClusterView`] over [chitchat](https://github.com/quickwit-oss/chitchat)
//! gossip, so the cluster probes, the gate and the app run on a real
//! membership protocol without Akka.
//!
//! # How chitchat maps onto the model
//!
//! | [`Member`] field | chitchat source |
//! |---|---|
//! | `address` | the node's `gossip_advertise_addr`, e.g. `127.0.0.1:7001` |
//! | `age` | its `generation_id`: smaller is older. A restarted node comes back with a new, larger generation, so it rejoins as the **youngest** even on its old address (ZB-2.3a). |
//! | `status` | the key [`STATUS_KEY`] in its key-value state ([`MemberStatus::as_str`]); missing or unknown reads as `Joining` |
//! | `roles` | the key [`ROLES_KEY`], comma-separated |
//! | `reachable` | chitchat's phi-accrual failure detector: `false` once the detector writes the node off |
//! | `last_heard` | when this view's rebuild noticed the node's gossip state advance (its [`BEAT_KEY`] versions, which only a two-way exchange delivers; its heartbeat if it writes no beat). Chitchat does not say when it arrived, so up to one `refresh` late, never early; first sight counts as heard |
//! | `reachable_since` | when this view first saw the node live and heard after it was not; a silence of the lease, or a pause of this process longer than it, starts a new stretch |
//!
//! Nodes publish their own status and roles with [`member_key_values`] (as
//! the initial key-values of `spawn_chitchat`) or later with
//! [`ChitchatClusterView::publish`] / [`publish_member`].
//!
//! Generations must order ages **across** nodes: use the node's start time
//! (e.g. Unix milliseconds), chitchat's own convention. Unlike Akka's
//! leader-assigned up-numbers this relies on the hosts' clocks, so clock skew
//! larger than the time between two node starts can misorder them.
//!
//! When a node restarts on the same address, gossip still carries its former
//! incarnation (dead, until chitchat garbage-collects it). Addresses are
//! unique in a [`ClusterState`], so the view keeps only the newest generation
//! per address: like Akka, a new incarnation replaces the old one at once.
//!
//! # Snapshot, startup and shutdown
//!
//! [`ClusterView::state`] never touches chitchat's async mutex: a background
//! task rebuilds an `Arc<ClusterState>` whenever chitchat's live-node watcher
//! fires (a node joined, died or changed a key) and at least every
//! [`ChitchatViewConfig::refresh`]; `state` clones that `Arc` under a
//! short read lock. The task ends when the last handle to the view is dropped.
//!
//! `state` is `None` (startup safety: the ready-tier probes answer
//! `Degraded`; the active-node probe answers `Unhealthy` and the gate is
//! `false`, so a booting node never claims the active role) until the node
//! has **joined**: every seed other than itself is
//! live, or [`ChitchatViewConfig::join_timeout`] has passed. Before that a
//! booting node may see only itself, and a node alone in its view is the
//! oldest `Up` member: without this wait, a restarted node would call itself
//! active until gossip told it otherwise.
//!
//! When the chitchat server stops (view made with
//! [`ChitchatClusterView::for_handle`]), the last snapshot is frozen with
//! this node `Removed` and every peer unreachable, so the membership probe,
//! the active-node probe and the transport probe fail, and the gate is
//! closed (AT-6), instead of reporting the last gossip forever.
//!
//! # Partitions and split brain
//!
//! Chitchat has no connections; "reachable" is only the failure detector's
//! verdict, and it is transitive (a peer's heartbeat relayed by a third node
//! keeps it alive). In a 2|1 partition of a three-node cluster each side's
//! detector writes the other side off within the detection time, and then,
//! **without** a majority guard (no expected size on the rule, or one
//! opted out with [`allow_minority`](super::ClusterActiveNode::allow_minority)):
//!
//! * the majority side answers `Healthy` on the oldest `Up` member among
//!   its two nodes and `Unhealthy` (standby) on the other;
//! * the minority node sees itself as the only reachable `Up` member and
//!   answers `Healthy` too: **both sides have an active node**, and both
//!   gates are open. Its `ClusterTransportProbe` fails (isolated from every
//!   expected peer), so its readiness drops, but its active tier does not.
//!
//! With the cluster's size on the rule,
//! [`ClusterActiveNode::expected_size(3)`](super::ClusterActiveNode::expected_size)
//! (a majority is then required by default), the minority node decides
//! `Minority`: its active-node probe answers `Unhealthy` and its gate is
//! closed, while the majority side keeps exactly one active node. After the
//! partition heals the detector brings the peers back and every node agrees
//! on the oldest `Up` member again.
//!
//! When the partition cuts the **active** node off alone, the two sides'
//! detectors race: the majority may write the old node off before the old
//! node writes off its peers. The rule's hand-over
//! ([`Handover`](super::Handover), on whenever a majority is required)
//! takes the race out, with the timing this view states
//! ([`ChitchatViewConfig::handover`]: the lease, 2 s by default, and a
//! slack of twice the [hearing delay](ChitchatViewConfig::hearing_delay),
//! 3.5 s with chitchat's 1 s gossip and the view's 500 ms refresh): the
//! old node steps down once it has not heard a majority for the lease,
//! and the majority side elects the next-oldest only after the old node
//! has been silent for the margin (lease plus slack), so at no instant do
//! two nodes answer active (`spec/conflicts.md`). One-way loss and this
//! process's own pauses are covered as [`ChitchatViewConfig::lease`]
//! says. [`Handover::immediate_unsafe`](super::Handover::immediate_unsafe)
//! brings the race back for a faster failover. A standby cut off alone
//! never becomes active either way.
//!
//! Chitchat garbage-collects a dead node after its
//! `dead_node_grace_period` (24 h by default). From then on the node is no
//! longer an expected peer here, so a node isolated for longer than that
//! looks like a single-node cluster to `ClusterTransportProbe`. The majority
//! guard counts against the configured `expected_size` and is not affected.

use std::collections::{BTreeMap, HashSet};
use std::future::{Future, pending, poll_fn};
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::{Arc, RwLock};
use std::task::Poll;
use std::time::Duration;

use ::chitchat::{Chitchat, ChitchatHandle, ChitchatId, NodeState};
use tokio::sync::{Mutex, oneshot};
use tokio::time::Instant;

use zb_health_spec::HealthStatus;

use super::view::{ClusterState, ClusterView, Member, MemberStatus};
use crate::shared::{SharedVerdicts, Tally};

/// The key-value key holding a node's [`MemberStatus`], spelled by
/// [`MemberStatus::as_str`]. Namespaced so it cannot collide with the
/// application's own keys.
pub const STATUS_KEY: &str = "zb.status";

/// The key-value key holding a node's roles, comma-separated (role names
/// therefore cannot contain commas).
pub const ROLES_KEY: &str = "zb.roles";

/// The prefix of the key-value keys holding this node's verdict of each
/// shared probe (BE-HLTH-003, [`crate::shared`]): `zb.shared.<probe>` =
/// `ok` or `failing`.
/// One key per shared probe, written only when its verdict changes, so
/// gossip carries it only then, as one key-value operation of chitchat's
/// delta: at most `31 + n` bytes for a probe name of `n` bytes (the op
/// tag, the key and the value with their 2-byte lengths, an 8-byte
/// version, a status byte; 41 bytes for `database`), to each peer behind
/// on it, and nothing in a round where no verdict changed.
pub const SHARED_VERDICT_PREFIX: &str = "zb.shared.";

/// The key a node writes at least every `lease / 8` (a counter), so its
/// gossip state keeps advancing and a peer can tell it is heard through a
/// two-way exchange, not only through chitchat's heartbeat, which one-way
/// messages carry too ([`ChitchatViewConfig::lease`]). One
/// key-value operation of about 30 bytes per beat, to each peer: linear in
/// the cluster's size.
pub const BEAT_KEY: &str = "zb.beat";

/// The key under which a node gossips its ready verdict (`Healthy`,
/// `Degraded`, `Unhealthy`): the status its ready tier last answered, for
/// every member's history. Written on a change only.
pub const READY_VERDICT_KEY: &str = "zb.ready";

const FAILING: &str = "failing";
const OK: &str = "ok";

/// The key-values that announce `status` and `roles`: pass them as the
/// `initial_key_values` of `chitchat::spawn_chitchat`, so the node is known
/// with its status and roles from its very first gossip round.
pub fn member_key_values<I, S>(status: MemberStatus, roles: I) -> Vec<(String, String)>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    vec![
        (STATUS_KEY.to_owned(), status.as_str().to_owned()),
        (ROLES_KEY.to_owned(), join_roles(roles)),
    ]
}

/// Publishes this node's status and roles into its gossip state, e.g.
/// `Leaving` before a graceful shutdown. Peers see it within a few gossip
/// rounds. Prefer [`ChitchatClusterView::publish`], which also refreshes
/// the local snapshot at once.
pub async fn publish_member<I, S>(chitchat: &Mutex<Chitchat>, status: MemberStatus, roles: I)
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let roles = join_roles(roles);
    let mut guard = chitchat.lock().await;
    let own = guard.self_node_state();
    own.set(STATUS_KEY, status.as_str());
    own.set(ROLES_KEY, roles);
}

fn join_roles<I, S>(roles: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    roles
        .into_iter()
        .map(|r| r.as_ref().trim().to_owned())
        .filter(|r| !r.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

fn parse_roles(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The cluster as `chitchat` sees it right now, one [`Member`] per address
/// (the newest generation wins; self always wins its own address).
///
/// For callers that already hold chitchat's lock; everyone else reads the
/// cheap snapshot of [`ChitchatClusterView`].
///
/// It does not track heartbeats, so every `last_heard` is `None`;
/// [`ChitchatClusterView`] fills them in.
pub fn cluster_state(chitchat: &Chitchat) -> ClusterState {
    let own = chitchat.self_chitchat_id();
    let live: HashSet<&ChitchatId> = chitchat.live_nodes().collect();
    let newest = newest_nodes(chitchat);
    let self_address = own.gossip_advertise_addr.to_string();
    let members = newest
        .into_values()
        .map(|(id, node)| Member {
            address: id.gossip_advertise_addr.to_string(),
            status: node
                .get(STATUS_KEY)
                .and_then(MemberStatus::parse)
                .unwrap_or(MemberStatus::Joining),
            roles: parse_roles(node.get(ROLES_KEY)),
            age: id.generation_id,
            reachable: id == own || live.contains(id),
            last_heard: None,
            reachable_since: None,
        })
        .collect();
    ClusterState {
        self_address,
        members,
    }
}

/// Every node of `chitchat` by address, the newest generation of each
/// (self always wins its own address).
fn newest_nodes(chitchat: &Chitchat) -> BTreeMap<SocketAddr, (&ChitchatId, &NodeState)> {
    let own = chitchat.self_chitchat_id();
    let mut newest: BTreeMap<SocketAddr, (&ChitchatId, &NodeState)> = BTreeMap::new();
    for (id, node) in chitchat.node_states() {
        let addr = id.gossip_advertise_addr;
        let replace = match newest.get(&addr) {
            None => true,
            Some((kept, _)) => *kept != own && (id == own || id.generation_id > kept.generation_id),
        };
        if replace {
            newest.insert(addr, (id, node));
        }
    }
    newest
}

/// The shared probes' verdicts as this view holds them.
#[derive(Default)]
struct Verdicts {
    /// This node's latest, as its probes published them.
    own: BTreeMap<String, bool>,
    /// What of `own` is in chitchat's state already.
    written: BTreeMap<String, bool>,
    /// Every peer's, by address, as of the last rebuild.
    peers: std::collections::HashMap<String, BTreeMap<String, bool>>,
    /// This node's ready verdict, and what of it is written.
    own_ready: Option<HealthStatus>,
    written_ready: Option<HealthStatus>,
    /// Every peer's ready verdict, by address.
    peers_ready: std::collections::HashMap<String, HealthStatus>,
}

/// How a [`ChitchatClusterView`] keeps its snapshot and decides that the
/// node has joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChitchatViewConfig {
    /// The longest the snapshot goes without a rebuild. Changes in
    /// liveness and in key-values are picked up as chitchat reports them
    /// (once per gossip round); this bounds everything else, such as the
    /// end of the join wait or a dead node's garbage collection. Heartbeats
    /// are noted at rebuilds, so `refresh` is also part of the hand-over's
    /// slack ([`handover`](Self::handover)). Default 500 ms.
    pub refresh: Duration,
    /// The `gossip_interval` of the node's `ChitchatConfig`, which the view
    /// cannot read from chitchat: a hearing can be one gossip round old, so
    /// it is part of the hand-over's slack ([`handover`](Self::handover)).
    /// Set it to the node's; a longer value only slows the hand-over, a
    /// shorter one than the node's makes it unsafe. Default 1 s.
    pub gossip_interval: Duration,
    /// How long a booting node waits for **all** its seeds to be live
    /// before it joins with whoever it reached (possibly no one: it then
    /// forms the cluster alone, like Akka's first seed node). Until then
    /// [`ClusterView::state`] is `None`. Default 5 s, Akka's
    /// `seed-node-timeout`.
    pub join_timeout: Duration,
    /// The hand-over lease of the active-node rule this view serves
    /// ([`Handover::lease_duration`](super::Handover::lease_duration));
    /// keep the two equal. The view uses it three ways (ZB-1, exactly one active node):
    ///
    /// * **Beats.** The node writes [`BEAT_KEY`] at least every `lease / 8`
    ///   (at the next rebuild), so its gossip state keeps advancing. A peer
    ///   counts as *heard* when its state advances, not merely its
    ///   heartbeat: chitchat's heartbeat also travels in the digests of
    ///   one-way messages, so a node that can no longer be heard (its
    ///   packets dropped) would still hear everyone and keep the active
    ///   role beside its successor. Key-values arrive only through a
    ///   two-way exchange. A peer that writes no beat (an older version)
    ///   is heard by its heartbeat.
    /// * **Silence.** A peer silent for `lease` starts a new reachable
    ///   stretch when it is heard again, even if the failure detector never
    ///   wrote it off, so it counts towards a majority only after the
    ///   hand-over's slack, as after a partition.
    /// * **Own pauses.** A gap between two rebuilds longer than `lease`
    ///   means this process did not run (a long GC pause, a frozen VM,
    ///   `SIGSTOP`, a starved CPU), and is treated like a partition that
    ///   just healed: every peer's stretch starts again. Without this, a
    ///   paused active node would resume with its peers still "live" (its
    ///   detector never ran) and the gossip queued in its socket looking
    ///   fresh, and would answer active beside the successor elected while
    ///   it was frozen. A shorter pause cannot outlast the lease, so no
    ///   successor can have started.
    ///
    /// The slack must then cover `lease / 8` more: a beat, a gossip round
    /// and a refresh ([`handover`](Self::handover)). Default
    /// [`Handover::DEFAULT_LEASE`](super::Handover::DEFAULT_LEASE), 2 s.
    pub lease: Duration,
}

impl ChitchatViewConfig {
    /// How late a hearing can be noted: a beat (`lease / 8`), a gossip
    /// round and a refresh.
    pub fn hearing_delay(&self) -> Duration {
        self.lease / 8 + self.gossip_interval + self.refresh
    }

    /// The hand-over this timing supports, which the view states
    /// ([`ClusterView::handover`]) and the active-node probe and gate use:
    /// the [`lease`](Self::lease), and a slack of twice the
    /// [`hearing_delay`](Self::hearing_delay). Once for the delay itself
    /// (the successor's last hearing of the old node may be that much
    /// older than the old node's last hearing of a majority); once more
    /// to spare, for scheduling on a loaded machine, so the old node's last
    /// `active` answer and its successor's first are at least a hearing
    /// delay apart. With the defaults (1 s gossip, 500 ms refresh) the
    /// slack is 3.5 s; with the examples' 200 ms gossip and refresh, 1.3 s,
    /// a margin of 3.3 s.
    pub fn handover(&self) -> super::Handover {
        super::Handover::lease(self.lease, self.hearing_delay() * 2)
    }
}

impl Default for ChitchatViewConfig {
    fn default() -> Self {
        Self {
            refresh: Duration::from_millis(500),
            gossip_interval: Duration::from_secs(1),
            join_timeout: Duration::from_secs(5),
            lease: super::Handover::DEFAULT_LEASE,
        }
    }
}

/// When this node noted each peer's heartbeat advance: the view's part of
/// the hand-over ([`Handover`](super::Handover)).
///
/// chitchat does not expose when a heartbeat arrived, so a hearing is
/// recorded at the rebuild that notices it: never earlier than it
/// happened (a successor cannot take over early), at most one
/// [`refresh`](ChitchatViewConfig::refresh) late (part of the slack). A
/// peer seen for the first time counts as heard then, which only delays a
/// take-over.
///
/// A hearing is an advance of the peer's gossip state (its versions),
/// which only a two-way exchange delivers, or of its heartbeat when it
/// writes no [`BEAT_KEY`] (see [`ChitchatViewConfig::lease`]).
///
/// It also notes since when each peer has been live and heard without a
/// break: a stretch ends when the detector writes the peer off, when the
/// peer has been silent for the lease, or when this process itself was
/// paused for longer than the lease.
#[derive(Default)]
struct Heartbeats {
    seen: std::collections::HashMap<ChitchatId, (u64, std::time::Instant)>,
    live_since: std::collections::HashMap<ChitchatId, std::time::Instant>,
    /// The previous rebuild, to notice this process's own pauses.
    last_note: Option<std::time::Instant>,
}

impl Heartbeats {
    /// Notes the hearings and liveness in `chitchat` at `now` and fills in
    /// `last_heard` and `reachable_since` for every peer of `state`.
    fn note(
        &mut self,
        chitchat: &Chitchat,
        state: &mut ClusterState,
        now: std::time::Instant,
        lease: Duration,
    ) {
        let own = chitchat.self_chitchat_id();
        let marks = chitchat
            .node_states()
            .iter()
            .filter(|(id, _)| *id != own)
            .map(|(id, node)| {
                // Versions advance only through a two-way exchange; the
                // heartbeat also through one-way digests.
                let mark = if node.get(BEAT_KEY).is_some() {
                    node.max_version()
                } else {
                    u64::from(node.heartbeat())
                };
                (id.clone(), mark)
            })
            .collect();
        let live = chitchat
            .live_nodes()
            .filter(|id| *id != own)
            .cloned()
            .collect();
        self.note_marks(marks, &live, state, now, lease);
    }

    /// [`note`](Self::note) without chitchat: `marks` holds every known
    /// peer's hearing mark (a counter that advances when it is heard),
    /// `live` the peers the failure detector holds live.
    fn note_marks(
        &mut self,
        marks: Vec<(ChitchatId, u64)>,
        live: &HashSet<ChitchatId>,
        state: &mut ClusterState,
        now: std::time::Instant,
        lease: Duration,
    ) {
        self.seen
            .retain(|id, _| marks.iter().any(|(known, _)| known == id));
        if let Some(gap) = self
            .last_note
            .replace(now)
            .map(|last| now.saturating_duration_since(last))
            .filter(|gap| *gap > lease)
        {
            tracing::warn!(
                paused_ms = gap.as_millis() as u64,
                "this node did not run for {} ms (a pause, a frozen VM or a starved CPU): its peers count towards a majority again once heard for the hand-over's slack",
                gap.as_millis()
            );
            self.live_since.clear();
        }
        let mut heard: BTreeMap<String, std::time::Instant> = BTreeMap::new();
        let mut silent: HashSet<&ChitchatId> = HashSet::new();
        for (id, mark) in &marks {
            let entry = self.seen.entry(id.clone()).or_insert((*mark, now));
            if *mark > entry.0 {
                *entry = (*mark, now);
            }
            if now.saturating_duration_since(entry.1) >= lease {
                silent.insert(id);
            }
            let at = heard
                .entry(id.gossip_advertise_addr.to_string())
                .or_insert(entry.1);
            *at = (*at).max(entry.1);
        }
        self.live_since
            .retain(|id, _| live.contains(id) && !silent.contains(id));
        for id in live.iter().filter(|id| !silent.contains(id)) {
            self.live_since.entry(id.clone()).or_insert(now);
        }
        let mut since: BTreeMap<String, std::time::Instant> = BTreeMap::new();
        for (id, at) in &self.live_since {
            // Two incarnations on one address: the later start wins.
            let at_addr = since
                .entry(id.gossip_advertise_addr.to_string())
                .or_insert(*at);
            *at_addr = (*at_addr).max(*at);
        }
        for m in &mut state.members {
            if m.address != state.self_address {
                m.last_heard = heard.get(&m.address).copied();
                // Only a reachable member has been reachable since.
                m.reachable_since = since.get(&m.address).copied().filter(|_| m.reachable);
            }
        }
    }
}

/// What `state()` reads: the snapshot and whether gossip has stopped, under
/// one lock so a late refresh cannot overwrite the final snapshot.
#[derive(Default)]
struct Cell {
    state: Option<Arc<ClusterState>>,
    joined: bool,
    terminated: bool,
}

struct Shared {
    cell: RwLock<Cell>,
    heartbeats: std::sync::Mutex<Heartbeats>,
    verdicts: std::sync::Mutex<Verdicts>,
    /// Wakes the background task to write a changed verdict.
    verdict_changed: tokio::sync::Notify,
    /// The beats written, and when the last one was.
    beat: std::sync::Mutex<(u64, Option<std::time::Instant>)>,
    started: Instant,
    config: ChitchatViewConfig,
}

impl Shared {
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

    fn verdicts(&self) -> std::sync::MutexGuard<'_, Verdicts> {
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
        let mut verdicts = self.verdicts();
        let Verdicts {
            own,
            written,
            own_ready,
            written_ready,
            ..
        } = &mut *verdicts;
        if own == written && own_ready == written_ready {
            return;
        }
        let state = chitchat.self_node_state();
        if let (Some(ready), true) = (*own_ready, own_ready != written_ready) {
            state.set(READY_VERDICT_KEY, ready.as_str());
            *written_ready = Some(ready);
        }
        for (probe, failing) in own.iter() {
            if written.get(probe) != Some(failing) {
                let value = if *failing { FAILING } else { OK };
                state.set(format!("{SHARED_VERDICT_PREFIX}{probe}"), value);
                written.insert(probe.clone(), *failing);
            }
        }
    }

    /// Rebuilds the snapshot from `chitchat` (whose lock the caller holds).
    fn refresh(&self, chitchat: &Chitchat) {
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
        let state = Arc::new(state);
        let mut cell = self.write();
        if !cell.terminated {
            cell.joined = true;
            cell.state = Some(state);
        }
    }

    /// Reads every peer's shared-probe verdicts from its gossip state.
    fn note_peer_verdicts(&self, chitchat: &Chitchat) {
        let own = chitchat.self_chitchat_id();
        let peers = newest_nodes(chitchat)
            .into_values()
            .filter(|(id, _)| *id != own)
            .map(|(id, node)| {
                let verdicts = node
                    .iter_prefix(SHARED_VERDICT_PREFIX)
                    .map(|(key, value)| {
                        let probe = &key[SHARED_VERDICT_PREFIX.len()..];
                        (probe.to_owned(), value.value == FAILING)
                    })
                    .collect();
                let ready = node
                    .iter_prefix(READY_VERDICT_KEY)
                    .find(|(key, _)| *key == READY_VERDICT_KEY)
                    .and_then(|(_, value)| {
                        HealthStatus::ALL
                            .into_iter()
                            .find(|s| s.as_str() == value.value)
                    });
                (id.gossip_advertise_addr.to_string(), (verdicts, ready))
            })
            .collect::<Vec<_>>();
        let mut verdicts = self.verdicts();
        verdicts.peers_ready = peers
            .iter()
            .filter_map(|(address, (_, ready))| ready.map(|r| (address.clone(), r)))
            .collect();
        verdicts.peers = peers
            .into_iter()
            .map(|(address, (shared, _))| (address, shared))
            .collect();
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

type Terminated = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A [`ClusterView`] over a running chitchat node: a snapshot kept current
/// by a background task, so [`state`](ClusterView::state) costs one
/// `Arc` clone and never waits for gossip.
///
/// Share it as `Arc<dyn ClusterView>` with the probes and the gate; the
/// background task stops when the last `Arc` is dropped.
pub struct ChitchatClusterView {
    shared: Arc<Shared>,
    chitchat: Arc<Mutex<Chitchat>>,
    /// Dropped with the view, which ends the background task.
    _stop: oneshot::Sender<()>,
}

impl std::fmt::Debug for ChitchatClusterView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChitchatClusterView")
            .field("config", &self.shared.config)
            .field("state", &self.shared.read().state)
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

    fn start(
        chitchat: Arc<Mutex<Chitchat>>,
        config: ChitchatViewConfig,
        terminated: Option<Terminated>,
    ) -> Arc<Self> {
        let shared = Arc::new(Shared {
            cell: RwLock::default(),
            heartbeats: std::sync::Mutex::default(),
            verdicts: std::sync::Mutex::default(),
            verdict_changed: tokio::sync::Notify::new(),
            beat: std::sync::Mutex::default(),
            started: Instant::now(),
            config,
        });
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
        self.shared.read().state.clone()
    }

    fn handover(&self) -> Option<super::Handover> {
        Some(self.shared.config.handover())
    }

    fn shared_verdicts(self: Arc<Self>) -> Option<Arc<dyn SharedVerdicts>> {
        Some(self)
    }
}

/// Each node gossips its verdicts in its own key-values
/// ([`SHARED_VERDICT_PREFIX`]); a tally counts the `Up`, reachable members
/// of the current snapshot that report one, this node's latest (not yet
/// gossiped, perhaps) included.
impl SharedVerdicts for ChitchatClusterView {
    fn publish(&self, probe: &str, failing: bool) {
        let mut verdicts = self.shared.verdicts();
        if verdicts.own.get(probe) != Some(&failing) {
            verdicts.own.insert(probe.to_owned(), failing);
            self.shared.verdict_changed.notify_one();
        }
    }

    fn publish_ready(&self, status: HealthStatus) {
        let mut verdicts = self.shared.verdicts();
        if verdicts.own_ready != Some(status) {
            verdicts.own_ready = Some(status);
            self.shared.verdict_changed.notify_one();
        }
    }

    fn member_ready(&self, address: &str) -> Option<HealthStatus> {
        let own = self.state().is_some_and(|s| s.self_address == address);
        let verdicts = self.shared.verdicts();
        if own {
            verdicts.own_ready
        } else {
            verdicts.peers_ready.get(address).copied()
        }
    }

    fn member_verdicts(&self, address: &str) -> Vec<(String, bool)> {
        let own = self.state().is_some_and(|s| s.self_address == address);
        let verdicts = self.shared.verdicts();
        let of = if own {
            Some(&verdicts.own)
        } else {
            verdicts.peers.get(address)
        };
        of.map(|v| v.iter().map(|(p, f)| (p.clone(), *f)).collect())
            .unwrap_or_default()
    }

    fn tally(&self, probe: &str) -> Option<Tally> {
        let state = self.state()?;
        let verdicts = self.shared.verdicts();
        let mut tally = Tally {
            failing: 0,
            reporting: 0,
        };
        let counted = state
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Up && m.reachable);
        for member in counted {
            let verdict = if member.address == state.self_address {
                verdicts.own.get(probe)
            } else {
                verdicts
                    .peers
                    .get(&member.address)
                    .and_then(|v| v.get(probe))
            };
            if let Some(failing) = verdict {
                tally.reporting += 1;
                tally.failing += u32::from(*failing);
            }
        }
        Some(tally)
    }
}

/// The background task: rebuild on every live-node change and at least
/// every `refresh`, until the view is dropped or gossip stops.
async fn run(
    shared: Arc<Shared>,
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

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use ::chitchat::{
        ChitchatConfig, DeletionStatus, FailureDetectorConfig, ProtocolVersion, VersionedValue,
    };
    use tokio::sync::watch;

    use super::*;

    fn id(name: &str, generation: u64, port: u16) -> ChitchatId {
        ChitchatId::new(name, generation, SocketAddr::from(([127, 0, 0, 1], port)))
    }

    fn chitchat(own: ChitchatId, seeds: &[u16]) -> Chitchat {
        let seeds: HashSet<SocketAddr> = seeds
            .iter()
            .map(|p| SocketAddr::from(([127, 0, 0, 1], *p)))
            .collect();
        let (_tx, rx) = watch::channel(seeds);
        let config = ChitchatConfig {
            listen_addr: own.gossip_advertise_addr,
            chitchat_id: own,
            cluster_id: "unit".into(),
            gossip_interval: Duration::from_millis(100),
            seed_nodes: Vec::new(),
            failure_detector_config: FailureDetectorConfig::default(),
            marked_for_deletion_grace_period: Duration::from_secs(60),
            catchup_callback: None,
            extra_liveness_predicate: None,
            protocol_version: ProtocolVersion::V0,
        };
        Chitchat::with_chitchat_id_and_seeds(
            config,
            rx,
            member_key_values(MemberStatus::Up, ["admin", "driver"]),
        )
    }

    /// Adds a peer's state the way a catch-up would (it is not live: the
    /// failure detector has heard no heartbeat from it).
    fn add_peer(c: &mut Chitchat, peer: &ChitchatId, kvs: &[(&str, &str)]) {
        let kvs: Vec<(String, VersionedValue)> = kvs
            .iter()
            .enumerate()
            .map(|(i, (k, v))| {
                (
                    (*k).to_owned(),
                    VersionedValue {
                        value: (*v).to_owned(),
                        version: i as u64 + 1,
                        status: DeletionStatus::Set,
                    },
                )
            })
            .collect();
        let max = kvs.len() as u64;
        c.reset_node_state_if_update(peer, kvs.into_iter(), max, 0);
    }

    #[test]
    fn the_views_hand_over_covers_twice_its_hearing_delay() {
        let default = ChitchatViewConfig::default();
        // A beat (250 ms), a 1 s gossip round and a 500 ms refresh.
        assert_eq!(default.hearing_delay(), Duration::from_millis(1_750));
        let handover = default.handover();
        assert_eq!(handover.lease_duration(), Some(default.lease));
        assert_eq!(handover.slack(), Duration::from_millis(3_500));
        // The examples' 200 ms gossip and refresh: a 3.3 s margin.
        let examples = ChitchatViewConfig {
            refresh: Duration::from_millis(200),
            gossip_interval: Duration::from_millis(200),
            ..default
        };
        assert_eq!(
            examples.handover().margin(),
            Some(Duration::from_millis(3_300))
        );
    }

    /// Three members, self `a` and peers `b`, `c`, every one reachable
    /// and `Up` (what the detector says; the hearings are noted apart).
    fn three_up() -> ClusterState {
        let member = |port: u16, age: u64| Member {
            address: format!("127.0.0.1:{port}"),
            status: MemberStatus::Up,
            roles: Vec::new(),
            age,
            reachable: true,
            last_heard: None,
            reachable_since: None,
        };
        ClusterState {
            self_address: "127.0.0.1:7001".into(),
            members: vec![member(7001, 1), member(7002, 2), member(7003, 3)],
        }
    }

    /// Notes `marks` of `b` and `c` at `at` (both live) and returns how
    /// many members count towards a majority under the default hand-over.
    fn counted(h: &mut Heartbeats, marks: [u64; 2], at: std::time::Instant) -> u32 {
        let (b, c) = (id("b", 2, 7002), id("c", 3, 7003));
        let live: HashSet<ChitchatId> = [b.clone(), c.clone()].into();
        let mut state = three_up();
        let handover = super::super::Handover::DEFAULT;
        let lease = handover.lease_duration().unwrap();
        h.note_marks(
            vec![(b, marks[0]), (c, marks[1])],
            &live,
            &mut state,
            at,
            lease,
        );
        state.heard_count(lease, handover.slack(), at)
    }

    /// Notes every 500 ms from `from` to `to` (ms after `t0`), `b`'s mark
    /// advancing only while `b_heard`, `c`'s always; returns the count at
    /// `to`.
    fn hear(h: &mut Heartbeats, t0: std::time::Instant, from: u64, to: u64, b_heard: bool) -> u32 {
        let mut n = 0;
        let mut at = from;
        while at <= to {
            let b = if b_heard { at } else { 0 };
            n = counted(h, [b, at], t0 + Duration::from_millis(at));
            at += 500;
        }
        n
    }

    #[test]
    fn a_pause_longer_than_the_lease_restarts_every_peers_stretch() {
        let t0 = std::time::Instant::now();
        let mut h = Heartbeats::default();
        // Heard every 500 ms for 4 s: both peers count (3 of 3).
        assert_eq!(hear(&mut h, t0, 0, 4_000, true), 3);
        // Frozen for 8 s; at the resume the queued gossip has advanced
        // both marks, as if just heard. A peer counts again only after the
        // slack (3 s) of hearing: the node is a minority of one until then.
        assert_eq!(hear(&mut h, t0, 12_000, 12_000, true), 1);
        assert_eq!(hear(&mut h, t0, 12_500, 14_500, true), 1);
        assert_eq!(hear(&mut h, t0, 15_000, 15_000, true), 3);
        // A gap just under the lease is no pause.
        assert_eq!(hear(&mut h, t0, 16_900, 16_900, true), 3);
    }

    #[test]
    fn a_peer_whose_state_stops_advancing_is_not_heard_though_the_detector_holds_it_live() {
        let t0 = std::time::Instant::now();
        let mut h = Heartbeats::default();
        assert_eq!(hear(&mut h, t0, 0, 4_000, true), 3);
        // From 4 s on `b`'s state no longer reaches us (one-way loss; its
        // heartbeat still does, in digests, so the detector holds it
        // live): after the lease it no longer counts.
        assert_eq!(hear(&mut h, t0, 4_500, 5_500, false), 3);
        assert_eq!(hear(&mut h, t0, 6_000, 6_000, false), 2);
        // Healed at 7 s: it counts again only after the slack of hearing.
        assert_eq!(hear(&mut h, t0, 7_000, 9_500, true), 2);
        assert_eq!(hear(&mut h, t0, 10_000, 10_000, true), 3);
    }

    #[test]
    fn members_carry_generation_status_roles_and_liveness() {
        let own = id("a", 20, 7001);
        let mut c = chitchat(own.clone(), &[]);
        add_peer(
            &mut c,
            &id("b", 10, 7002),
            &[(STATUS_KEY, "leaving"), (ROLES_KEY, " driver ,, x")],
        );
        add_peer(&mut c, &id("c", 30, 7003), &[("app.key", "1")]);
        let state = cluster_state(&c);
        assert_eq!(state.self_address, "127.0.0.1:7001");
        let me = state.self_member().unwrap();
        assert_eq!(
            (me.status, me.age, me.reachable),
            (MemberStatus::Up, 20, true)
        );
        assert_eq!(me.roles, ["admin", "driver"]);
        let b = &state.members[1];
        assert_eq!(
            (b.address.as_str(), b.status, b.age, b.reachable),
            ("127.0.0.1:7002", MemberStatus::Leaving, 10, false)
        );
        assert_eq!(b.roles, ["driver", "x"]);
        let c3 = &state.members[2];
        assert_eq!(
            (c3.status, c3.roles.len()),
            (MemberStatus::Joining, 0),
            "no status key reads as Joining"
        );
    }

    #[test]
    fn a_restarted_node_replaces_its_former_incarnation() {
        let own = id("a", 50, 7001);
        let mut c = chitchat(own, &[]);
        add_peer(&mut c, &id("b", 10, 7002), &[(STATUS_KEY, "up")]);
        add_peer(&mut c, &id("b", 40, 7002), &[(STATUS_KEY, "up")]);
        // A stale, higher-generation claim on our own address never hides self.
        add_peer(&mut c, &id("a", 90, 7001), &[(STATUS_KEY, "down")]);
        let state = cluster_state(&c);
        let ages: Vec<(&str, u64)> = state
            .members
            .iter()
            .map(|m| (m.address.as_str(), m.age))
            .collect();
        assert_eq!(ages, [("127.0.0.1:7001", 50), ("127.0.0.1:7002", 40)]);
        assert_eq!(state.self_member().unwrap().status, MemberStatus::Up);
    }

    #[tokio::test]
    async fn no_state_until_the_seeds_are_live_and_removed_after_gossip_stops() {
        let own = id("a", 1, 7001);
        let c = Arc::new(Mutex::new(chitchat(own, &[7001, 7002])));
        let config = ChitchatViewConfig {
            refresh: Duration::from_millis(10),
            join_timeout: Duration::from_secs(3600),
            ..ChitchatViewConfig::default()
        };
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let view = ChitchatClusterView::start(
            c.clone(),
            config,
            Some(Box::pin(async move {
                let _ = stop_rx.await;
            })),
        );
        // A rebuild of our own (the task's first one may not have run yet)
        // decides the same way the task would: no state while a seed is down.
        view.refresh().await;
        assert_eq!(view.state(), None, "seed 7002 is not live yet");

        // A lone node (no other seed) has joined at once.
        let lone = ChitchatClusterView::spawn(
            Arc::new(Mutex::new(chitchat(id("z", 1, 7009), &[7009]))),
            config,
        );
        lone.refresh().await;
        assert_eq!(lone.state().unwrap().members.len(), 1);

        drop(stop_tx);
        // The background task freezes the final snapshot: wait for it with
        // a deadline rather than for a fixed time.
        let deadline = Instant::now() + Duration::from_secs(10);
        let state = loop {
            if let Some(state) = view.state() {
                break state;
            }
            assert!(
                Instant::now() < deadline,
                "no final snapshot 10 s after gossip stopped"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        assert_eq!(state.self_member().unwrap().status, MemberStatus::Removed);
        view.publish(MemberStatus::Up, ["admin"]).await;
        assert_eq!(
            view.state().unwrap().self_member().unwrap().status,
            MemberStatus::Removed,
            "frozen"
        );
    }

    #[tokio::test]
    async fn state_does_not_wait_for_the_chitchat_lock() {
        let c = Arc::new(Mutex::new(chitchat(id("a", 1, 7001), &[])));
        let view = ChitchatClusterView::spawn(c.clone(), ChitchatViewConfig::default());
        view.refresh().await;
        let _held = c.lock().await;
        assert!(view.state().is_some());
    }
}
