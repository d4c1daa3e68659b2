//! The cluster probes and the cluster gate, all reading one [`ClusterView`].

use std::fmt;
use std::sync::Arc;
use zb_health_spec::vocab::CLUSTER_ADDRESS_KEYS;

use zb_health_spec::{HealthStatus, MajorityGuard, MembershipPolicy};

use super::active::{ActiveDecision, ClusterActiveNode};
use super::guard::majority_guard_setters;
use super::view::{ClusterState, ClusterView, MemberStatus};
use crate::probe::{Probe, ProbeOutcome, ProbeResult};
use crate::report::MEMBER_STATUS_KEY;

/// The description of every cluster probe while no cluster is available.
pub(crate) const CLUSTER_NOT_AVAILABLE: &str = "cluster not yet available";

/// How this node's membership status maps to health: the spec's
/// `AkkaClusterStatusPolicy` (ZB-2.2).
#[derive(Clone, Default)]
pub enum ClusterStatusPolicy {
    /// The convergence target: Up/Joining → Healthy; Leaving/Exiting →
    /// Degraded; WeaklyUp, Down, Removed or unknown → Unhealthy. Leaving
    /// here is a status this node reads (e.g. a leave an operator started
    /// elsewhere); its own [`ClusterView::leave`] fails the probe under
    /// every policy.
    #[default]
    Default,
    /// OtOpcUa's legacy mapping: Healthy only if self is `Up` among the
    /// reachable members; anything else Degraded.
    OtOpcUaCompat,
    /// An application's own table; `None` is "self not in the view".
    Custom(Arc<dyn Fn(Option<MemberStatus>) -> HealthStatus + Send + Sync>),
}

impl fmt::Debug for ClusterStatusPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Default => "Default",
            Self::OtOpcUaCompat => "OtOpcUaCompat",
            Self::Custom(_) => "Custom",
        })
    }
}

impl From<MembershipPolicy> for ClusterStatusPolicy {
    fn from(p: MembershipPolicy) -> Self {
        match p {
            MembershipPolicy::Default => Self::Default,
            MembershipPolicy::OtOpcUaCompat => Self::OtOpcUaCompat,
        }
    }
}

impl ClusterStatusPolicy {
    /// A custom table, e.g. one that also counts `WeaklyUp` as Healthy.
    pub fn custom(
        map: impl Fn(Option<MemberStatus>) -> HealthStatus + Send + Sync + 'static,
    ) -> Self {
        Self::Custom(Arc::new(map))
    }

    /// The health of this node in `state`.
    pub fn evaluate(&self, state: &ClusterState) -> HealthStatus {
        let own = state.self_member();
        match self {
            Self::Default => match own.map(|m| m.status) {
                Some(MemberStatus::Up | MemberStatus::Joining) => HealthStatus::Healthy,
                Some(MemberStatus::Leaving | MemberStatus::Exiting) => HealthStatus::Degraded,
                _ => HealthStatus::Unhealthy,
            },
            Self::OtOpcUaCompat => {
                if own.is_some_and(|m| m.status == MemberStatus::Up && m.reachable) {
                    HealthStatus::Healthy
                } else {
                    HealthStatus::Degraded
                }
            }
            Self::Custom(map) => map(own.map(|m| m.status)),
        }
    }
}

/// The cluster-membership probe (ZB-2.2, the spec's
/// `AkkaClusterHealthCheck`); register it on `ready`. Once this node has
/// left ([`ClusterView::leave`]) it answers Unhealthy whatever the policy
/// says, so ready stays 503 (AT-6).
pub struct ClusterMembershipProbe {
    view: Arc<dyn ClusterView>,
    policy: ClusterStatusPolicy,
}

impl ClusterMembershipProbe {
    /// The probe with the `Default` policy.
    pub fn new(view: Arc<dyn ClusterView>) -> Self {
        Self {
            view,
            policy: ClusterStatusPolicy::Default,
        }
    }

    /// Sets the policy.
    pub fn policy(mut self, policy: impl Into<ClusterStatusPolicy>) -> Self {
        self.policy = policy.into();
        self
    }
}

impl Probe for ClusterMembershipProbe {
    async fn check(&self) -> ProbeOutcome {
        let Some(state) = self.view.state() else {
            return Ok(ProbeResult::degraded(CLUSTER_NOT_AVAILABLE));
        };
        // The policy maps a status (ZB-2.2: Leaving is Degraded); this
        // node's own leave is a decision, and fails it outright.
        let status = if self.view.has_left() {
            HealthStatus::Unhealthy
        } else {
            self.policy.evaluate(&state)
        };
        let own = state.self_member().map(|m| m.status);
        let result = ProbeResult::new(status).with_description(member_description(own));
        // The data has what `clusterReady` reads: Healthy is not yet `Up`
        // (AT-8).
        Ok(match own {
            Some(own) => result.with_data(MEMBER_STATUS_KEY, own.as_str()),
            None => result,
        })
    }
}

