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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MajorityGuard {
    /// `expected_size`, at least 1.
    pub expected_size: u32,
    /// `require_majority`: the manifest sets it to `true` whenever it gives
    /// `expected_size`, unless it says `require_majority: false`.
    pub require_majority: bool,
}

impl MajorityGuard {
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
