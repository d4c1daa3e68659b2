//! Every static rule of the health spec ([`Rule`], R1–R26), and the
//! functions that check them.
//!
//! The index, in the order of the codes (as `spec/rules.md` lists them),
//! with the functions of this file that report each rule and the
//! requirement [`Rule::cites`]:
//!
//! | Rule | Functions here | Cites |
//! |---|---|---|
//! | R1 `live-tag` | [`check_probe_tags`] | ZB-1.3 |
//! | R2 `role-scope-needs-roles` | [`check_role_preference`] | ZB-2.3d |
//! | R3 `duplicate-name` | [`check_unique_names`], [`check_unique_names_of`] | AT-1 |
//! | R4 `unknown` | none: reported where the unknown thing is parsed | |
//! | R5 `duration` | [`check_timeout`], [`check_duration_text`], [`check_watchdog_deadline`], [`check_execution_policy`], [`check_drain`] | BE-HLTH-006 |
//! | R6 `endpoint-path` | [`check_paths`], [`check_history_paths`] | ZB-5 |
//! | R7 `contradiction` | [`check_shared`], [`check_authorized_disclosure`], [`resolve_authorized`]; the other contradictions where two sources meet | |
//! | R8 `manifest-file` | none: the manifest reader | |
//! | R9 `probe-name` | [`check_name`], [`check_name_of`] | ZB-3 |
//! | R10 `active-not-optional` | [`check_active_not_optional`] | ZB-2.3b |
//! | R11 `missing-key` | [`missing_key`] | ZB-5 |
//! | R12 `cluster-size` | [`check_cluster_size`] | AT-5 |
//! | R13 `no-tags` | [`check_probe_tags`] | ZB-1.1 |
//! | R14 `duplicate-key` | none: the attribute parser and the YAML reader | |
//! | R15 `value-type` | none: the attribute parser and the manifest reader | |
//! | R16 `refresh-policy` | [`check_execution_policy`], [`check_execution_policy_at`] | BE-HLTH-006 |
//! | R17 `live-answer` | [`check_execution_policy`], [`check_execution_policy_at`] | BE-HLTH-006 |
//! | R18 `drain-fits-grace` | [`check_drain`] | BE-HLTH-005 |
//! | R19 `max-age-fits-detection` | [`check_max_age`] | BE-HLTH-006 |
//! | R20 `threshold-fits-detection` | [`check_threshold`] | BE-HLTH-006 |
//! | R21 `unknown-dependency` | [`check_dependencies`] | |
//! | R22 `dependency-cycle` | [`check_dependencies`] | |
//! | R23 `group-unknown-probe` | [`check_group_probes`] | ZB-5 |
//! | R24 `group-path` | [`check_group_paths`] | ZB-5 |
//! | R25 `group-on-live` | [`check_group_tiers`] | ZB-1.3 |
//! | R26 `history-needs-a-port` | [`check_history_port`] | |
//!
//! The `grpc.health.v1` mapping's checks ([`crate::grpc`]) report R3, R4,
//! R5 and R9 with the same codes.
//!
//! Codes are stable: a new rule gets the next number, never a reused one.
//!
//! Each function takes the user's own location type `L` (a YAML span, a
//! `proc_macro2::Span`, or `()` for the runtime builder) and pushes into a
//! [`Violations`] sink, so one call reports *every* problem, not the first.

use std::fmt;
use std::time::Duration;

use crate::{Disclosure, FailureStatus, MAX_PROBE_TIMEOUT, Tag, TagSet, did_you_mean, hint};

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
}

impl Rule {
    /// Every rule, in index order.
    pub const ALL: [Rule; 26] = [
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
    ];

    /// The short stable code, `R1` … `R26`, that tests and docs use.
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
        }
    }

    /// The rule's short name, as `spec/rules.md` titles it.
    pub const fn name(self) -> &'static str {
        match self {
            Rule::LiveTag => "live-tag",
            Rule::RoleScopeNeedsRoles => "role-scope-needs-roles",
            Rule::DuplicateName => "duplicate-name",
            Rule::Unknown => "unknown",
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
            | Rule::HistoryNeedsAPort => None,
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

/// One broken rule, at a location of the caller's choosing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation<L> {
    /// Which rule.
    pub rule: Rule,
    /// Where: a YAML span, a token span, or `()`.
    pub location: L,
    /// What is wrong, quoting the user's value.
    pub message: String,
    /// How to fix it, in words.
    pub help: String,
}

impl<L> fmt::Display for Violation<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\n  = rule {}\n  = help: {}",
            self.message, self.rule, self.help
        )
    }
}

impl<L: fmt::Debug> std::error::Error for Violation<L> {}

/// The error sink: collects every violation so that a user sees them all at
/// once, as serde_derive's `Ctxt` does.
#[derive(Debug)]
#[must_use = "violations must be reported with `into_result`"]
pub struct Violations<L> {
    found: Vec<Violation<L>>,
}

impl<L> Default for Violations<L> {
    fn default() -> Self {
        Self { found: Vec::new() }
    }
}

impl<L> Violations<L> {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a violation.
    pub fn push(
        &mut self,
        rule: Rule,
        location: L,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        self.found.push(Violation {
            rule,
            location,
            message: message.into(),
            help: help.into(),
        });
    }

    /// Whether nothing was found so far.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// `Ok` if no rule was broken, else every violation in the order found.
    pub fn into_result(self) -> Result<(), Vec<Violation<L>>> {
        if self.found.is_empty() {
            Ok(())
        } else {
            Err(self.found)
        }
    }
}

/// Rules broken outside a compiler: what the runtime builder, the endpoint
/// builder and `ClusterActiveNode::with_roles` return, every violation and
/// not only the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    violations: Vec<Violation<()>>,
}

impl SpecError {
    /// Every violation, in the order found.
    pub fn violations(&self) -> &[Violation<()>] {
        &self.violations
    }

    /// The rules broken, in the order found (convenient in tests).
    pub fn rules(&self) -> Vec<Rule> {
        self.violations.iter().map(|v| v.rule).collect()
    }
}

impl From<Vec<Violation<()>>> for SpecError {
    fn from(violations: Vec<Violation<()>>) -> Self {
        Self { violations }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "error: {v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}

/// What a checked name names. Every name the spec checks becomes a JSON
/// key, a log field, a metric label or a generated field, so R9 and R3 are
/// the same rules for all of them; only the words of the messages differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameOf {
    /// A probe: the key of its entry in `ready` and `active`.
    Probe,
    /// The manifest's `service`.
    Service,
    /// A liveness watchdog: the key of its entry in `live` (BE-HLTH-002).
    Watchdog,
    /// A declared piece of startup work (BE-HLTH-004): a field of the
    /// generated startup handles and a log field.
    StartupGate,
    /// A health group (`groups`): a named set of probes served at a path
    /// of its own.
    Group,
}

impl NameOf {
    /// The noun messages use.
    pub const fn noun(self) -> &'static str {
        match self {
            NameOf::Probe => "probe",
            NameOf::Service => "service",
            NameOf::Watchdog => "watchdog",
            NameOf::StartupGate => "startup gate",
            NameOf::Group => "health group",
        }
    }