/// The membership entry's description: the member's status by Akka's
/// name (`WeaklyUp`), a fixed text (BE-HLTH-007).
const fn member_description(status: Option<MemberStatus>) -> &'static str {
    match status {
        Some(MemberStatus::Joining) => "Member status: Joining",
        Some(MemberStatus::WeaklyUp) => "Member status: WeaklyUp",
        Some(MemberStatus::Up) => "Member status: Up",
        Some(MemberStatus::Leaving) => "Member status: Leaving",
        Some(MemberStatus::Exiting) => "Member status: Exiting",
        Some(MemberStatus::Down) => "Member status: Down",
        Some(MemberStatus::Removed) => "Member status: Removed",
        None => "Member status: Unknown",
    }
}

/// The active-node probe (ZB-2.3b, the spec's `ActiveNodeHealthCheck`);
/// register it on `active`.
///
/// | Situation | Status |
/// |---|---|
/// | this node is the oldest `Up` member in scope | Healthy |
/// | another node is | Unhealthy |
/// | this node holds none of the listed roles | `no_active_role_status`, default Unhealthy |
/// | no cluster yet (startup) | Unhealthy (`cluster not yet available`) |
/// | cluster reachable, no `Up` member in scope | Unhealthy |
/// | majority guard on, minority side | Unhealthy |
///
/// `data` carries `selfAddress`, `activeRole` (when scoped) and
/// `activeNode` (ZB-2.3c), so a standby says who is active.
///
/// "No cluster yet" answers **Unhealthy** (503), not ZB-2.3b's Degraded
/// (200): on `/health/active` a 200 means "route the writes here", and a
/// booting node next to the real active one must not say that. It also
/// keeps the probe in step with [`ClusterActiveNodeGate`](super::ClusterActiveNodeGate), which is closed
/// while no cluster is available (ZB-4). The startup Degraded belongs to
/// the ready tier, where [`ClusterMembershipProbe`] keeps it (see
/// `spec/conflicts.md`).
pub struct ActiveNodeProbe {
    view: Arc<dyn ClusterView>,
    rule: ClusterActiveNode,
    no_active_role_status: HealthStatus,
    unavailable_status: HealthStatus,
    /// The [`CLUSTER_ACTIVE`](crate::observe::CLUSTER_ACTIVE) value last
    /// set, plus one (0: never), so a steady verdict sets nothing.
    gauge: std::sync::atomic::AtomicU8,
}

impl ActiveNodeProbe {
    /// The probe over `view` with `rule`, on the view's hand-over timing
    /// ([`ClusterView::handover`]) unless the rule sets one.
    pub fn new(view: Arc<dyn ClusterView>, rule: ClusterActiveNode) -> Self {
        Self {
            rule: rule.timed_by(view.handover()),
            view,
            no_active_role_status: HealthStatus::Unhealthy,
            unavailable_status: HealthStatus::Unhealthy,
            gauge: std::sync::atomic::AtomicU8::new(0),
        }
    }

    /// Sets the active gauge on a change of this node's verdict.
    fn note_active(&self, active: bool) {
        let value = 1 + u8::from(active);
        if self.gauge.swap(value, std::sync::atomic::Ordering::Relaxed) != value {
            metrics::gauge!(crate::observe::CLUSTER_ACTIVE).set(f64::from(u8::from(active)));
        }
    }

    /// ZB-2.3b's literal startup rule: Degraded (200) while no cluster is
    /// available. **Unsafe on the active tier**: a booting node then
    /// answers 200 on `/health/active` beside the real active node, and the
    /// probe disagrees with the gate until the view is available. Only for
    /// a deployment whose router does not read `/health/active` as "route
    /// the writes here".
    pub fn degraded_while_unavailable_unsafe(mut self) -> Self {
        self.unavailable_status = HealthStatus::Degraded;
        self
    }

    /// The status of a node that holds none of the listed roles. Unhealthy
    /// by default, deliberately: a node owning no active work must not be
    /// in the active pool (ZB-2.3b).
    pub fn no_active_role_status(mut self, status: HealthStatus) -> Self {
        self.no_active_role_status = status;
        self
    }
}

impl Probe for ActiveNodeProbe {
    /// The `active` tier's one purpose: `?exclude=` never leaves it out.
    const EXCLUDABLE: bool = false;

