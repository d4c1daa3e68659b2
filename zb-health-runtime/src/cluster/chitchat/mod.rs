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
//! [`ChitchatClusterView::publish`], and leave with
//! [`ClusterView::leave`](super::ClusterView::leave), which writes
//! `leaving` and holds it for the rest of the process.
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
//!
//! [`ClusterView`]: super::ClusterView
//! [`ClusterView::state`]: super::ClusterView::state
//! [`ClusterState`]: super::ClusterState
//! [`Member`]: super::Member
//! [`MemberStatus::as_str`]: super::MemberStatus::as_str

// One concern a file, each importing only the files named before it here:
// `keys` (the gossip keys and how a node's status and roles are spelled in
// them), `config` (the view's timing and the hand-over it supports),
// `members` (chitchat's node states as members), `hearing` (when each peer
// was last heard, and this process's own pauses), `verdicts` (the shared
// verdicts in gossip), `snapshot` (the snapshot and the background task
// that rebuilds it), `view` (`ChitchatClusterView`), `drain`
// (`leave_cluster_on_drain`).
mod config;
mod drain;
mod hearing;
mod keys;
mod members;
mod snapshot;
mod verdicts;
mod view;

#[cfg(test)]
mod tests;

pub use config::ChitchatViewConfig;
pub use drain::leave_cluster_on_drain;
pub use keys::{
    BEAT_KEY, HISTORY_KEY, READY_VERDICT_KEY, RESTART_CLAIM_KEY, ROLES_KEY, SHARED_VERDICT_PREFIX,
    STATUS_KEY, STEP_DOWN_KEY, member_key_values,
};
pub use members::cluster_state;
pub use view::ChitchatClusterView;