    /// A good name of this kind, for the help texts.
    const fn example(self) -> &'static str {
        match self {
            NameOf::Probe => "database",
            NameOf::Service => "scadabridge",
            NameOf::Watchdog => "consumer",
            NameOf::StartupGate => "migrations",
            NameOf::Group => "canary",
        }
    }
}

/// R9: a probe name is a low-cardinality identifier (it becomes a JSON key,
/// a log field and a metric label): 1 to 64 ASCII letters, digits, `-`, `_`
/// or `.`.
///
/// The names of the entries the lifecycle puts in front of the probes'
/// ([`STARTUP_ENTRY`], [`SHUTDOWN_ENTRY`]) are reserved: a probe with one of
/// them would write the same JSON key twice while the service starts or
/// drains.
pub fn check_name<L>(name: &str, location: L, sink: &mut Violations<L>) {
    check_name_of(NameOf::Probe, name, location, sink);
}

/// R9 for any name the spec checks ([`NameOf`]): the rule of
/// [`check_name`], with messages that say what the name names.
pub fn check_name_of<L>(of: NameOf, name: &str, location: L, sink: &mut Violations<L>) {
    let (noun, example) = (of.noun(), of.example());
    if name.is_empty() {
        sink.push(
            Rule::ProbeName,
            location,
            format!("{noun} name is empty"),
            match of {
                NameOf::Probe => "give the probe a short fixed name such as `database`; it is the key of its entry in the JSON body".to_owned(),
                _ => format!("give the {noun} a short fixed name such as `{example}`"),
            },
        );
    } else if name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        sink.push(
            Rule::ProbeName,
            location,
            format!("{noun} name `{name}` is not a short identifier"),
            "use at most 64 ASCII letters, digits, `-`, `_` or `.`; names are JSON keys and metric labels, so keep them fixed and low-cardinality (BE-HLTH-007)",
        );
    } else if of != NameOf::Service && [STARTUP_ENTRY, SHUTDOWN_ENTRY].contains(&name) {
        sink.push(
            Rule::ProbeName,
            location,
            format!("{noun} name `{name}` is reserved"),
            format!("the lifecycle's own entry has this name while the service starts or drains; name the {noun} after what it {}", match of {
                NameOf::Probe => "checks",
                NameOf::Watchdog => "watches",
                NameOf::Service | NameOf::StartupGate | NameOf::Group => "does",
            }),
        );
    }
}

/// The name of the entry that holds `ready` and `active` at 503 until the
/// service's startup work is done (BE-HLTH-004). Reserved for it (R9).
pub const STARTUP_ENTRY: &str = "startup";

/// The name of the entry that turns `ready` and `active` 503 while the
/// service drains (BE-HLTH-005). Reserved for it (R9).
pub const SHUTDOWN_ENTRY: &str = "shutdown";

/// R1: a probe serves `ready` and/or `active`, never `live` (ZB-1.3); and
/// R13: at least one tier (ZB-1.1).
///
/// `tags` pairs each tag with where it was written, so the error points at
/// the `live` itself; an empty list is reported at `probe_location`.
pub fn check_probe_tags<L: Clone>(
    name: &str,
    tags: &[(Tag, L)],
    probe_location: L,
    sink: &mut Violations<L>,
) {
    for (tag, loc) in tags {
        if *tag == Tag::Live {
            sink.push(
                Rule::LiveTag,
                loc.clone(),
                format!("probe `{name}` is registered to the `live` tier"),
                "the live tier (`/healthz`) carries no probes, so a failing dependency can never restart the pod; tag the probe `ready` (or `active`) instead",
            );
        }
    }
    if tags.is_empty() {
        sink.push(
            Rule::NoTags,
            probe_location,
            format!("probe `{name}` has no tags, so no tier would ever run it"),
            "tag it `ready` for a dependency, or `active` for an active-node check",
        );
    }
}

/// R2 (ZB-2.3d): a role-scoped active-node check lists its roles in order
/// of preference: at least one, none empty, none twice.
///
/// `roles` is `None` when no list was given at all, else the list with its
/// own location and each role's. Returns whether the list is usable.
pub fn check_role_preference<L: Clone>(
    probe: &str,
    roles: Option<(&[(&str, L)], L)>,
    scope_location: L,
    sink: &mut Violations<L>,
) -> bool {
    const HELP: &str = "list the roles in order of preference, e.g. `[admin, driver]`; a node answers for the first listed role it holds, and a scope with no roles could never pick an active node";
    let Some((list, list_location)) = roles else {
        sink.push(
            Rule::RoleScopeNeedsRoles,
            scope_location,
            format!("active-node probe `{probe}` is role-scoped but lists no roles"),
            HELP,
        );
        return false;
    };
    if list.is_empty() {
        sink.push(
            Rule::RoleScopeNeedsRoles,
            list_location,
            format!("active-node probe `{probe}` is role-scoped with an empty role list"),
            HELP,
        );
        return false;
    }
    let mut ok = true;
    for (i, (role, loc)) in list.iter().enumerate() {
        if role.is_empty() {
            sink.push(
                Rule::RoleScopeNeedsRoles,
                loc.clone(),
                format!("active-node probe `{probe}` lists an empty role name"),
                "write the cluster role's name, e.g. `admin`",
            );
            ok = false;
        } else if list[..i].iter().any(|(r, _)| r == role) {
            sink.push(
                Rule::RoleScopeNeedsRoles,
                loc.clone(),
                format!("active-node probe `{probe}` lists role `{role}` twice"),
                "each role appears once in the preference order; remove the repeat",
            );
            ok = false;
        }
    }
    ok
}

/// R5: a probe deadline is non-zero, at most [`MAX_PROBE_TIMEOUT`], and
/// shorter than the orchestrator's probe timeout when one is declared
/// (BE-HLTH-006), so the endpoint always answers before the orchestrator
/// gives up on it.
pub fn check_timeout<L>(
    name: &str,
    timeout: Duration,
    orchestrator: Option<Duration>,
    location: L,
    sink: &mut Violations<L>,
) {
    let ms = timeout.as_millis();
    if timeout.is_zero() {
        sink.push(
            Rule::Duration,
            location,
            format!("probe `{name}` has a zero timeout, so it could never succeed"),
            "give it a deadline such as `800ms`",
        );
    } else if timeout > MAX_PROBE_TIMEOUT {
        sink.push(
            Rule::Duration,
            location,
            format!("probe `{name}` has a timeout of {ms} ms, longer than the {} s the spec allows", MAX_PROBE_TIMEOUT.as_secs()),
            "a health probe must answer within the orchestrator's probe timeout (Kubernetes' default is 1s); use a deadline below it",
        );
    } else if let Some(orch) = orchestrator
        && !crate::facts::fits_orchestrator(timeout, orch)
    {
        sink.push(
                Rule::Duration,
                location,
                format!(
                    "probe `{name}` has a timeout of {ms} ms, not below the orchestrator's probe timeout of {} ms",
                    orch.as_millis()
                ),
                crate::facts::ORCHESTRATOR_HELP,
            );
    }
}

