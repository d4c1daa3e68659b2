//! How a `ChitchatClusterView` keeps its snapshot, and the hand-over its
//! timing supports.

use std::time::Duration;

use crate::cluster::handover::Handover;

/// How a [`ChitchatClusterView`](super::ChitchatClusterView) keeps its snapshot and decides that the
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
    /// [`ClusterView::state`](crate::cluster::ClusterView::state) is `None`. Default 5 s, Akka's
    /// `seed-node-timeout`.
    pub join_timeout: Duration,
    /// The hand-over lease of the active-node rule this view serves
    /// ([`Handover::lease_duration`]);
    /// keep the two equal. The view uses it three ways (ZB-1, exactly one active node):
    ///
    /// * **Beats.** The node writes [`BEAT_KEY`](super::BEAT_KEY) at least every `lease / 8`
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
    /// [`Handover::DEFAULT_LEASE`], 2 s.
    pub lease: Duration,
}

impl ChitchatViewConfig {
    /// How late a hearing can be noted: a beat (`lease / 8`), a gossip
    /// round and a refresh.
    pub fn hearing_delay(&self) -> Duration {
        self.lease / 8 + self.gossip_interval + self.refresh
    }

    /// The hand-over this timing supports, which the view states
    /// ([`ClusterView::handover`](crate::cluster::ClusterView::handover)) and the active-node probe and gate use:
    /// the [`lease`](Self::lease), and a slack of twice the
    /// [`hearing_delay`](Self::hearing_delay). Once for the delay itself
    /// (the successor's last hearing of the old node may be that much
    /// older than the old node's last hearing of a majority); once more
    /// to spare, for scheduling on a loaded machine, so the old node's last
    /// `active` answer and its successor's first are at least a hearing
    /// delay apart. With the defaults (1 s gossip, 500 ms refresh) the
    /// slack is 3.5 s; with the examples' 200 ms gossip and refresh, 1.3 s,
    /// a margin of 3.3 s.
    pub fn handover(&self) -> Handover {
        Handover::lease(self.lease, self.hearing_delay() * 2)
    }
}

impl Default for ChitchatViewConfig {
    fn default() -> Self {
        Self {
            refresh: Duration::from_millis(500),
            gossip_interval: Duration::from_secs(1),
            join_timeout: Duration::from_secs(5),
            lease: Handover::DEFAULT_LEASE,
        }
    }
}
