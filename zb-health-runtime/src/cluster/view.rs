//! The membership model every cluster probe reads.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::handover::Handover;

/// A member's lifecycle status, as Akka names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemberStatus {
    /// Joining; not yet admitted.
    Joining,
    /// Admitted while the cluster could not converge.
    WeaklyUp,
    /// A full member.
    Up,
    /// Leaving gracefully.
    Leaving,
    /// Handing over before removal.
    Exiting,
    /// Marked down (failed).
    Down,
    /// Gone from the cluster.
    Removed,
}

impl MemberStatus {
    /// Every status.
    pub const ALL: [MemberStatus; 7] = [
        Self::Joining,
        Self::WeaklyUp,
        Self::Up,
        Self::Leaving,
        Self::Exiting,
        Self::Down,
        Self::Removed,
    ];

    /// The lower-case name used in gossip state and logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Joining => "joining",
            Self::WeaklyUp => "weakly-up",
            Self::Up => "up",
            Self::Leaving => "leaving",
            Self::Exiting => "exiting",
            Self::Down => "down",
            Self::Removed => "removed",
        }
    }

    /// Parses [`as_str`](Self::as_str)'s spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Whether a member in this status is still expected to take part:
    /// peers that are down, removed or on their way out are not.
    pub const fn is_expected(self) -> bool {
        matches!(self, Self::Joining | Self::WeaklyUp | Self::Up)
    }
}

impl fmt::Display for MemberStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One member as this node sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its address, e.g. `127.0.0.1:7001`; unique in the cluster.
    pub address: String,
    /// Its lifecycle status.
    pub status: MemberStatus,
    /// Its roles, e.g. `admin`, `driver`.
    pub roles: Vec<String>,
    /// Its age: lower is older (Akka's up-number, chitchat's generation,
    /// which must be the node's start time). Ties are broken by address in
    /// byte order, so a source that leaves every age equal silently turns
    /// the rule into "lowest address", the leader semantics ZB-2.3a forbids.
    pub age: u64,
    /// Whether this node reaches it: connected **and** not written off by
    /// the failure detector (AT-5). Always `true` for self.
    pub reachable: bool,
    /// When this node last saw the member's heartbeat advance (first saw
    /// it, if it has not advanced since), as an instant of this process, so
    /// a snapshot does not go stale on it: the silence is `now -
    /// last_heard`, whenever it is read. `None` for self, and from a source
    /// that does not track heartbeats; the hand-over
    /// ([`Handover`](super::Handover)) then falls back on `reachable` alone
    /// for that member.
    ///
    /// A source must never record a hearing **earlier** than it happened
    /// (that would let a successor take over too soon); recording it up to
    /// one snapshot refresh late is allowed and is part of the hand-over's
    /// slack.
    pub last_heard: Option<Instant>,
    /// Since when this node has held the member reachable without a break
    /// (set when it becomes reachable, cleared when it is written off).
    /// `None` for self and from a source that does not track it. The
    /// hand-over counts a peer towards a majority only once it has been
    /// reachable for the slack, so a node coming back from a partition
    /// does not act before the node that replaced it has heard it and
    /// stepped down.
    pub reachable_since: Option<Instant>,
    /// Since when this node has known that the member stepped down from
    /// the active role (an operator's deliberate hand-over), as an instant
    /// of this process; `None` when it has not. The rule treats it as it
    /// treats a silent active node: it stays the choice, so no one else is
    /// active, for the hand-over margin, and is passed over after that
    /// unless it is the only candidate left ([`ClusterActiveNode`](super::ClusterActiveNode)).
    pub stepped_down_since: Option<Instant>,
}

impl Member {
    /// A reachable member with no roles and nothing tracked (no hearing,
    /// no step-down): what a source that knows only status and age
    /// reports, and a short start for tests. Add roles with
    /// [`with_roles`](Self::with_roles).
    pub fn new(address: impl Into<String>, status: MemberStatus, age: u64) -> Self {
        Self {
            address: address.into(),
            status,
            roles: Vec::new(),
            age,
            reachable: true,
            last_heard: None,
            reachable_since: None,
            stepped_down_since: None,
        }
    }