/// R5: parses a duration written by the user, reporting a malformed one at
/// its location. Returns `None` after reporting.
pub fn check_duration_text<L>(
    text: &str,
    location: L,
    sink: &mut Violations<L>,
) -> Option<Duration> {
    match crate::parse_duration(text) {
        Ok(d) => Some(d),
        Err(e) => {
            sink.push(Rule::Duration, location, e.message(), e.help());
            None
        }
    }
}

/// R11: a required key is absent. `what` names it in context
/// ("the manifest has no `service`"); `help` says what to add.
pub fn missing_key<L>(
    what: impl Into<String>,
    help: impl Into<String>,
    location: L,
    sink: &mut Violations<L>,
) {
    sink.push(Rule::MissingKey, location, what, help);
}

/// R12: an expected cluster size counts nodes, so it is at least one
/// (AT-5: a single-node cluster is legal; ZB-2.3a: the majority guard
/// divides it). Returns the size when legal.
pub fn check_cluster_size<L>(
    what: &str,
    size: i128,
    location: L,
    sink: &mut Violations<L>,
) -> Option<u32> {
    if size < 1 {
        sink.push(
            Rule::ClusterSize,
            location,
            format!("{what} is `{size}`, but a cluster has at least one node"),
            "set it to the number of nodes the cluster is meant to have, e.g. `3`",
        );
        return None;
    }
    let fits = u32::try_from(size).ok();
    if fits.is_none() {
        sink.push(
            Rule::ClusterSize,
            location,
            format!("{what} is `{size}`, more nodes than any cluster has"),
            "set it to the number of nodes the cluster is meant to have, e.g. `3`",
        );
    }
    fits
}

/// R10: no probe on the `active` tier may be optional (ZB-2.3b; the
/// conflict with BE-HLTH-003 is resolved in `spec/conflicts.md`).
///
/// A `degraded` failure status caps the probe's failures at Degraded, which
/// answers 200. On `ready` that is how an optional dependency is declared
/// (BE-HLTH-003); on `active` a 200 means "this is the active node, route
/// the writes here", so every standby would claim the role. The rule covers
/// every probe tagged `active`, not only the built-in active-node kind: any
/// entry of that tier answers the same question.
pub fn check_active_not_optional<L>(
    name: &str,
    tags: TagSet,
    failure_status: FailureStatus,
    location: L,
    sink: &mut Violations<L>,
) {
    if tags.contains(Tag::Active) && failure_status == FailureStatus::Degraded {
        sink.push(
            Rule::ActiveNotOptional,
            location,
            format!("probe `{name}` is on the `active` tier with failure status `degraded`"),
            "on `/health/active` a 200 means \"route the writes here\", so a degraded failure would make every standby answer active; remove `failure_status: degraded` (an optional dependency belongs on `ready` only)",
        );
    }
}

/// R7 for a shared dependency: `shared` makes a failure that most nodes
/// of the cluster share answer `Degraded` (how BE-HLTH-003 meets a
/// shared outage, `spec/conflicts.md`), so the tier stays
/// 200 and no pod leaves the Service over an outage no pod can fix. That is
/// a readiness decision: a probe marked shared must be on `ready`, and
/// never on `active`, where a 200 means "route the writes here" and a
/// shared failure must not elect every node.
pub fn check_shared<L>(name: &str, tags: TagSet, location: L, sink: &mut Violations<L>) {
    if !tags.contains(Tag::Ready) || tags.contains(Tag::Active) {
        sink.push(
            Rule::Contradiction,
            location,
            format!(
                "probe `{name}` is marked `shared` but is on {}",
                if tags.contains(Tag::Active) {
                    "the `active` tier"
                } else {
                    "no `ready` tier"
                }
            ),
            "`shared: true` keeps `/health/ready` at 200 when a dependency fails on most nodes at once; put the probe on `tags: [ready]` only, or remove `shared`",
        );
    }
}

/// R7 for authorized details (BE-HLTH-007): the level a tier shows to a
/// request with the configured bearer token must show more than the level
/// it shows everyone else. An authorized level at or below the public one
/// would offer a token that changes nothing, which is a mistake in the
/// manifest or the builder, not a choice.
pub fn check_authorized_disclosure<L>(
    tier: Tag,
    public: Disclosure,
    authorized: Disclosure,
    location: L,
    sink: &mut Violations<L>,
) {
    if !authorized.shows_more_than(public) {
        sink.push(
            Rule::Contradiction,
            location,
            format!(
                "the `{tier}` tier's authorized level `{authorized}` shows no more than its public level `{public}`"
            ),
            if public == Disclosure::Full {
                "nothing shows more than `full`: remove the authorized level, or show everyone less with `disclosure: names` or `status`".to_owned()
            } else {
                format!(
                    "the bearer token is for seeing more: set the authorized level above `{public}` (`full`), or show everyone less with a stricter `disclosure`"
                )
            },
        );
    }
}

/// The authorized levels of the three tiers (indexed by `Tag as usize`)
/// from what was written: `every_tier`, one level for all three, applies
/// to the tiers whose public level it shows more than (R7 when that is
/// none); `per_tier` overrides it, and each level there must show more
/// than its tier's public one ([`check_authorized_disclosure`]). Used by
/// the manifest reader and `ZbHealth::build` alike.
pub fn resolve_authorized<L: Clone>(
    public: [Disclosure; 3],
    every_tier: Option<(Disclosure, L)>,
    per_tier: [Option<(Disclosure, L)>; 3],
    sink: &mut Violations<L>,
) -> [Option<Disclosure>; 3] {
    let mut levels = [None; 3];
    if let Some((level, at)) = every_tier {
        for tag in Tag::ALL {
            levels[tag as usize] = level.shows_more_than(public[tag as usize]).then_some(level);
        }
        if levels.iter().all(Option::is_none) {
            // No tier gains anything: report it against the ready tier,
            // the one authorized details are usually for.
            check_authorized_disclosure(Tag::Ready, public[Tag::Ready as usize], level, at, sink);
        }
    }
    for (tag, written) in Tag::ALL.into_iter().zip(per_tier) {
        if let Some((level, at)) = written {
            check_authorized_disclosure(tag, public[tag as usize], level, at, sink);
            levels[tag as usize] = Some(level);
        }
    }
    levels
}

/// R5, R16, R17: a probe's execution policy (BE-HLTH-006).
///
/// * R5: `cache`, `refresh` and `max_staleness` are non-zero.
/// * R16: `max_staleness` needs `refresh` and must be greater than it (a
///   result is due every `refresh`, so a bound at or below it would report
///   every result stale); `cache` and `refresh` exclude each other (a
///   background probe is never run by a request, so there is nothing to
///   cache).
/// * R17: no probe tagged `active` may be cached or refreshed in the
///   background. Its 200 means "this node is the active one, route the
///   writes here" (ZB-2.3b); an answer up to `cache` or `max_staleness` old
///   would let a node that lost the role keep claiming it, so two nodes
///   answer active at once. Readiness tolerates a bounded stale answer
///   (the orchestrator itself probes only every few seconds); the active
///   role does not. As for R10, the rule covers every `active`-tagged
///   probe, not only the built-in active-node kind: every entry of that
///   tier answers the same question.
pub fn check_execution_policy<L: Clone>(
    name: &str,
    tags: TagSet,
    cache: Option<Duration>,
    refresh: Option<Duration>,
    max_staleness: Option<Duration>,
    location: L,
    sink: &mut Violations<L>,
) {
    let at = |d: Option<Duration>| d.map(|d| (d, location.clone()));
    check_execution_policy_at(name, tags, at(cache), at(refresh), at(max_staleness), sink);
}

