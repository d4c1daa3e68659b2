//! The rules themselves: [`Rule`], R1–R27, with each one's stable code,
//! short name and the requirement it enforces.

use std::fmt;

/// Declares [`Rule`] from its table, one line per rule: the variant, its
/// code, its short name and the requirement it cites.
macro_rules! rules {
    ($($(#[$doc:meta])* $rule:ident = ($code:literal, $name:literal, $cites:expr),)+) => {
        /// A rule of the spec that can be broken before anything runs.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Rule {
            $($(#[$doc])* $rule,)+
        }

        impl Rule {
            /// Every rule, in index order.
            pub const ALL: [Rule; 27] = [$(Rule::$rule),+];

            /// The short stable code, `R1` … `R27`, that tests and docs use.
            pub const fn code(self) -> &'static str {
                match self {
                    $(Rule::$rule => $code,)+
                }
            }

            /// The rule's short name, as `spec/rules.md` titles it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Rule::$rule => $name,)+
                }
            }

            /// The requirement the rule enforces, where one exists.
            pub const fn cites(self) -> Option<&'static str> {
                match self {
                    $(Rule::$rule => $cites,)+
                }
            }
        }
    };
}

rules! {
    /// R1: a probe registered to the `live` tier.
    LiveTag = ("R1", "live-tag", Some("ZB-1.3")),
    /// R2: a role-scoped active-node check without roles.
    RoleScopeNeedsRoles = ("R2", "role-scope-needs-roles", Some("ZB-2.3d")),
    /// R3: two probes with one name.
    DuplicateName = ("R3", "duplicate-name", Some("AT-1")),
    /// R4: a key, tag, kind, policy or type the spec does not know, or a
    /// custom `type` that is not a Rust path.
    Unknown = ("R4", "unknown-word", None),
    /// R5: a malformed, zero or absurd duration, or one that cannot fit the
    /// orchestrator's probe timeout.
    Duration = ("R5", "duration", Some("BE-HLTH-006")),
    /// R6: an empty, relative or colliding endpoint path.
    EndpointPath = ("R6", "endpoint-path", Some("ZB-5")),
    /// R7: two sources stating different values for one fact.
    Contradiction = ("R7", "contradiction", None),
    /// R8: a manifest that cannot be read or parsed as YAML.
    ManifestFile = ("R8", "manifest-file", None),
    /// R9: an empty or unprintable probe name.
    ProbeName = ("R9", "probe-name", Some("ZB-3")),
    /// R10: a probe on the `active` tier whose failure status is
    /// `degraded`: its failure would answer 200, "route the writes here".
    ActiveNotOptional = ("R10", "active-not-optional", Some("ZB-2.3b")),
    /// R11: a required key is absent: `service`, a probe's `kind`, a
    /// built-in probe's `name`, a custom probe's `type`, the
    /// `expected_size` that `require_majority` counts against.
    MissingKey = ("R11", "missing-key", Some("ZB-5")),
    /// R12: an `expected_size` below one node.
    ClusterSize = ("R12", "cluster-size", Some("AT-5")),
    /// R13: a probe with no tags, which no tier would ever run.
    NoTags = ("R13", "no-tags", Some("ZB-1.1")),
    /// R14: one key written twice in one attribute or YAML mapping; the
    /// first would be silently overridden.
    DuplicateKey = ("R14", "duplicate-key", None),
    /// R15: a value of the wrong shape: a number where a duration string
    /// goes, `tags = ready` instead of a list, a mapping where a name goes.
    ValueType = ("R15", "value-type", None),
    /// R16: a background probe's timing that cannot work: `max_staleness`
    /// without `refresh`, or not greater than it; `cache` together with
    /// `refresh`.
    RefreshPolicy = ("R16", "refresh-policy", Some("BE-HLTH-006")),
    /// R17: `cache` or `refresh` on a probe whose answer must be live (one
    /// tagged `active`).
    LiveAnswer = ("R17", "live-answer", Some("BE-HLTH-006")),
    /// R18: a shutdown drain that does not fit the orchestrator's
    /// termination grace period, so the process would be killed while
    /// requests are still in flight.
    DrainFitsGrace = ("R18", "drain-fits-grace", Some("BE-HLTH-005")),
    /// R19: a `cache`, or a background probe's `max_staleness` (stated or
    /// default), not below the orchestrator's detection time, so an old
    /// answer, healthy or not, outlives what the orchestrator would notice.
    MaxAgeFitsDetection = ("R19", "max-age-fits-detection", Some("BE-HLTH-006")),
    /// R20: a failure threshold (`failure_threshold`, `failing_for`) that
    /// can hold a failure back longer than the orchestrator's detection
    /// time, so the threshold, not the orchestrator, decides how long an
    /// outage stays hidden; or a threshold of zero runs.
    ThresholdFitsDetection = ("R20", "threshold-fits-detection", Some("BE-HLTH-006")),
    /// R21: a `depends_on` naming no probe of the registry,
    /// so the dependent would never be gated by what its author meant.
    UnknownDependency = ("R21", "unknown-dependency", None),
    /// R22: dependencies that form a cycle (a probe depending on itself
    /// included): each would wait for the other, and none could run first.
    DependencyCycle = ("R22", "dependency-cycle", None),
    /// R23: a health group that names a probe the manifest or registry
    /// does not have, or that selects nothing.
    GroupUnknownProbe = ("R23", "group-unknown-probe", Some("ZB-5")),
    /// R24: a health group's path that is empty, relative, not a plain
    /// path, or that collides with a tier's, the startup path, another
    /// group's, or a per-probe path (one segment under `ready` or `active`).
    GroupPath = ("R24", "group-path", Some("ZB-5")),
    /// R25: a health group that selects the `live` tier, which carries no
    /// probes (ZB-1.3): it would always answer 200.
    GroupOnLive = ("R25", "group-on-live", Some("ZB-1.3")),
    /// R26: `history` in a manifest with no port to serve it on: no
    /// `management.port`, and not `application_port: true`.
    HistoryNeedsAPort = ("R26", "history-needs-a-port", None),
    /// R27: `restart_after` on a probe that is not on `ready` alone, not
    /// `shared`, or not longer than the orchestrator's detection time: the
    /// restart would not be the pod's own failure's, or would come before
    /// the pod is out of rotation.
    RestartAfter = ("R27", "restart-after", None),
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cites() {
            Some(id) => write!(f, "{} ({id})", self.code()),
            None => f.write_str(self.code()),
        }
    }
}
