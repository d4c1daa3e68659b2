//! `ClusterActiveNode` (ZB-2.3a): the oldest `Up` member, never the leader.

use std::sync::Arc;
use std::time::{Duration, Instant};

use zb_health_spec::{MajorityGuard, SpecError, Violations, rules::check_role_preference};

use super::guard::majority_guard_setters;
use super::handover::Handover;
use super::view::{ClusterState, Member, MemberStatus};

/// The rule that picks the active node: the **oldest reachable `Up`
/// member**, optionally scoped by an ordered role preference.
///
/// "Reachable" is this crate's reading of ZB-2.3a's "oldest `Up` member":
/// without downing (chitchat has none) a dead member stays `Up` forever,
/// so without the filter the cluster could never fail over. The price is
/// that each side of a partition has its own oldest reachable member; give
/// the rule the cluster's [`expected_size`](Self::expected_size) and the
/// minority side steps down, with a [`Handover`] lease and margin so the
/// old active node has stepped down before its successor starts
/// (`spec/conflicts.md`).
///
/// Leadership is address-ordered and survives restarts on the wrong node;
/// age follows where the singletons (and the work) actually run, so age is
/// the only safe choice (ZB-2.3a). Ties in age are broken by address in
/// byte order, never by locale. A member the failure detector wrote off is
/// not a candidate, so the next-oldest takes over within the detection
/// time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterActiveNode {
    roles: Arc<[String]>,
    guard: Option<MajorityGuard>,
    /// `None`: the default for the guard ([`Handover::DEFAULT`] when a
    /// majority is required).
    handover: Option<Handover>,
}

/// What [`ClusterActiveNode`] decided for this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActiveDecision {
    /// This node is the active one (for `role`, when scoped).
    Active {
        /// The role it answers for, when scoped.
        role: Option<String>,
        /// Its own address.
        active: String,
    },
    /// Another node is active.
    Standby {
        /// The role this node answers for, when scoped.
        role: Option<String>,
        /// The active node's address.
        active: String,
    },
    /// This node holds none of the listed roles.
    NoActiveRole,
    /// The cluster is reachable, but no `Up` member is in scope.
    NoUpMemberInScope {
        /// The role this node answers for, when scoped.
        role: Option<String>,
    },
    /// The active node (the oldest `Up` member in scope) has gone silent,
    /// or stepped down on purpose ([`StepDown`](super::StepDown)), but not
    /// yet for the hand-over margin: no node is active until then, so the
    /// old one has stopped before a successor starts. `silent_for` is zero
    /// for a step-down.
    HandingOver {
        /// The role this node answers for, when scoped.
        role: Option<String>,
        /// The silent node's address.
        from: String,
        /// How long it has been silent.
        silent_for: Duration,
    },
    /// The majority guard is on and this node reaches fewer than a majority
    /// of the expected members: it may be the minority side of a partition.
    Minority {
        /// Members reachable from here, self included.
        reachable: u32,
        /// Members needed for a majority.
        needed: u32,
    },
}

impl ActiveDecision {
    /// Whether this node is the active one.
    pub fn is_active(&self) -> bool {
        matches!(self, ActiveDecision::Active { .. })
    }

    /// The role this node answers for, when known.
    pub fn role(&self) -> Option<&str> {
        match self {
            ActiveDecision::Active { role, .. }
            | ActiveDecision::Standby { role, .. }
            | ActiveDecision::NoUpMemberInScope { role }
            | ActiveDecision::HandingOver { role, .. } => role.as_deref(),
            _ => None,
        }
    }

    /// The active node's address, when there is one.
    pub fn active_node(&self) -> Option<&str> {
        match self {
            ActiveDecision::Active { active, .. } | ActiveDecision::Standby { active, .. } => {
                Some(active)
            }
            _ => None,
        }
    }
}

impl ClusterActiveNode {
    /// Unscoped: the oldest `Up` member of the whole cluster.
    pub fn unscoped() -> Self {
        Self::default()
    }