/// [`check_execution_policy`] with each key's own location, for a caller
/// that knows where each was written (the manifest): a violation is located
/// at the key it is about (`max_staleness` for its bound, `cache` for
/// `cache` with `refresh`).
pub fn check_execution_policy_at<L: Clone>(
    name: &str,
    tags: TagSet,
    cache: Option<(Duration, L)>,
    refresh: Option<(Duration, L)>,
    max_staleness: Option<(Duration, L)>,
    sink: &mut Violations<L>,
) {
    for (key, value) in [
        ("cache", &cache),
        ("refresh", &refresh),
        ("max_staleness", &max_staleness),
    ] {
        if let Some((d, at)) = value
            && d.is_zero()
        {
            sink.push(
                Rule::Duration,
                at.clone(),
                format!("probe `{name}` has a zero `{key}`"),
                "leave the key out for the default, or give a positive duration such as `5s`",
            );
        }
    }
    match (&refresh, &max_staleness) {
        (None, Some((_, at))) => sink.push(
            Rule::RefreshPolicy,
            at.clone(),
            format!("probe `{name}` has `max_staleness` but no `refresh`"),
            "`max_staleness` bounds the age of a background result; add `refresh` or remove `max_staleness`",
        ),
        (Some((r, _)), Some((m, at))) if m <= r => sink.push(
            Rule::RefreshPolicy,
            at.clone(),
            format!(
                "probe `{name}` has `max_staleness` {} ms, not greater than its `refresh` {} ms",
                m.as_millis(),
                r.as_millis()
            ),
            "a result is due every `refresh`, so every result would be reported stale; make `max_staleness` greater, e.g. twice `refresh` plus the timeout",
        ),
        _ => {}
    }
    if let (Some((_, at)), Some(_)) = (&cache, &refresh) {
        sink.push(
            Rule::RefreshPolicy,
            at.clone(),
            format!("probe `{name}` has both `cache` and `refresh`"),
            "a background probe is never run by a request, so there is nothing to cache; keep one of them",
        );
    }
    if tags.contains(Tag::Active) {
        for (key, value) in [("cache", &cache), ("refresh", &refresh)] {
            if let Some((_, at)) = value {
                sink.push(
                    Rule::LiveAnswer,
                    at.clone(),
                    format!("probe `{name}` is on the `active` tier with `{key}`"),
                    "`/health/active` answers \"route the writes here\"; an old answer would let a node that lost the role keep claiming it; remove the key",
                );
            }
        }
    }
}

/// R19 (BE-HLTH-006): a cached or background result is younger than the
/// orchestrator's detection time ([`crate::detection::detection_time`]),
/// strictly, as the seed allows one "only if its maximum age is below the
/// allowed detection time".
///
/// The maximum age is `cache` for a cached probe, and for a background one
/// [`crate::detection::background_max_age`] (its `max_staleness`, else
/// twice `refresh` plus `timeout`, the probe's deadline), reported at
/// `max_staleness` when written, else at `refresh`. The comparison is
/// [`crate::facts::policy_fits_detection`], the one the generated code
/// runs for a custom probe's attribute.
pub fn check_max_age<L>(
    name: &str,
    timeout: Duration,
    cache: Option<(Duration, L)>,
    refresh: Option<(Duration, L)>,
    max_staleness: Option<(Duration, L)>,
    detection: Duration,
    sink: &mut Violations<L>,
) {
    let staleness = max_staleness.as_ref().map(|(d, _)| *d);
    if let Some((c, at)) = cache
        && !crate::facts::policy_fits_detection(Some(c), None, None, timeout, detection)
    {
        sink.push(
            Rule::MaxAgeFitsDetection,
            at,
            format!(
                "probe `{name}` caches its result for {} ms, not below the orchestrator's detection time of {} ms",
                c.as_millis(),
                detection.as_millis()
            ),
            crate::facts::DETECTION_HELP,
        );
    }
    if let Some((r, refresh_at)) = refresh
        && !crate::facts::policy_fits_detection(None, Some(r), staleness, timeout, detection)
    {
        let age = crate::detection::background_max_age(r, staleness, timeout);
        let (how, at) = match max_staleness {
            Some((_, at)) => ("its `max_staleness`", at),
            None => ("the default: twice `refresh` plus the timeout", refresh_at),
        };
        sink.push(
            Rule::MaxAgeFitsDetection,
            at,
            format!(
                "probe `{name}` may serve a background result {} ms old ({how}), not below the orchestrator's detection time of {} ms",
                age.as_millis(),
                detection.as_millis()
            ),
            crate::facts::DETECTION_HELP,
        );
    }
}

/// R20 (BE-HLTH-006): a probe's failure threshold holds a
/// failure back ([`crate::detection::hold_back`], counted in
/// [`crate::detection::run_period`]: `refresh`, else the readiness
/// period) no longer than the orchestrator's detection time, so the
/// outage is seen within what R19 allows a cached answer: the detection
/// time on top of the orchestrator's own. A threshold of zero runs means
/// nothing and is refused too. Reported at the threshold's own key
/// (`failures` at `failure_threshold`, else `failing_for`). The
/// comparison is [`crate::detection::threshold_fits_detection`], the one
/// the generated code runs for a custom probe's attribute.
pub fn check_threshold<L: Clone>(
    name: &str,
    failures: Option<(u32, L)>,
    failing_for: Option<(Duration, L)>,
    successes: Option<(u32, L)>,
    refresh: Option<Duration>,
    detection: Option<Duration>,
    sink: &mut Violations<L>,
) {
    for (key, value) in [
        ("failure_threshold", &failures),
        ("success_threshold", &successes),
    ] {
        if let Some((0, at)) = value {
            sink.push(
                Rule::ThresholdFitsDetection,
                at.clone(),
                format!("probe `{name}` has `{key}: 0`"),
                THRESHOLD_ZERO_HELP,
            );
        }
    }
    let Some(detection) = detection else {
        return;
    };
    let threshold = crate::detection::Threshold {
        failures: failures.as_ref().map(|(n, _)| *n),
        failing_for: failing_for.as_ref().map(|(d, _)| *d),
        successes: None,
    };
    if crate::facts::threshold_fits(threshold, refresh, detection) {
        return;
    }
    let period = crate::detection::run_period(refresh, detection);
    let at = match (&failures, &failing_for) {
        (Some((_, at)), _) | (None, Some((_, at))) => at.clone(),
        (None, None) => return,
    };
    sink.push(
        Rule::ThresholdFitsDetection,
        at,
        format!(
            "probe `{name}`'s failure threshold can hold a failure back for {} ms (runs {} ms apart), longer than the orchestrator's detection time of {} ms",
            crate::detection::hold_back(threshold, period).as_millis(),
            period.as_millis(),
            detection.as_millis()
        ),
        THRESHOLD_HELP,
    );
}

/// Help for R20, a threshold that hides an outage too long.
pub const THRESHOLD_HELP: &str = "while the threshold holds a failure back the entry says Healthy, and the orchestrator only starts its own detection after it; lower `failure_threshold` or `failing_for`, run the probe more often with `refresh`, or lengthen `lifecycle.drain_delay`";

