//! [`Handover`]: how the active role moves from a silent active node to
//! its successor. A leaf, so the views (which know their own timing) and
//! the active-node rule (which applies it) both use it.

use std::time::Duration;

/// How the active role moves when the active node goes silent: the
/// deterministic hand-over that keeps "exactly one active node" (ZB-1)
/// true at every instant across a partition, instead of a race between
/// two failure detectors.
///
/// With a lease (the default whenever a majority is required):
///
/// * **Step-down.** A node answers active only while it has heard, within
///   [`lease`](Self::lease), from a majority of the expected members
///   (self included). Cut off from them, it stops answering active at most
///   `lease` after the last heartbeat it received, whatever its failure
///   detector says.
/// * **Take-over.** An older `Up` member in scope stays the rule's choice
///   (so no one else is active) until it has been silent for
///   [`margin`](Self::margin), and stops being it then, whatever the
///   failure detector says: a node that hears no one while its own gossip
///   still reaches the others stays "live" to their detectors, though it
///   stepped down long ago. (A source that does not track hearings leaves
///   the detector to decide.)
///   `margin = lease + slack`, with `slack` at least the membership
///   source's gossip interval plus its snapshot refresh: the successor's
///   last hearing of the old active node is at most one gossip round older
///   than the old node's last hearing of a majority, and the old node may
///   note that hearing up to one refresh late. So the old node has stepped
///   down before any successor starts (`spec/conflicts.md`).
/// * **Coming back.** A peer counts towards the majority only once it has
///   been reachable for the slack. After a partition heals, the old active
///   node (the oldest) would otherwise act on its first heartbeats from
///   the others, before the successor has heard it; the successor steps
///   down as soon as it notes a heartbeat of an older member, within a
///   gossip round and a refresh, which the slack covers. A freshly formed
///   cluster likewise has its first active node after the slack.
///
/// The cost is time: a crashed or cut-off active node is replaced after
/// about `margin` instead of the detection time, and a node that rejoins, or a new cluster, waits
/// the slack before it acts.
///
/// **Where the values come from.** Only the membership source knows how
/// late it can note a hearing, so a source that knows its own timing
/// states the hand-over it supports ([`ClusterView::handover`]): the
/// chitchat view derives it from its gossip interval, refresh and lease
/// ([`ChitchatViewConfig::handover`]), 2 s and 1.3 s of slack with the
/// examples' 200 ms gossip, so a cut-off active node is replaced after
/// about 3.3 s. [`ActiveNodeProbe`] and [`ClusterActiveNodeGate`] use it
/// unless the rule sets one ([`ClusterActiveNode::handover`]); a source
/// that states none gets [`DEFAULT`](Self::DEFAULT), sized for a 1 s
/// gossip and a 500 ms refresh.
///
/// [`ClusterView::handover`]: super::ClusterView::handover
/// [`ChitchatViewConfig::handover`]: super::chitchat::ChitchatViewConfig::handover
/// [`ActiveNodeProbe`]: super::ActiveNodeProbe
/// [`ClusterActiveNodeGate`]: super::ClusterActiveNodeGate
/// [`ClusterActiveNode::handover`]: super::ClusterActiveNode::handover
///
/// [`immediate_unsafe`](Self::immediate_unsafe) keeps the detector race:
/// faster failover, but for up to the difference of two detections two
/// nodes can answer active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handover {
    /// `None`: immediate.
    lease: Option<(Duration, Duration)>,
}

impl Handover {
    /// The default lease, 2 s: long enough that a healthy active node does
    /// not step down between two heartbeats (gossip interval plus snapshot
    /// refresh, 1.5 s with a 1 s gossip and the chitchat view's 500 ms
    /// refresh). Also the chitchat view's default lease.
    pub const DEFAULT_LEASE: Duration = Duration::from_secs(2);
    /// The default slack, 3 s, for a source that states no hand-over of its
    /// own: covers a gossip interval plus a snapshot refresh of up to 3 s
    /// together (1.5 s to spare with a 1 s gossip and a 500 ms refresh), so
    /// the default margin is 5 s.
    pub const DEFAULT_SLACK: Duration = Duration::from_secs(3);
    /// The default: a [`DEFAULT_LEASE`](Self::DEFAULT_LEASE) lease and a
    /// [`DEFAULT_SLACK`](Self::DEFAULT_SLACK) slack (5 s margin).
    pub const DEFAULT: Handover = Handover::lease(Self::DEFAULT_LEASE, Self::DEFAULT_SLACK);

    /// A lease of `lease`, and a successor that waits `lease + slack` of
    /// silence. `slack` must be more than the membership source's gossip
    /// interval plus its snapshot refresh (plus any scheduling delay you
    /// want to survive); a zero slack is raised to 1 ms so the margin stays
    /// strictly greater than the lease.
    pub const fn lease(lease: Duration, slack: Duration) -> Self {
        let slack = if slack.is_zero() {
            Duration::from_millis(1)
        } else {
            slack
        };
        Self {
            lease: Some((lease, lease.saturating_add(slack))),
        }
    }

    /// **Racy**: no lease and no margin; the successor takes over as soon
    /// as its own failure detector writes the active node off, which may be
    /// before the active node's detector writes its peers off. For that
    /// difference **two nodes answer active**. Only where something else (a fencing
    /// token, a single-writer store) makes two active nodes harmless.
    pub const fn immediate_unsafe() -> Self {
        Self { lease: None }
    }

    /// The lease, unless immediate.
    pub const fn lease_duration(self) -> Option<Duration> {
        match self.lease {
            Some((lease, _)) => Some(lease),
            None => None,
        }
    }

    /// The silence after which a successor may take over, unless
    /// immediate.
    pub const fn margin(self) -> Option<Duration> {
        match self.lease {
            Some((_, margin)) => Some(margin),
            None => None,
        }
    }

    /// `margin - lease`: also how long a peer must have been reachable
    /// before it counts towards a majority. Zero when immediate.
    pub const fn slack(self) -> Duration {
        match self.lease {
            Some((lease, margin)) => margin.saturating_sub(lease),
            None => Duration::ZERO,
        }
    }

    /// Whether this is [`immediate_unsafe`](Self::immediate_unsafe).
    pub const fn is_immediate(self) -> bool {
        self.lease.is_none()
    }
}

impl Default for Handover {
    fn default() -> Self {
        Self::DEFAULT
    }
}