    async fn check(&self) -> ProbeOutcome {
        let Some(state) = self.view.state() else {
            self.note_active(false);
            return Ok(
                ProbeResult::new(self.unavailable_status).with_description(CLUSTER_NOT_AVAILABLE)
            );
        };
        let decision = self.rule.decide(&state);
        self.note_active(decision.is_active());
        let (status, description) = match &decision {
            ActiveDecision::Active { .. } => (
                HealthStatus::Healthy,
                "this node is the oldest Up member in scope",
            ),
            ActiveDecision::Standby { .. } => (
                HealthStatus::Unhealthy,
                "standby: another node is the oldest Up member in scope",
            ),
            ActiveDecision::NoActiveRole => (
                self.no_active_role_status,
                "this node holds none of the active roles",
            ),
            ActiveDecision::NoUpMemberInScope { .. } => {
                (HealthStatus::Unhealthy, "no Up member in scope")
            }
            ActiveDecision::Minority { .. } => (
                HealthStatus::Unhealthy,
                "fewer than a majority of the expected members reachable",
            ),
            ActiveDecision::HandingOver { .. } => (
                HealthStatus::Unhealthy,
                "handing over: the active node went silent, waiting out its lease",
            ),
        };
        let mut result = ProbeResult::new(status)
            .with_description(description)
            .with_data(CLUSTER_ADDRESS_KEYS[0], state.self_address.clone());
        if self.rule.is_scoped()
            && let Some(role) = decision.role()
        {
            result = result.with_data("activeRole", role);
        }
        if let Some(active) = decision.active_node() {
            result = result.with_data(CLUSTER_ADDRESS_KEYS[1], active);
        }
        if let ActiveDecision::HandingOver { from, .. } = &decision {
            result = result.with_data("handingOverFrom", from.clone());
        }
        Ok(result)
    }
}

/// The cluster-transport check (AT-5): fails only when this node reaches
/// **none** of the peers it still expects, or once it has left
/// ([`ClusterView::leave`], AT-6). A partial partition keeps the
/// node ready (the cluster copes); total isolation is where serving turns
/// into split-brain risk. A single-node cluster expects no one and passes.
pub struct ClusterTransportProbe {
    view: Arc<dyn ClusterView>,
    guard: Option<MajorityGuard>,
}

impl ClusterTransportProbe {
    /// The probe over `view`.
    pub fn new(view: Arc<dyn ClusterView>) -> Self {
        Self { view, guard: None }
    }

    majority_guard_setters! {
        /// The cluster has `size` nodes: expects `size - 1` peers even when the
        /// view has forgotten some, and fails on the minority side of a
        /// partition (fewer than a majority of `size` reachable, self
        /// included). Recommended wherever the cluster size is known; opt out
        /// of the majority part with [`allow_minority`](Self::allow_minority).
        expected_size;

        /// Keeps a minority-side node ready: only total isolation fails the
        /// probe. Does nothing without an expected size.
        allow_minority;

        /// Sets the guard as a whole, e.g. from a manifest's `expected_size` /
        /// `require_majority`. In code prefer [`expected_size`](Self::expected_size).
        with_guard;
    }
}

impl Probe for ClusterTransportProbe {
    async fn check(&self) -> ProbeOutcome {
        let Some(state) = self.view.state() else {
            return Ok(ProbeResult::degraded(CLUSTER_NOT_AVAILABLE));
        };
        if self.view.has_left() {
            // AT-6: both ready-tier cluster checks fail after a leave.
            return Ok(ProbeResult::unhealthy("this node left the cluster"));
        }
        // A source may forget dead peers after a grace period (chitchat
        // does); a configured cluster size keeps an isolated node from then
        // passing as a one-node cluster.
        let known = state.expected_peers().count();
        let configured = self
            .guard
            .map_or(0, |g| g.expected_size.saturating_sub(1) as usize);
        let expected = known.max(configured);
        let reached = state.expected_peers().filter(|m| m.reachable).count();
        let result = if expected > 0 && reached == 0 {
            ProbeResult::unhealthy("isolated from every expected peer")
        } else if self
            .guard
            .is_some_and(|g| !g.allows(state.reachable_count()))
        {
            ProbeResult::unhealthy("fewer than a majority of the expected members reachable")
        } else if expected == 0 {
            ProbeResult::healthy().with_description("single node: no peers expected")
        } else {
            ProbeResult::healthy().with_description("peers reachable")
        };
        Ok(result
            .with_data("expectedPeers", expected as u64)
            .with_data("reachablePeers", reached as u64))
    }
}