/// Help for R20, a threshold of zero runs.
pub const THRESHOLD_ZERO_HELP: &str = "a threshold counts runs in a row and starts at 1 (the same as no threshold); remove the key or give it 1 or more";

/// One probe's `depends_on`, as [`check_dependencies`] reads it.
#[derive(Debug, Clone)]
pub struct Dependent<'a, L> {
    /// The probe's name, which others' `depends_on` can name; `None` for
    /// one whose name is not known here (a manifest's `kind: custom`
    /// entry without `name:`, named by its attribute): its own list is
    /// still checked, but nothing can depend on it.
    pub name: Option<&'a str>,
    /// How messages call the probe: its name, or its type.
    pub label: &'a str,
    /// The names it depends on, each where it is written.
    pub depends_on: Vec<(&'a str, L)>,
}

/// R21 and R22: every name in a `depends_on` is another
/// probe of the same registry, in any tier (R21, at the name, with a
/// "did you mean"), and the dependencies form no cycle (R22: a probe
/// that depends on itself, at the name, or a longer cycle, at the name
/// that closes it, with the cycle's path `a -> b -> a`). A cycle is
/// reported once, found by a depth-first walk in the probes' order.
pub fn check_dependencies<L: Clone>(probes: &[Dependent<'_, L>], sink: &mut Violations<L>) {
    let names: Vec<&str> = probes.iter().filter_map(|p| p.name).collect();
    let index = |name: &str| probes.iter().position(|p| p.name == Some(name));
    for p in probes {
        for (dep, at) in &p.depends_on {
            if p.name == Some(*dep) {
                sink.push(
                    Rule::DependencyCycle,
                    at.clone(),
                    format!("probe `{}` depends on itself", p.label),
                    DEPENDENCY_CYCLE_HELP,
                );
            } else if index(dep).is_none() {
                let others: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| Some(*n) != p.name)
                    .collect();
                let known = if others.is_empty() {
                    "there is no other probe".to_owned()
                } else {
                    format!("the other probes are {}", crate::one_of(&others))
                };
                sink.push(
                    Rule::UnknownDependency,
                    at.clone(),
                    format!("probe `{}` depends on `{dep}`, which is not a probe here", p.label),
                    format!(
                        "`depends_on` names other probes by their `name`, registered before or with this one (a `kind: custom` entry of a manifest once it has a `name:`); {known}{}",
                        hint(did_you_mean(dep, others.iter().copied()))
                    ),
                );
            }
        }
    }
    // Depth-first, three colours: a name met again while still on the
    // walk closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut marks = vec![Mark::New; probes.len()];
    for start in 0..probes.len() {
        if marks[start] != Mark::New {
            continue;
        }
        // The walk: each probe on it and the next of its dependencies.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        marks[start] = Mark::OnPath;
        while let Some(&mut (at, ref mut next)) = path.last_mut() {
            let Some((dep, loc)) = probes[at].depends_on.get(*next) else {
                marks[at] = Mark::Done;
                path.pop();
                continue;
            };
            *next += 1;
            let Some(to) = index(dep).filter(|&to| to != at) else {
                continue;
            };
            match marks[to] {
                Mark::New => {
                    marks[to] = Mark::OnPath;
                    path.push((to, 0));
                }
                Mark::OnPath => {
                    let from = path.iter().position(|(i, _)| *i == to).unwrap_or(0);
                    let cycle: Vec<&str> = path[from..]
                        .iter()
                        .map(|(i, _)| probes[*i].label)
                        .chain([probes[to].label])
                        .collect();
                    sink.push(
                        Rule::DependencyCycle,
                        loc.clone(),
                        format!(
                            "the dependencies of probe `{}` form a cycle: {}",
                            probes[at].label,
                            cycle.join(" -> ")
                        ),
                        DEPENDENCY_CYCLE_HELP,
                    );
                }
                Mark::Done => {}
            }
        }
    }
}

/// Help for R22, a dependency cycle.
pub const DEPENDENCY_CYCLE_HELP: &str = "a dependency is evaluated before its dependent, so a cycle has no first probe; remove one `depends_on` entry of the cycle (a probe never needs to depend on itself)";

