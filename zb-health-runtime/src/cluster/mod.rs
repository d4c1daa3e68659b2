//! Cluster health (ZB-2.2, ZB-2.3a–d, ZB-4; AT-5, AT-6), over any
//! membership source that implements [`ClusterView`].
//!
//! * [`ClusterActiveNode`] is the one rule that says which node is active:
//!   the **oldest `Up` member**, never the leader. The active-node probe,
//!   the gate and the application all call it, so they cannot disagree.
//! * [`ClusterMembershipProbe`] maps this node's status through a
//!   [`ClusterStatusPolicy`] (the spec's `AkkaClusterStatusPolicy`).
//! * [`ActiveNodeProbe`] answers the `active` tier.
//! * [`ClusterTransportProbe`] fails only on isolation from every expected
//!   peer (AT-5).
//! * [`ClusterActiveNodeGate`] is the cluster's [`crate::gate::ActiveNodeGate`].
//! * [`ClusterView::leave`] is this node's own leave (AT-6, actor-ts's
//!   `cluster.leave()`; the drain calls it): announced in gossip, and
//!   latched, so the membership and transport probes fail and `ready`
//!   stays 503 for the rest of the process, unless a re-join replaces
//!   the incarnation.
//! * [`RejoinableView`] lets every cluster probe, the gate and the shared
//!   verdicts follow a leave and a re-join at once (AT-6).
//! * [`StepDown`] hands the active role over on purpose, lease-safe, for
//!   a bounded time (the operator's `step-down`).
//! * [`expected_size_from_env`] reads the cluster's size at start
//!   ([`EXPECTED_SIZE_VAR`]) for the majority guard.
//!
//! While the view reports no cluster yet, the ready-tier probes
//! (membership, transport) answer `Degraded` (startup safety: a booting
//! node is not a failed node), and the active-node probe answers
//! `Unhealthy`, like the gate: a booting node is not the active node.
//!
//! The rule picks the oldest **reachable** `Up` member; with an
//! [`expected_size`](ClusterActiveNode::expected_size) it also requires a
//! majority, and by default a [`Handover`] lease and margin (the view's
//! own, [`ClusterView::handover`], else [`Handover::DEFAULT`]): the active
//! node steps down when it has not heard a majority within the lease, and
//! a successor waits until the old one has been silent for the margin, so
//! a partition leaves at most one active node at every instant. These
//! choices are recorded in `spec/conflicts.md`.

mod active;
#[cfg(feature = "chitchat")]
pub mod chitchat;
mod gate;
mod guard;
mod handover;
mod history;
mod probes;
mod rejoin;
mod size;
mod stepdown;
mod view;

#[cfg(test)]
mod tests;

pub use active::{ActiveDecision, ClusterActiveNode};
pub use gate::ClusterActiveNodeGate;
pub use handover::Handover;
pub use probes::{
    ActiveNodeProbe, ClusterMembershipProbe, ClusterStatusPolicy, ClusterTransportProbe,
};
pub use rejoin::RejoinableView;
pub use size::{
    EXPECTED_SIZE_VAR, expected_size_from_env, expected_size_from_lookup, guard_with_size,
};
pub use stepdown::{StepDown, StepDownWindow};
pub use view::{ClusterState, ClusterView, InMemoryClusterView, Member, MemberStatus};