    /// Role-scoped by an ordered preference: a node answers for the first
    /// listed role it holds (a fused `admin`+`driver` node answers for
    /// `admin` when that is listed first). An empty, blank or repeated list
    /// is refused (rule R2, ZB-2.3d), as the manifest refuses it.
    pub fn with_roles<I, S>(roles: I) -> Result<Self, SpecError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let roles: Vec<String> = roles.into_iter().map(Into::into).collect();
        let listed: Vec<(&str, ())> = roles.iter().map(|r| (r.as_str(), ())).collect();
        let mut sink = Violations::new();
        check_role_preference("active-node", Some((&listed, ())), (), &mut sink);
        sink.into_result()?;
        Ok(Self {
            roles: roles.into(),
            ..Self::default()
        })
    }

    majority_guard_setters! {
        /// The cluster has `size` nodes: a node that reaches fewer than a
        /// majority of them (self included) is never active, so the minority
        /// side of a partition cannot answer active beside the majority's node.
        /// Split-brain safety is the default once the size is known, including
        /// the [`Handover::DEFAULT`] lease and margin that keep the old active
        /// node and its successor from overlapping; opt out with
        /// [`allow_minority`](Self::allow_minority) (no majority at all) or
        /// [`handover`](Self::handover)`(`[`Handover::immediate_unsafe`]`())`
        /// (a majority, but the detector race).
        expected_size;

        /// Lets a node on the minority side of a partition be active: **both
        /// sides then answer active** (split brain). Only for clusters where
        /// something else keeps two active nodes from doing harm. Without an
        /// expected size there is no majority to give up, and this does nothing.
        allow_minority;

        /// Sets the guard as a whole, e.g. from a manifest's `expected_size` /
        /// `require_majority`. In code prefer [`expected_size`](Self::expected_size).
        /// A guard that requires a majority gets [`Handover::DEFAULT`] unless
        /// [`handover`](Self::handover) says otherwise.
        with_guard;
    }

    /// Sets how the active role moves when the active node goes silent.
    /// Takes effect only with a guard that requires a majority: without
    /// one there is no majority to hold a lease from, and the hand-over is
    /// always immediate.
    pub fn handover(mut self, handover: Handover) -> Self {
        self.handover = Some(handover);
        self
    }

    /// The rule with `timing` (a view's [`ClusterView::handover`]) as its
    /// hand-over unless one was set: how the probe and the gate take the
    /// timing of the view they read.
    ///
    /// [`ClusterView::handover`]: super::ClusterView::handover
    pub(crate) fn timed_by(mut self, timing: Option<Handover>) -> Self {
        self.handover = self.handover.or(timing);
        self
    }

    /// The split-brain guard, when the expected size is known.
    pub fn guard(&self) -> Option<MajorityGuard> {
        self.guard
    }

    /// The hand-over in effect: the one set (by [`handover`](Self::handover),
    /// or in the probe and the gate by their view's timing), or
    /// [`Handover::DEFAULT`], when a majority is required; otherwise
    /// immediate.
    pub fn effective_handover(&self) -> Handover {
        match self.guard {
            Some(g) if g.require_majority => self.handover.unwrap_or(Handover::DEFAULT),
            _ => Handover::immediate_unsafe(),
        }
    }

    /// The ordered role preference; empty when unscoped.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }

    /// Whether the rule is role-scoped.
    pub fn is_scoped(&self) -> bool {
        !self.roles.is_empty()
    }

    /// Decides for this node of `state`, now.
    pub fn decide(&self, state: &ClusterState) -> ActiveDecision {
        self.decide_at(state, Instant::now())
    }

    /// Decides for this node of `state` at `now` (silences are measured
    /// from each member's `last_heard` to `now`).
    pub fn decide_at(&self, state: &ClusterState, now: Instant) -> ActiveDecision {
        let handover = self.effective_handover();
        if let Some(guard) = self.guard {
            let reachable = match handover.lease_duration() {
                Some(lease) => state.heard_count(lease, handover.slack(), now),
                None => state.reachable_count(),
            };
            if !guard.allows(reachable) {
                return ActiveDecision::Minority {
                    reachable,
                    needed: guard.majority(),
                };
            }
        }
        // The first listed role this node holds; none when unscoped.
        let own = state.self_member();
        let role = self
            .roles
            .iter()
            .find(|r| own.is_some_and(|m| m.has_role(r)))
            .cloned();
        if self.is_scoped() && role.is_none() {
            return ActiveDecision::NoActiveRole;
        }
        let margin = handover.margin();
        // With a lease and the member's hearings known, its silence alone
        // decides: it stays the choice (so no one else is active) until it
        // has been silent for the margin, written off or not, and stops
        // being it then even if the detector still holds it live. By then
        // it has stepped down whatever its own detector says; and a node
        // that hears no one while its digests still reach the others keeps
        // their detectors' verdict "live" though its state stops.
        // Otherwise the detector decides.
        let candidate = |m: &Member| match (margin, m.silent_for(now)) {
            (Some(margin), Some(silent)) => silent < margin,
            _ => m.reachable,
        };
        // A member that stepped down (a deliberate hand-over) is treated
        // as a silent one: the choice, and so no one active, for the
        // margin after this node learnt of it; passed over after that,
        // unless it is the only candidate left.
        let handing_over = |m: &Member| {
            m.stepped_down_for(now)
                .is_some_and(|d| margin.is_some_and(|margin| d < margin))
        };
        let willing = |m: &Member| m.stepped_down_since.is_none() || handing_over(m);
        let choice = oldest(state, role.as_deref(), |m| candidate(m) && willing(m))
            .or_else(|| oldest(state, role.as_deref(), candidate));
        match choice {
            None => ActiveDecision::NoUpMemberInScope { role },
            Some(m) if handing_over(m) => ActiveDecision::HandingOver {
                role,
                from: m.address.clone(),
                silent_for: Duration::ZERO,
            },
            Some(m) if m.address == state.self_address => ActiveDecision::Active {
                role,
                active: m.address.clone(),
            },
            Some(m)
                if !m.reachable
                    || handover.lease_duration().is_some_and(|lease| {
                        m.silent_for(now).is_some_and(|silent| silent >= lease)
                    }) =>
            {
                ActiveDecision::HandingOver {
                    role,
                    from: m.address.clone(),
                    silent_for: m.silent_for(now).unwrap_or_default(),
                }
            }
            Some(m) => ActiveDecision::Standby {
                role,
                active: m.address.clone(),
            },
        }
    }

    /// The oldest reachable `Up` member holding `role` (any member when
    /// `None`): the rule's choice once every silence is past the
    /// hand-over margin (and with [`Handover::immediate_unsafe`] always).
    pub fn oldest_up<'s>(&self, state: &'s ClusterState, role: Option<&str>) -> Option<&'s Member> {
        oldest(state, role, |m| m.reachable)
    }
}

/// The oldest `Up` member holding `role` among those `candidate` accepts:
/// age first, then address bytes, never a leader.
fn oldest<'s>(
    state: &'s ClusterState,
    role: Option<&str>,
    candidate: impl Fn(&Member) -> bool,
) -> Option<&'s Member> {
    state
        .members
        .iter()
        .filter(|m| m.status == MemberStatus::Up && candidate(m))
        .filter(|m| role.is_none_or(|r| m.has_role(r)))
        .min_by(|a, b| {
            a.age
                .cmp(&b.age)
                .then_with(|| a.address.as_bytes().cmp(b.address.as_bytes()))
        })
}
