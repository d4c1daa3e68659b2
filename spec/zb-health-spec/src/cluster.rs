//! Cluster vocabulary shared by the manifest and the runtime's cluster probes.

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

impl MembershipPolicy {
    /// The YAML spellings, for messages and suggestions.
    pub const NAMES: [&'static str; 2] = ["default", "ot-opc-ua-compat"];

    /// The YAML spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            MembershipPolicy::Default => Self::NAMES[0],
            MembershipPolicy::OtOpcUaCompat => Self::NAMES[1],
        }
    }

    /// Parses the YAML spelling.
    pub fn parse(s: &str) -> Option<Self> {
        [MembershipPolicy::Default, MembershipPolicy::OtOpcUaCompat]
            .into_iter()
            .find(|p| p.as_str() == s)
    }
}

/// `expected_size` / `require_majority`: the cluster size the probe expects,
/// and whether fewer than a majority of it reachable fails the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MajorityGuard {
    /// `expected_size`, at least 1.
    pub expected_size: u32,
    /// `require_majority`, default `false`.
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