/// R3: probe names are unique in one registry (AT-1): the name is the key of
/// the JSON entry, so a second probe with it would hide the first.
pub fn check_unique_names<'a, L: 'a + Clone>(
    names: impl IntoIterator<Item = (&'a str, L)>,
    sink: &mut Violations<L>,
) {
    check_unique_names_of(NameOf::Probe, names, sink);
}

/// R3 for any list of names the spec checks ([`NameOf`]): watchdogs key
/// the entries of `live`, startup gates the fields of their handles.
pub fn check_unique_names_of<'a, L: 'a + Clone>(
    of: NameOf,
    names: impl IntoIterator<Item = (&'a str, L)>,
    sink: &mut Violations<L>,
) {
    let noun = of.noun();
    let mut seen: Vec<&str> = Vec::new();
    for (name, loc) in names {
        if seen.iter().any(|s| crate::facts::same_name(s, name)) {
            sink.push(
                Rule::DuplicateName,
                loc,
                format!("{noun} name `{name}` is used twice"),
                match of {
                    NameOf::Probe | NameOf::Service => crate::facts::DUPLICATE_NAME_HELP.to_owned(),
                    _ => format!("each {noun} needs a name of its own; rename one of them"),
                },
            );
        } else {
            seen.push(name);
        }
    }
}

/// R5: a watchdog's deadline is at least 1 ms (BE-HLTH-002): the longest
/// one iteration of the watched loop may take.
pub fn check_watchdog_deadline<L>(
    name: &str,
    deadline: Duration,
    location: L,
    sink: &mut Violations<L>,
) {
    if deadline.as_millis() == 0 {
        sink.push(
            Rule::Duration,
            location,
            format!("watchdog `{name}` has a deadline under 1 ms"),
            "give the loop the longest time one iteration may take, e.g. `30s`",
        );
    }
}

/// R18: the shutdown drain fits the orchestrator's termination grace period
/// (BE-HLTH-005). After SIGTERM the orchestrator kills the process when
/// the grace period ends, so the drain delay plus the graceful stop of
/// in-flight requests must end first:
///
/// * with a stated `shutdown_timeout`: `drain_delay` + the timeout (in whole
///   seconds, rounded up, as actix applies it) ≤ the grace period;
/// * without: the graceful stop gets what remains of the grace period
///   ([`crate::drain::graceful_stop`]), which must be at least 1 s, so a
///   drain delay as long as the grace period is refused.
///
/// Each value comes with where it was written; `drain_delay` is `None` when
/// the default ([`crate::drain::DEFAULT_DRAIN_DELAY`]) applies, and a
/// violation about it is then reported at the grace period. Nothing is
/// checked without a grace period; a zero one is R5.
pub fn check_drain<L: Clone>(
    drain_delay: Option<(Duration, L)>,
    shutdown_timeout: Option<(Duration, L)>,
    grace_period: Option<(Duration, L)>,
    sink: &mut Violations<L>,
) {
    let Some((grace, grace_at)) = grace_period else {
        return;
    };
    if grace.is_zero() {
        sink.push(
            Rule::Duration,
            grace_at,
            "the termination grace period is zero",
            "state the orchestrator's grace period, Kubernetes' `terminationGracePeriodSeconds` (default `30s`)",
        );
        return;
    }
    let (delay, delay_at) =
        drain_delay.unwrap_or((crate::drain::DEFAULT_DRAIN_DELAY, grace_at.clone()));
    let ms = |d: Duration| d.as_millis();
    match shutdown_timeout {
        Some((stop, stop_at)) => {
            let stop_secs = crate::drain::whole_seconds(stop);
            if delay.saturating_add(stop_secs) > grace {
                sink.push(
                    Rule::DrainFitsGrace,
                    stop_at,
                    format!(
                        "the drain delay ({} ms) and the shutdown timeout ({} s) add up to more than the termination grace period ({} ms)",
                        ms(delay),
                        stop_secs.as_secs(),
                        ms(grace)
                    ),
                    "the orchestrator kills the process when the grace period ends, cutting in-flight requests; shorten one of them, or leave `shutdown_timeout` out to give the graceful stop what remains of the grace period",
                );
            }
        }
        None => {
            if crate::drain::graceful_stop(delay, None, Some(grace)).is_zero() {
                sink.push(
                    Rule::DrainFitsGrace,
                    delay_at,
                    format!(
                        "the drain delay ({} ms) leaves less than 1 s of the termination grace period ({} ms) for in-flight requests",
                        ms(delay),
                        ms(grace)
                    ),
                    "the orchestrator kills the process when the grace period ends; make the drain delay shorter than the grace period by at least the time your slowest request needs",
                );
            }
        }
    }
}

/// R6: each endpoint path (the tiers', and the startup path) is non-empty,
/// absolute, and distinct from the others (ZB-5).
pub fn check_paths<L: Clone>(paths: &[(crate::Endpoint, &str, L)], sink: &mut Violations<L>) {
    for (i, (tag, path, loc)) in paths.iter().enumerate() {
        if path.is_empty() {
            sink.push(
                Rule::EndpointPath,
                loc.clone(),
                format!("the `{tag}` endpoint path is empty"),
                format!(
                    "give it an absolute path such as `{}`",
                    crate::EndpointPaths::zb().endpoint(*tag)
                ),
            );
            continue;
        }
        if !path.starts_with('/') {
            sink.push(
                Rule::EndpointPath,
                loc.clone(),
                format!("the `{tag}` endpoint path `{path}` does not start with `/`"),
                format!("write `/{path}`"),
            );
        }
        if path.contains(|c: char| c.is_whitespace() || matches!(c, '{' | '}' | '?' | '#')) {
            sink.push(
                Rule::EndpointPath,
                loc.clone(),
                format!("the `{tag}` endpoint path `{path}` is not a plain path"),
                "use a literal path with no spaces, `{}` patterns, `?` or `#`",
            );
        }
        if let Some((other, _, _)) = paths[..i]
            .iter()
            .find(|(_, p, _)| normalize(p) == normalize(path))
        {
            sink.push(
                Rule::EndpointPath,
                loc.clone(),
                format!("the `{tag}` endpoint path `{path}` collides with the `{other}` endpoint"),
                "each tier needs its own path; an orchestrator could otherwise probe the wrong tier",
            );
        }
    }
}

/// Whether `path` is a plain absolute path, reporting under `rule` what
/// is wrong with it if not; `subject` names the path in the message
/// (``the path `/x` of health group `canary` ``).
fn is_plain_path<L>(
    rule: Rule,
    subject: &str,
    path: &str,
    at: L,
    sink: &mut Violations<L>,
) -> bool {
    let Some((problem, fix)) = path_problem(path) else {
        return true;
    };
    sink.push(rule, at, format!("{subject} {problem}"), fix);
    false
}

/// What is wrong with `path` as a literal HTTP path, if anything: the
/// problem and its fix, as R6 words them for a tier.
fn path_problem(path: &str) -> Option<(&'static str, String)> {
    if path.is_empty() {
        return Some((
            "is empty",
            "give it an absolute path such as `/health/canary`".into(),
        ));
    }
    if !path.starts_with('/') {
        return Some(("does not start with `/`", format!("write `/{path}`")));
    }
    if path.contains(|c: char| c.is_whitespace() || matches!(c, '{' | '}' | '?' | '#')) {
        return Some((
            "is not a plain path",
            "use a literal path with no spaces, `{}` patterns, `?` or `#`".into(),
        ));
    }
    None
}

/// The endpoint (a tier, or the startup path) served at `path`.
fn endpoint_at(endpoints: &crate::EndpointPaths, path: &str) -> Option<crate::Endpoint> {
    crate::Endpoint::ALL
        .into_iter()
        .find(|e| normalize(endpoints.endpoint(*e)) == normalize(path))
}

/// The tier whose per-probe paths (`<ready or active path>/<name>`, one
/// segment) `path` is one of.
fn per_probe_tier(endpoints: &crate::EndpointPaths, path: &str) -> Option<Tag> {
    [Tag::Ready, Tag::Active].into_iter().find(|t| {
        let base = normalize(endpoints.get(*t)).trim_end_matches('/');
        normalize(path)
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
    })
}

/// R23: a health group selects something, and every probe it names is
/// registered. `known` are the probes there are (the manifest's, or the
/// registry's at build time); `probes` the names it lists, each where it
/// was written; `at` the group, for an empty selection.
pub fn check_group_probes<'a, L: Clone>(
    group: &str,
    probes: &[(&str, L)],
    tiers: usize,
    known: impl IntoIterator<Item = &'a str> + Clone,
    at: L,
    sink: &mut Violations<L>,
) {
    if probes.is_empty() && tiers == 0 {
        sink.push(
            Rule::GroupUnknownProbe,
            at,
            format!("health group `{group}` selects no probe"),
            "list its probes by name (`probes: [database, cache]`) or its tiers (`tiers: [ready]`); an empty group would always answer 200",
        );
        return;
    }
    for (probe, loc) in probes {
        if known.clone().into_iter().any(|k| k == *probe) {
            continue;
        }
        sink.push(
            Rule::GroupUnknownProbe,
            loc.clone(),
            format!("health group `{group}` names probe `{probe}`, which is not registered"),
            format!(
                "name a probe of this manifest or registry{}",
                hint(did_you_mean(probe, known.clone()))
            ),
        );
    }
}

/// R24: each health group's path is a plain absolute path, and distinct
/// from every endpoint's (the tiers', the startup path), from every other
/// group's, and from every per-probe path (`<ready or active path>/<name>`,
/// which it would hide). `groups` are `(name, path, location)`.
pub fn check_group_paths<L: Clone>(
    endpoints: &crate::EndpointPaths,
    groups: &[(&str, &str, L)],
    sink: &mut Violations<L>,
) {
    for (i, (name, path, loc)) in groups.iter().enumerate() {
        let subject = format!("the path `{path}` of health group `{name}`");
        if !is_plain_path(Rule::GroupPath, &subject, path, loc.clone(), sink) {
            continue;
        }
        let collides = endpoint_at(endpoints, path);
        let earlier = groups[..i]
            .iter()
            .find(|(_, p, _)| normalize(p) == normalize(path));
        let under = per_probe_tier(endpoints, path);
        let (with, fix) = match (collides, earlier, under) {
            (Some(e), _, _) => (
                format!("the `{e}` endpoint"),
                "give the group a path of its own, e.g. `/health/<group name>`",
            ),
            (None, Some((other, _, _)), _) => (
                format!("health group `{other}`"),
                "give each group a path of its own",
            ),
            (None, None, Some(t)) => (
                format!(
                    "the per-probe paths of the `{t}` tier (`{}/{{probe}}`)",
                    endpoints.get(t).trim_end_matches('/')
                ),
                "a group there would hide the probe of that name; put it beside the tiers, e.g. `/health/<group name>`",
            ),
            (None, None, None) => continue,
        };
        sink.push(
            Rule::GroupPath,
            loc.clone(),
            format!("{subject} collides with {with}"),
            fix,
        );
    }
}

/// R25: a health group selects `ready` or `active`, never `live`: `live`
/// carries no probes (ZB-1.3), so a group on it would always answer 200.
/// `tiers` are the tiers it lists, each where it was written.
pub fn check_group_tiers<L: Clone>(group: &str, tiers: &[(Tag, L)], sink: &mut Violations<L>) {
    for (_, loc) in tiers.iter().filter(|(tier, _)| *tier == Tag::Live) {
        sink.push(
            Rule::GroupOnLive,
            loc.clone(),
            format!("health group `{group}` selects the `live` tier"),
            "`live` runs no probes, so the group would always answer 200; select `ready` or `active`, or name the probes",
        );
    }
}

/// R26: the history (`history` in a manifest) is served on the
/// management port, and on the application port only when asked for; with
/// neither there is nowhere to serve it. `at` is the `history` key.
pub fn check_history_port<L: Clone>(
    management_port: bool,
    application_port: bool,
    at: L,
    sink: &mut Violations<L>,
) {
    if !management_port && !application_port {
        sink.push(
            Rule::HistoryNeedsAPort,
            at,
            "`history` is served on the management port, and this manifest has no `management.port`",
            "add `management: { port: 8081 }`, or write `history: { application_port: true }` to serve it beside the tiers",
        );
    }
}

/// R6 for the history's paths: `paths` are `(what, path,
/// location)`, `what` naming the endpoint (`history`, `ui`). Each is a
/// plain absolute path, distinct from the other, from every tier's and
/// the startup path, from every health group's (`groups`), and from every
/// per-probe path, which it would hide.
pub fn check_history_paths<L: Clone>(
    endpoints: &crate::EndpointPaths,
    groups: &[&str],
    paths: &[(&str, &str, L)],
    sink: &mut Violations<L>,
) {
    for (i, (what, path, loc)) in paths.iter().enumerate() {
        let p = normalize(path);
        let subject = format!("the `{what}` endpoint path `{path}`");
        if !is_plain_path(Rule::EndpointPath, &subject, path, loc.clone(), sink) {
            continue;
        }
        let endpoint = endpoint_at(endpoints, path).map(|e| format!("the `{e}` endpoint"));
        let group = groups
            .iter()
            .find(|g| normalize(g) == p)
            .map(|g| format!("the health group at `{g}`"));
        let earlier = paths[..i]
            .iter()
            .find(|(_, q, _)| normalize(q) == p)
            .map(|(w, _, _)| format!("the `{w}` endpoint"));
        let under = per_probe_tier(endpoints, path)
            .map(|t| format!("the per-probe paths of the `{t}` tier"));
        if let Some(with) = endpoint.or(group).or(earlier).or(under) {
            sink.push(
                Rule::EndpointPath,
                loc.clone(),
                format!("{subject} collides with {with}"),
                "give it a path of its own, e.g. `/health/history` and `/health/ui`",
            );
        }
    }
}

fn normalize(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    if t.is_empty() { "/" } else { t }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Endpoint;

    fn rules<L>(sink: Violations<L>) -> Vec<Rule> {
        sink.into_result()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.rule)
            .collect()
    }

    #[test]
    fn live_tag_is_refused_and_points_at_the_tag() {
        let mut s = Violations::new();
        check_probe_tags("db", &[(Tag::Ready, 1), (Tag::Live, 2)], 0, &mut s);
        let v = s.into_result().unwrap_err();
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].rule, v[0].location), (Rule::LiveTag, 2));
    }

    #[test]
    fn no_tags_is_its_own_rule() {
        let mut s = Violations::new();
        check_probe_tags("db", &[], (), &mut s);
        assert_eq!(rules(s), [Rule::NoTags]);
    }

    #[test]
    fn cluster_size_is_at_least_one_node() {
        let mut s = Violations::new();
        assert_eq!(check_cluster_size("n", 0, (), &mut s), None);
        assert_eq!(check_cluster_size("n", -3, (), &mut s), None);
        assert_eq!(check_cluster_size("n", 1 << 40, (), &mut s), None);
        assert_eq!(check_cluster_size("n", 3, (), &mut s), Some(3));
        assert_eq!(rules(s), [Rule::ClusterSize; 3]);
    }

    #[test]
    fn execution_policy_rules() {
        let ms = |n| Some(Duration::from_millis(n));
        let mut s = Violations::new();
        check_execution_policy("a", TagSet::READY, ms(0), None, None, (), &mut s);
        check_execution_policy("b", TagSet::READY, None, None, ms(5), (), &mut s);
        check_execution_policy("c", TagSet::READY, None, ms(5), ms(5), (), &mut s);
        check_execution_policy("d", TagSet::READY, ms(1), ms(5), None, (), &mut s);
        check_execution_policy("e", TagSet::ACTIVE, ms(1), None, None, (), &mut s);
        check_execution_policy("f", TagSet::ACTIVE, None, ms(1), None, (), &mut s);
        assert_eq!(
            rules(s),
            [
                Rule::Duration,
                Rule::RefreshPolicy,
                Rule::RefreshPolicy,
                Rule::RefreshPolicy,
                Rule::LiveAnswer,
                Rule::LiveAnswer,
            ]
        );
        let mut s = Violations::new();
        check_execution_policy("g", TagSet::READY, ms(1), None, None, (), &mut s);
        check_execution_policy("h", TagSet::READY, None, ms(5), ms(6), (), &mut s);
        check_execution_policy("i", TagSet::ACTIVE, None, None, None, (), &mut s);
        assert!(s.is_empty());
    }

    #[test]
    fn codes_are_stable_and_distinct() {
        let codes: Vec<&str> = Rule::ALL.iter().map(|r| r.code()).collect();
        let expected: Vec<String> = (1..=26).map(|i| format!("R{i}")).collect();
        assert_eq!(codes, expected);
        let mut names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Rule::ALL.len());
    }

    #[test]
    fn dependencies_name_other_probes_and_form_no_cycle() {
        let probe = |name: &'static str, deps: &[&'static str]| Dependent {
            name: Some(name),
            label: name,
            depends_on: deps.iter().map(|d| (*d, *d)).collect(),
        };
        let run = |probes: &[Dependent<'_, &'static str>]| {
            let mut sink = Violations::new();
            check_dependencies(probes, &mut sink);
            sink.into_result().err().unwrap_or_default()
        };
        // A diamond and a chain are fine; so is an unnamed dependent.
        let unnamed = Dependent {
            name: None,
            label: "crate::Cache",
            depends_on: vec![("a", "a")],
        };
        assert!(
            run(&[
                probe("a", &[]),
                probe("b", &["a"]),
                probe("c", &["a"]),
                probe("d", &["b", "c"]),
                unnamed,
            ])
            .is_empty()
        );
        let v = run(&[probe("a", &["b"]), probe("b", &["c"]), probe("c", &["b"])]);
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!((v[0].rule, v[0].location), (Rule::DependencyCycle, "b"));
        assert!(v[0].message.contains("b -> c -> b"), "{}", v[0].message);
        let v = run(&[probe("a", &["a", "x"])]);
        let rules: Vec<Rule> = v.iter().map(|v| v.rule).collect();
        assert_eq!(rules, [Rule::DependencyCycle, Rule::UnknownDependency]);
        assert!(v[1].help.contains("there is no other probe"), "{v:#?}");
    }

    #[test]
    fn spec_error_lists_every_violation() {
        let mut s = Violations::new();
        check_name("", (), &mut s);
        check_probe_tags("x", &[], (), &mut s);
        let err = SpecError::from(s.into_result().unwrap_err());
        assert_eq!(err.rules(), [Rule::ProbeName, Rule::NoTags]);
        assert_eq!(err.to_string().matches("error: ").count(), 2);
    }

    #[test]
    fn timeouts_zero_absurd_and_above_the_orchestrator() {
        let mut s = Violations::new();
        check_timeout("a", Duration::ZERO, None, (), &mut s);
        check_timeout("b", Duration::from_secs(3600), None, (), &mut s);
        check_timeout(
            "c",
            Duration::from_secs(1),
            Some(Duration::from_secs(1)),
            (),
            &mut s,
        );
        check_timeout(
            "d",
            Duration::from_millis(800),
            Some(Duration::from_secs(1)),
            (),
            &mut s,
        );
        assert_eq!(rules(s), [Rule::Duration; 3]);
    }

    #[test]
    fn duplicates_are_reported_at_the_second_occurrence() {
        let mut s = Violations::new();
        check_unique_names([("db", 1), ("cache", 2), ("db", 3)], &mut s);
        let v = s.into_result().unwrap_err();
        assert_eq!((v.len(), v[0].location), (1, 3));
    }

    #[test]
    fn paths_empty_relative_and_colliding() {
        fn tiers<'a>(
            ready: &'a str,
            active: &'a str,
            live: &'a str,
        ) -> [(Endpoint, &'a str, ()); 3] {
            [
                (Tag::Ready.into(), ready, ()),
                (Tag::Active.into(), active, ()),
                (Tag::Live.into(), live, ()),
            ]
        }
        let refused = |paths: &[(Endpoint, &str, ())]| {
            let mut s = Violations::new();
            check_paths(paths, &mut s);
            rules(s)
        };
        assert_eq!(
            refused(&tiers("/health", "health/", "")),
            [Rule::EndpointPath; 2]
        );
        assert_eq!(refused(&tiers("/a", "/a/", "/b")), [Rule::EndpointPath]);
        // The startup path is checked with the tiers: it cannot take one's.
        let started = (Endpoint::Started, "/health/ready/", ());
        assert_eq!(
            refused(&[(Tag::Ready.into(), "/health/ready", ()), started]),
            [Rule::EndpointPath]
        );
    }

    #[test]
    fn role_preference_needs_roles() {
        let mut s = Violations::new();
        assert!(!check_role_preference("a", None, 0, &mut s));
        assert!(!check_role_preference("a", Some((&[], 1)), 0, &mut s));
        assert!(!check_role_preference(
            "a",
            Some((&[("admin", 2), ("", 3), ("admin", 4)], 1)),
            0,
            &mut s
        ));
        assert!(check_role_preference(
            "a",
            Some((&[("admin", 2), ("driver", 3)], 1)),
            0,
            &mut s
        ));
        let locations: Vec<i32> = s
            .into_result()
            .unwrap_err()
            .iter()
            .map(|v| v.location)
            .collect();
        assert_eq!(locations, [0, 1, 3, 4]);
    }

    /// The rule and location of each violation, in order.
    fn located(s: Violations<i32>) -> Vec<(Rule, i32)> {
        s.into_result()
            .unwrap_err()
            .iter()
            .map(|v| (v.rule, v.location))
            .collect()
    }

    #[test]
    fn an_active_probe_is_never_optional() {
        let mut s = Violations::new();
        check_active_not_optional("a", TagSet::ACTIVE, FailureStatus::Degraded, 1, &mut s);
        check_active_not_optional("b", TagSet::READY, FailureStatus::Degraded, 2, &mut s);
        check_active_not_optional("c", TagSet::ACTIVE, FailureStatus::Unhealthy, 3, &mut s);
        let both = TagSet::READY.with(Tag::Active);
        check_active_not_optional("d", both, FailureStatus::Degraded, 4, &mut s);
        assert_eq!(located(s), [1, 4].map(|at| (Rule::ActiveNotOptional, at)));
    }

    #[test]
    fn an_authorized_level_must_show_more_than_the_public_one() {
        let mut s = Violations::new();
        check_authorized_disclosure(Tag::Ready, Disclosure::Names, Disclosure::Full, 1, &mut s);
        check_authorized_disclosure(Tag::Ready, Disclosure::Status, Disclosure::Names, 2, &mut s);
        check_authorized_disclosure(Tag::Ready, Disclosure::Full, Disclosure::Full, 3, &mut s);
        check_authorized_disclosure(Tag::Live, Disclosure::Names, Disclosure::Status, 4, &mut s);
        assert_eq!(located(s), [3, 4].map(|at| (Rule::Contradiction, at)));
    }

    #[test]
    fn one_authorized_level_applies_where_it_shows_more() {
        use Disclosure::{Full, Names, Status};
        let mut s = Violations::new();
        let levels = resolve_authorized([Names, Full, Status], Some((Full, 1)), [None; 3], &mut s);
        assert_eq!(levels, [Some(Full), None, Some(Full)]);
        let per_tier = [None, None, Some((Names, 2))];
        let levels = resolve_authorized([Names, Full, Status], Some((Full, 1)), per_tier, &mut s);
        assert_eq!(levels, [Some(Full), None, Some(Names)]);
        assert!(s.into_result().is_ok());
        let mut s = Violations::new();
        resolve_authorized([Full; 3], Some((Full, 3)), [None; 3], &mut s);
        resolve_authorized([Full; 3], None, [Some((Full, 4)), None, None], &mut s);
        assert_eq!(located(s), [3, 4].map(|at| (Rule::Contradiction, at)));
    }

    #[test]
    fn names_must_be_short_identifiers() {
        let mut s = Violations::new();
        check_name("", (), &mut s);
        check_name("has space", (), &mut s);
        check_name("akka-cluster", (), &mut s);
        check_name(STARTUP_ENTRY, (), &mut s);
        check_name(SHUTDOWN_ENTRY, (), &mut s);
        assert_eq!(rules(s), [Rule::ProbeName; 4]);
    }
}