    /// The member with `roles`.
    pub fn with_roles<S: Into<String>>(mut self, roles: impl IntoIterator<Item = S>) -> Self {
        self.roles = roles.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the member holds `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }

    /// How long the member has been reachable without a break at `now`,
    /// when the source tracks it.
    pub fn reachable_for(&self, now: Instant) -> Option<Duration> {
        self.reachable_since
            .map(|t| now.saturating_duration_since(t))
    }

    /// How long the member has been stepped down at `now`, if it is.
    pub fn stepped_down_for(&self, now: Instant) -> Option<Duration> {
        self.stepped_down_since
            .map(|t| now.saturating_duration_since(t))
    }

    /// How long the member has been silent at `now`, when the source tracks
    /// heartbeats.
    pub fn silent_for(&self, now: Instant) -> Option<Duration> {
        self.last_heard.map(|t| now.saturating_duration_since(t))
    }
}

/// A snapshot of the cluster as this node sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterState {
    /// This node's address.
    pub self_address: String,
    /// Every known member, self included.
    pub members: Vec<Member>,
}

impl ClusterState {
    /// This node's own member record, if the view has one yet.
    pub fn self_member(&self) -> Option<&Member> {
        self.members.iter().find(|m| m.address == self.self_address)
    }

    /// Members other than self that are still expected to take part.
    pub fn expected_peers(&self) -> impl Iterator<Item = &Member> {
        self.members
            .iter()
            .filter(move |m| m.address != self.self_address && m.status.is_expected())
    }

    /// Self (when expected) plus the expected peers it reaches.
    pub fn reachable_count(&self) -> u32 {
        self.count_with(|m| m.reachable)
    }

    /// Self (when expected) plus the expected peers it reaches, has heard
    /// within `lease` and has held reachable for at least `stable`, at
    /// `now` (what the source does not track is not checked).
    pub fn heard_count(&self, lease: Duration, stable: Duration, now: Instant) -> u32 {
        self.count_with(|m| {
            m.reachable
                && m.silent_for(now).is_none_or(|s| s < lease)
                && m.reachable_for(now).is_none_or(|r| r >= stable)
        })
    }

    /// This snapshot as a node that has `left` sees it
    /// ([`ClusterView::leave`]): its own member `Leaving` while its record
    /// still says it takes part (a `Removed` or `Down` record stays as it
    /// is); unchanged when it has not left. The one patch every view that
    /// can leave applies, so the rule never picks a node that left,
    /// whatever its gossip or its table says later.
    pub(crate) fn as_left(self: Arc<Self>, left: bool) -> Arc<Self> {
        if !left || !self.self_member().is_some_and(|m| m.status.is_expected()) {
            return self;
        }
        Arc::new(self.with_self_member(|m| m.status = MemberStatus::Leaving))
    }

    /// A copy with this node's own member record changed by `patch`: how a
    /// view shows what this node decided before its gossip says it.
    pub(crate) fn with_self_member(&self, patch: impl FnMut(&mut Member)) -> Self {
        let mut state = self.clone();
        let self_address = state.self_address.clone();
        state
            .members
            .iter_mut()
            .filter(|m| m.address == self_address)
            .for_each(patch);
        state
    }

    fn count_with(&self, counts: impl Fn(&Member) -> bool) -> u32 {
        let own = self.self_member().is_some_and(|m| m.status.is_expected());
        u32::from(own) + self.expected_peers().filter(|m| counts(m)).count() as u32
    }
}

/// A source of cluster membership: Akka-style gossip, chitchat, or an
/// in-memory table in tests.
///
/// `state` must be cheap and must not block: the gate calls it on every
/// gated request. Adapters keep a snapshot current in the background.
pub trait ClusterView: Send + Sync + 'static {
    /// The current snapshot, or `None` while the cluster is not available
    /// yet (the actor system or gossip has not started, or this node has not
    /// joined). An adapter must not report a state holding only self
    /// before it has joined: the rule would make a booting node the oldest
    /// `Up` member, i.e. active.
    fn state(&self) -> Option<Arc<ClusterState>>;

    /// Where this view publishes and compares the shared probes' verdicts
    /// (BE-HLTH-003, [`crate::shared`]), if it carries them:
    /// [`ChitchatClusterView`](super::chitchat::ChitchatClusterView) does; a view
    /// that does not leaves shared probes ordinary ones.
    fn shared_verdicts(self: Arc<Self>) -> Option<Arc<dyn crate::shared::SharedVerdicts>> {
        None
    }

    /// The hand-over this view's timing supports: the lease it keeps fresh
    /// and a slack that covers how late it can note a hearing
    /// ([`Handover`]). The active-node probe and gate use it unless their
    /// rule sets one. `None` (the default): the view does not know, and
    /// [`Handover::DEFAULT`] applies.
    fn handover(&self) -> Option<Handover> {
        None
    }

    /// Announces that this node steps down from the active role (`true`)
    /// or stands for it again (`false`): a deliberate hand-over
    /// ([`cluster::StepDown`](super::StepDown)). The node's own decisions
    /// see it at once, its peers when it reaches them; every node then
    /// treats it as a silent active node for the hand-over margin. `false`
    /// (the default) when the view cannot announce it.
    fn step_down(&self, on: bool) -> bool {
        let _ = on;
        false
    }

    /// Leaves the cluster for good (AT-6; actor-ts's `cluster.leave()`):
    /// from this call on the view reports this node `Leaving`
    /// ([`has_left`](Self::has_left) is `true`), so the rule never picks it
    /// active again and the membership and transport probes fail, which
    /// keeps `ready` 503 (the node drains); a view that gossips announces
    /// it, so its peers pass it over without waiting for failure
    /// detection. The latch is this view's, for the rest of the process:
    /// only a new incarnation clears it, i.e. a re-join through
    /// [`RejoinableView::rejoin`](super::RejoinableView::rejoin), which
    /// points the probes at a view that has not left. A peer seen
    /// `Leaving` latches nothing here. Returns `false` (and changes
    /// nothing) when the view cannot leave; the default.
    fn leave(&self) -> bool {
        false
    }

    /// Whether this node has left through [`leave`](Self::leave): then
    /// the membership and transport probes answer Unhealthy whatever the
    /// membership policy maps `Leaving` to.
    fn has_left(&self) -> bool {
        false
    }
}

/// A view set by hand: for apps that learn membership elsewhere, and for
/// tests that flip a node between active and standby.
#[derive(Debug, Default)]
pub struct InMemoryClusterView {
    state: RwLock<Option<Arc<ClusterState>>>,
    /// Set by [`ClusterView::leave`], never cleared: every snapshot from
    /// then on, a later [`set`](Self::set) too, shows this node `Leaving`.
    left: AtomicBool,
}

impl InMemoryClusterView {
    /// A view with no cluster yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A view already holding `state`.
    pub fn with_state(state: ClusterState) -> Self {
        let v = Self::new();
        v.set(state);
        v
    }

    /// Replaces the snapshot.
    pub fn set(&self, state: ClusterState) {
        *crate::sync::write(&self.state) = Some(Arc::new(state));
    }

    /// Back to "no cluster yet".
    pub fn clear(&self) {
        *crate::sync::write(&self.state) = None;
    }
}

impl ClusterView for InMemoryClusterView {
    fn state(&self) -> Option<Arc<ClusterState>> {
        let state = crate::sync::read(&self.state).clone()?;
        Some(state.as_left(self.has_left()))
    }

    /// Latches at once; there is no gossip to announce it on.
    fn leave(&self) -> bool {
        self.left.store(true, Ordering::Relaxed);
        true
    }

    fn has_left(&self) -> bool {
        self.left.load(Ordering::Relaxed)
    }

    /// Marks this node's member stepped down (or not) in the snapshot;
    /// `false` while there is none.
    fn step_down(&self, on: bool) -> bool {
        let mut slot = crate::sync::write(&self.state);
        let Some(state) = slot.as_ref() else {
            return false;
        };
        let state = state.with_self_member(|m| {
            m.stepped_down_since = on.then(|| m.stepped_down_since.unwrap_or_else(Instant::now));
        });
        *slot = Some(Arc::new(state));
        true
    }
}
