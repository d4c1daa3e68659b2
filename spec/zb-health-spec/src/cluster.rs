//! Cluster vocabulary shared by the manifest and the runtime's cluster probes.

use crate::vocab::keyword;

/// How a membership status maps to health (ZB-2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MembershipPolicy {
    /// `default`: Up/Joining → Healthy, Leaving/Exiting → Degraded, else
    /// Unhealthy.
    #[default]
    Default,
    /// `ot-opc-ua-compat`: Healthy only if self is Up among reachable
    /// members, else Degraded.
    OtOpcUaCompat,
}

keyword!(MembershipPolicy, "policy", {
    Default => "default",
    OtOpcUaCompat => "ot-opc-ua-compat",
});

/// `expected_size` / `require_majority`: the cluster size the probe expects,
/// and whether fewer than a majority of it reachable fails the probe.
///
/// Built in code, a guard is split-brain safe by default:
/// [`MajorityGuard::new`] requires a majority, and only
/// [`allow_minority`](Self::allow_minority) turns that off. (The struct
/// literal stays public because generated code builds it from a manifest.)
///
/// On the runtime's active-node rule a guard that requires a majority also
/// brings the default hand-over (`zb_health::cluster::Handover`: a lease
/// the active node must keep, and a margin its successor waits out), so
/// the old active node and its successor never answer active together;
/// see `spec/conflicts.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MajorityGuard {
    /// `expected_size`, at least 1.
    pub expected_size: u32,
    /// `require_majority`: whether a node reaching fewer than a majority of
    /// `expected_size` (self included) must not act.
    /// The manifest sets it to `true` whenever it gives `expected_size`,
    /// unless it says `require_majority: false`.
    pub require_majority: bool,
}

impl MajorityGuard {
    /// A guard for a cluster of `expected_size` nodes that **requires a
    /// majority**: on the minority side of a partition a node never answers
    /// active (ZB-2.3a with gossip and no downing: see `spec/conflicts.md`).
    pub const fn new(expected_size: u32) -> Self {
        Self {
            expected_size,
            require_majority: true,
        }
    }

    /// Opts out of the majority requirement and keeps only the size. On the
    /// active tier this lets **both sides of a partition answer active**
    /// (split brain); use it only when something else (a lease, a
    /// single-writer store) keeps two active nodes from doing harm.
    pub const fn allow_minority(mut self) -> Self {
        self.require_majority = false;
        self
    }

    /// How many members make a majority of `expected_size`.
    pub const fn majority(self) -> u32 {
        self.expected_size / 2 + 1
    }

    /// Whether `reachable` members (self included) may act: always when the
    /// guard does not require a majority.
    pub const fn allows(self, reachable: u32) -> bool {
        !self.require_majority || reachable >= self.majority()
    }
}

#[cfg(test)]
mod tests {
    use super::MajorityGuard;

    #[test]
    fn a_guard_built_from_a_size_requires_a_majority_unless_told_otherwise() {
        let guard = MajorityGuard::new(3);
        assert!(guard.require_majority);
        assert_eq!(guard.majority(), 2);
        assert!(!guard.allows(1) && guard.allows(2));
        let relaxed = guard.allow_minority();
        assert_eq!(relaxed.expected_size, 3);
        assert!(!relaxed.require_majority && relaxed.allows(1));
        // Even sizes: half is not a majority.
        assert!(!MajorityGuard::new(4).allows(2) && MajorityGuard::new(4).allows(3));
    }
}
