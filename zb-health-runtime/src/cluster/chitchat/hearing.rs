//! When this node last heard each peer, and since when each has been live
//! and heard without a break: the view's part of the hand-over, including
//! the pauses of this process itself.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use ::chitchat::{Chitchat, ChitchatId};

use super::keys::BEAT_KEY;
use crate::cluster::view::ClusterState;

/// When this node noted each peer's heartbeat advance: the view's part of
/// the hand-over ([`Handover`](crate::cluster::Handover)).
///
/// chitchat does not expose when a heartbeat arrived, so a hearing is
/// recorded at the rebuild that notices it: never earlier than it
/// happened (a successor cannot take over early), at most one
/// [`refresh`](super::ChitchatViewConfig::refresh) late (part of the slack). A
/// peer seen for the first time counts as heard then, which only delays a
/// take-over.
///
/// A hearing is an advance of the peer's gossip state (its versions),
/// which only a two-way exchange delivers, or of its heartbeat when it
/// writes no [`BEAT_KEY`] (see [`ChitchatViewConfig::lease`](super::ChitchatViewConfig::lease)).
///
/// It also notes since when each peer has been live and heard without a
/// break: a stretch ends when the detector writes the peer off, when the
/// peer has been silent for the lease, or when this process itself was
/// paused for longer than the lease.
#[derive(Default)]
pub(super) struct Heartbeats {
    seen: HashMap<ChitchatId, (u64, Instant)>,
    live_since: HashMap<ChitchatId, Instant>,
    /// The previous rebuild, to notice this process's own pauses.
    last_note: Option<Instant>,
    /// Since when each member has been seen stepped down.
    stepped: HashMap<String, Instant>,
}

impl Heartbeats {
    /// Notes the hearings and liveness in `chitchat` at `now` and fills in
    /// `last_heard` and `reachable_since` for every peer of `state`.
    pub(super) fn note(
        &mut self,
        chitchat: &Chitchat,
        state: &mut ClusterState,
        now: Instant,
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
    pub(super) fn note_marks(
        &mut self,
        marks: Vec<(ChitchatId, u64)>,
        live: &HashSet<ChitchatId>,
        state: &mut ClusterState,
        now: Instant,
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
        let mut heard: BTreeMap<String, Instant> = BTreeMap::new();
        let mut silent: HashSet<&ChitchatId> = HashSet::new();
        for (id, mark) in &marks {
            let entry = self.seen.entry(id.clone()).or_insert((*mark, now));
            if *mark > entry.0 {
                *entry = (*mark, now);
            }
            if now.saturating_duration_since(entry.1) >= lease {
                silent.insert(id);
            }
            latest(&mut heard, id, entry.1);
        }
        self.live_since
            .retain(|id, _| live.contains(id) && !silent.contains(id));
        for id in live.iter().filter(|id| !silent.contains(id)) {
            self.live_since.entry(id.clone()).or_insert(now);
        }
        let mut since: BTreeMap<String, Instant> = BTreeMap::new();
        for (id, at) in &self.live_since {
            latest(&mut since, id, *at);
        }
        for m in &mut state.members {
            if m.address != state.self_address {
                m.last_heard = heard.get(&m.address).copied();
                // Only a reachable member has been reachable since.
                m.reachable_since = since.get(&m.address).copied().filter(|_| m.reachable);
            }
        }
        // A step-down counts from when this node first saw it, never
        // earlier: the successor's margin starts then.
        let before = std::mem::take(&mut self.stepped);
        for m in state
            .members
            .iter_mut()
            .filter(|m| m.stepped_down_since.is_some())
        {
            let at = before.get(&m.address).copied().unwrap_or(now);
            self.stepped.insert(m.address.clone(), at);
            m.stepped_down_since = Some(at);
        }
    }
}

/// Notes `at` for the address of `id`, keeping the later instant: two
/// incarnations on one address count as the one heard (or started) last.
fn latest(by_address: &mut BTreeMap<String, Instant>, id: &ChitchatId, at: Instant) {
    let kept = by_address
        .entry(id.gossip_advertise_addr.to_string())
        .or_insert(at);
    *kept = (*kept).max(at);
}
