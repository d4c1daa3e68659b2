//! The rules themselves: [`Rule`], R1–R27, with each one's stable code,
//! short name and the requirement it enforces.

use std::fmt;

/// A rule of the spec that can be broken before anything runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// R1: a probe registered to the `live` tier.
    LiveTag,
    /// R2: a role-scoped active-node check without roles.
    RoleScopeNeedsRoles,
    /// R3: two probes with one name.
    DuplicateName,
    /// R4: a key, tag, kind, policy or type the spec does not know, or a
    /// custom `type` that is not a Rust path.
    Unknown,
    /// R5: a malformed, zero or absurd duration, or one that cannot fit the
    /// orchestrator's probe timeout.
    Duration,
    /// R6: an empty, relative or colliding endpoint path.
    EndpointPath,
    /// R7: two sources stating different values for one fact.
    Contradiction,
    /// R8: a manifest that cannot be read or parsed as YAML.
    ManifestFile,
    /// R9: an empty or unprintable probe name.
    ProbeName,
    /// R10: a probe on the `active` tier whose failure status is
    /// `degraded`: its failure would answer 200, "route the writes here".
    ActiveNotOptional,
    /// R11: a required key is absent: `service`, a probe's `kind`, a
    /// built-in probe's `name`, a custom probe's `type`, the
    /// `expected_size` that `require_majority` counts against.
    MissingKey,
    /// R12: an `expected_size` below one node.
    ClusterSize,
    /// R13: a probe with no tags, which no tier would ever run.
    NoTags,
    /// R14: one key written twice in one attribute or YAML mapping; the
    /// first would be silently overridden.
    DuplicateKey,
    /// R15: a value of the wrong shape: a number where a duration string
    /// goes, `tags = ready` instead of a list, a mapping where a name goes.
    ValueType,
    /// R16: a background probe's timing that cannot work: `max_staleness`
    /// without `refresh`, or not greater than it; `cache` together with
    /// `refresh`.
    RefreshPolicy,
    /// R17: `cache` or `refresh` on a probe whose answer must be live (one
    /// tagged `active`).
    LiveAnswer,
    /// R18: a shutdown drain that does not fit the orchestrator's
    /// termination grace period, so the process would be killed while
    /// requests are still in flight.
    DrainFitsGrace,
    /// R19: a `cache`, or a background probe's `max_staleness` (stated or
    /// default), not below the orchestrator's detection time, so an old
    /// answer, healthy or not, outlives what the orchestrator would notice.
    MaxAgeFitsDetection,
    /// R20: a failure threshold (`failure_threshold`, `failing_for`) that
    /// can hold a failure back longer than the orchestrator's detection
    /// time, so the threshold, not the orchestrator, decides how long an
    /// outage stays hidden; or a threshold of zero runs.
    ThresholdFitsDetection,
    /// R21: a `depends_on` naming no probe of the registry,
    /// so the dependent would never be gated by what its author meant.
    UnknownDependency,
    /// R22: dependencies that form a cycle (a probe depending on itself
    /// included): each would wait for the other, and none could run first.
    DependencyCycle,
    /// R23: a health group that names a probe the manifest or registry
    /// does not have, or that selects nothing.
    GroupUnknownProbe,
    /// R24: a health group's path that is empty, relative, not a plain
    /// path, or that collides with a tier's, the startup path, another
    /// group's, or a per-probe path (one segment under `ready` or `active`).
    GroupPath,
    /// R25: a health group that selects the `live` tier, which carries no
    /// probes (ZB-1.3): it would always answer 200.
    GroupOnLive,
    /// R26: `history` in a manifest with no port to serve it on: no
    /// `management.port`, and not `application_port: true`.
    HistoryNeedsAPort,
    /// R27: `restart_after` on a probe that is not on `ready` alone, not
    /// `shared`, or not longer than the orchestrator's detection time: the
    /// restart would not be the pod's own failure's, or would come before
    /// the pod is out of rotation.
    RestartAfter,
}

impl Rule {
    /// Every rule, in index order.
    pub const ALL: [Rule; 27] = [
        Rule::LiveTag,
        Rule::RoleScopeNeedsRoles,
        Rule::DuplicateName,
        Rule::Unknown,
        Rule::Duration,
        Rule::EndpointPath,
        Rule::Contradiction,
        Rule::ManifestFile,
        Rule::ProbeName,
        Rule::ActiveNotOptional,
        Rule::MissingKey,
        Rule::ClusterSize,
        Rule::NoTags,
        Rule::DuplicateKey,
        Rule::ValueType,
        Rule::RefreshPolicy,
        Rule::LiveAnswer,
        Rule::DrainFitsGrace,
        Rule::MaxAgeFitsDetection,
        Rule::ThresholdFitsDetection,
        Rule::UnknownDependency,
        Rule::DependencyCycle,
        Rule::GroupUnknownProbe,
        Rule::GroupPath,
        Rule::GroupOnLive,
        Rule::HistoryNeedsAPort,
        Rule::RestartAfter,
    ];

    /// The short stable code, `R1` … `R27`, that tests and docs use.
    pub const fn code(self) -> &'static str {
        match self {
            Rule::LiveTag => "R1",
            Rule::RoleScopeNeedsRoles => "R2",
            Rule::DuplicateName => "R3",
            Rule::Unknown => "R4",
            Rule::Duration => "R5",
            Rule::EndpointPath => "R6",
            Rule::Contradiction => "R7",
            Rule::ManifestFile => "R8",
            Rule::ProbeName => "R9",
            Rule::ActiveNotOptional => "R10",
            Rule::MissingKey => "R11",
            Rule::ClusterSize => "R12",
            Rule::NoTags => "R13",
            Rule::DuplicateKey => "R14",
            Rule::ValueType => "R15",
            Rule::RefreshPolicy => "R16",
            Rule::LiveAnswer => "R17",
            Rule::DrainFitsGrace => "R18",
            Rule::MaxAgeFitsDetection => "R19",
            Rule::ThresholdFitsDetection => "R20",
            Rule::UnknownDependency => "R21",
            Rule::DependencyCycle => "R22",
            Rule::GroupUnknownProbe => "R23",
            Rule::GroupPath => "R24",
            Rule::GroupOnLive => "R25",
            Rule::HistoryNeedsAPort => "R26",
            Rule::RestartAfter => "R27",
        }
    }

    /// The rule's short name, as `spec/rules.md` titles it.
    pub const fn name(self) -> &'static str {
        match self {
            Rule::LiveTag => "live-tag",
            Rule::RoleScopeNeedsRoles => "role-scope-needs-roles",
            Rule::DuplicateName => "duplicate-name",
            Rule::Unknown => "unknown-word",
            Rule::Duration => "duration",
            Rule::EndpointPath => "endpoint-path",
            Rule::Contradiction => "contradiction",
            Rule::ManifestFile => "manifest-file",
            Rule::ProbeName => "probe-name",
            Rule::ActiveNotOptional => "active-not-optional",
            Rule::MissingKey => "missing-key",
            Rule::ClusterSize => "cluster-size",
            Rule::NoTags => "no-tags",
            Rule::DuplicateKey => "duplicate-key",
            Rule::ValueType => "value-type",
            Rule::RefreshPolicy => "refresh-policy",
            Rule::LiveAnswer => "live-answer",
            Rule::DrainFitsGrace => "drain-fits-grace",
            Rule::MaxAgeFitsDetection => "max-age-fits-detection",
            Rule::ThresholdFitsDetection => "threshold-fits-detection",
            Rule::UnknownDependency => "unknown-dependency",
            Rule::DependencyCycle => "dependency-cycle",
            Rule::GroupUnknownProbe => "group-unknown-probe",
            Rule::GroupPath => "group-path",
            Rule::GroupOnLive => "group-on-live",
            Rule::HistoryNeedsAPort => "history-needs-a-port",
            Rule::RestartAfter => "restart-after",
        }
    }

    /// The requirement the rule enforces, where one exists.
    pub const fn cites(self) -> Option<&'static str> {
        match self {
            Rule::LiveTag => Some("ZB-1.3"),
            Rule::RoleScopeNeedsRoles => Some("ZB-2.3d"),
            Rule::DuplicateName => Some("AT-1"),
            Rule::Duration => Some("BE-HLTH-006"),
            Rule::EndpointPath => Some("ZB-5"),
            Rule::ProbeName => Some("ZB-3"),
            Rule::ActiveNotOptional => Some("ZB-2.3b"),
            Rule::MissingKey => Some("ZB-5"),
            Rule::ClusterSize => Some("AT-5"),
            Rule::NoTags => Some("ZB-1.1"),
            Rule::RefreshPolicy
            | Rule::LiveAnswer
            | Rule::MaxAgeFitsDetection
            | Rule::ThresholdFitsDetection => Some("BE-HLTH-006"),
            Rule::DrainFitsGrace => Some("BE-HLTH-005"),
            Rule::GroupUnknownProbe | Rule::GroupPath => Some("ZB-5"),
            Rule::GroupOnLive => Some("ZB-1.3"),
            Rule::Unknown
            | Rule::Contradiction
            | Rule::ManifestFile
            | Rule::DuplicateKey
            | Rule::ValueType
            | Rule::UnknownDependency
            | Rule::DependencyCycle
            | Rule::HistoryNeedsAPort
            | Rule::RestartAfter => None,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cites() {
            Some(id) => write!(f, "{} ({id})", self.code()),
            None => f.write_str(self.code()),
        }
    }
}
