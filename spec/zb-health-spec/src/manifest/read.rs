//! The second pass: the located tree to a [`Manifest`], one function per
//! section and per kind, every problem pushed into one sink.
//!
//! Unknown keys are found by [`Reader::mapping`]: every mapping is read as a
//! list of `(key, value)` pairs and each key is looked up in the section's
//! known keys, so an unknown key is one R4 violation and never stops the read.
//! Wrong types are R8 at the value. Every spec rule is the shared function of
//! `crate::rules`; this file only finds the values and their locations.

use std::time::Duration;

use super::tree::{Node, Value, shown};
use super::{
    ActiveScope, KINDS, Located, Location, MajorityGuard, Manifest, MembershipPolicy, ProbeDecl,
    ProbeKind, effective_timeout,
};
use crate::{
    EndpointPaths, FailureStatus, HealthStatus, Rule, Tag, Violation, Violations,
    check_duration_text, check_name, check_paths, check_probe_tags, check_role_preference,
    check_timeout, check_unique_names, did_you_mean,
};

/// The top-level keys.
const TOP_KEYS: [&str; 5] = ["service", "endpoints", "orchestrator", "defaults", "probes"];
/// The keys of `endpoints`: the preset and one path per tier.
const ENDPOINT_KEYS: [&str; 4] = ["preset", "ready", "active", "live"];
/// The keys of `orchestrator`.
const ORCHESTRATOR_KEYS: [&str; 1] = ["timeout"];
/// The keys of `defaults`.
const DEFAULT_KEYS: [&str; 2] = ["timeout", "failure_status"];
/// The `endpoints.preset` spellings.
const PRESETS: [&str; 2] = ["zb", "be-hlth-009"];
/// The `failure_status` spellings ([`FailureStatus::parse`] decides).
const FAILURE_STATUSES: [&str; 2] = ["unhealthy", "degraded"];
/// The `no_active_role_status` spellings ([`HealthStatus::parse`] decides).
const HEALTH_STATUSES: [&str; 3] = ["healthy", "degraded", "unhealthy"];
/// The keys every probe may have.
const COMMON_PROBE_KEYS: [&str; 5] = ["name", "kind", "tags", "timeout", "failure_status"];
/// The kind-specific probe keys, each with the kinds that take it.
const KIND_OPTIONS: [(&str, &[KindId]); 7] = [
    ("policy", &[KindId::ClusterMembership]),
    (
        "expected_size",
        &[KindId::ClusterTransport, KindId::ActiveNode],
    ),
    (
        "require_majority",
        &[KindId::ClusterTransport, KindId::ActiveNode],
    ),
    ("scope", &[KindId::ActiveNode]),
    ("roles", &[KindId::ActiveNode]),
    ("no_active_role_status", &[KindId::ActiveNode]),
    ("type", &[KindId::Custom]),
];

/// Every key a probe may have, common ones first.
fn probe_keys() -> Vec<&'static str> {
    COMMON_PROBE_KEYS
        .into_iter()
        .chain(KIND_OPTIONS.iter().map(|(k, _)| *k))
        .collect()
}

/// A kind before its options are read; indexes [`KINDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KindId {
    Database,
    ClusterMembership,
    ClusterTransport,
    ActiveNode,
    Grpc,
    Custom,
}

impl KindId {
    const ALL: [KindId; 6] = [
        KindId::Database,
        KindId::ClusterMembership,
        KindId::ClusterTransport,
        KindId::ActiveNode,
        KindId::Grpc,
        KindId::Custom,
    ];

    fn name(self) -> &'static str {
        KINDS[self as usize]
    }

    fn parse(s: &str) -> Option<KindId> {
        KindId::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// The two `scope` values of an active-node probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScopeName {
    Cluster,
    Role,
}

impl ScopeName {
    fn parse(s: &str) -> Option<ScopeName> {
        match ActiveScope::NAMES.iter().position(|n| *n == s)? {
            0 => Some(ScopeName::Cluster),
            _ => Some(ScopeName::Role),
        }
    }
}

/// One entry of a mapping whose key is a string.
#[derive(Clone, Copy)]
struct Field<'a> {
    key: &'a str,
    key_loc: Location,
    node: &'a Node,
}

/// A mapping's string-keyed entries, unknown keys included (already reported).
struct Fields<'a> {
    loc: Location,
    entries: Vec<Field<'a>>,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<Field<'a>> {
        self.entries.iter().find(|f| f.key == key).copied()
    }
}

/// A value as the file has it. Telling "not written" from "written but
/// invalid (already reported)" keeps one mistake from being reported twice.
#[derive(Clone, Copy)]
enum Written<T> {
    Absent,
    Invalid,
    Valid(Located<T>),
}

impl<T: Copy> Written<T> {
    fn read<'a>(
        field: Option<Field<'a>>,
        read: impl FnOnce(Field<'a>) -> Option<Located<T>>,
    ) -> Self {
        match field {
            None => Written::Absent,
            Some(f) => read(f).map_or(Written::Invalid, Written::Valid),
        }
    }

    fn valid(self) -> Option<Located<T>> {
        match self {
            Written::Valid(v) => Some(v),
            Written::Absent | Written::Invalid => None,
        }
    }
}

/// What the probes inherit from the top-level sections.
struct Settings {
    /// `orchestrator.timeout`, when valid and non-zero.
    orchestrator: Option<Duration>,
    /// `defaults.timeout`, when valid.
    default_timeout: Option<Located<Duration>>,
    /// `defaults.timeout` is present but malformed or zero: already reported
    /// there, so probes inheriting it are not checked again.
    default_timeout_reported: bool,
}

/// Reads `root` into a manifest, or returns every violation.
pub(super) fn manifest(root: &Node) -> Result<Manifest, Vec<Violation<Location>>> {
    let mut reader = Reader::default();
    let built = reader.root(root);
    match (reader.sink.into_result(), built) {
        (Err(mut found), _) => {
            // Sections are read in a fixed order; the user reads the file top
            // to bottom. A stable sort keeps same-position reports in order.
            found.sort_by_key(|v| (v.location.line, v.location.column));
            Err(found)
        }
        (Ok(()), Some(manifest)) => Ok(manifest),
        // Every `None` above is preceded by a violation; this arm only keeps
        // the function total.
        (Ok(()), None) => Err(vec![Violation {
            rule: Rule::ManifestFile,
            location: root.loc,
            message: "the manifest could not be read".into(),
            help: "compare the file with the shape in spec/manifest.md".into(),
        }]),
    }
}

#[derive(Default)]
struct Reader {
    sink: Violations<Location>,
}

impl Reader {
    // ---- sections -------------------------------------------------------

    fn root(&mut self, root: &Node) -> Option<Manifest> {
        if matches!(root.value, Value::Null) {
            self.sink.push(
                Rule::ManifestFile,
                root.loc,
                "the manifest is empty",
                "a manifest needs at least `service: <name>`; see spec/manifest.md",
            );
            return None;
        }
        let top = self.mapping("the manifest", root, &TOP_KEYS)?;
        let service = self.service(&top);
        let paths = self.endpoints(&top);
        let orchestrator_timeout = self.orchestrator(&top);
        let (default_timeout, default_failure_status) = self.defaults(&top);
        let settings = Settings {
            orchestrator: orchestrator_timeout
                .valid()
                .map(|t| t.value)
                .filter(|t| !t.is_zero()),
            default_timeout: default_timeout.valid(),
            default_timeout_reported: match default_timeout {
                Written::Absent => false,
                Written::Invalid => true,
                Written::Valid(t) => t.value.is_zero(),
            },
        };
        let probes = self.probes(&top, &settings);
        Some(Manifest {
            service: service?,
            paths,
            orchestrator_timeout: orchestrator_timeout.valid(),
            default_timeout: default_timeout.valid(),
            default_failure_status,
            probes: probes?,
        })
    }

    /// `service`: required, and a short identifier (R9).
    fn service(&mut self, top: &Fields) -> Option<Located<String>> {
        let Some(f) = top.get("service") else {
            self.sink.push(
                Rule::Unknown,
                top.loc,
                "the manifest has no `service`",
                "add `service: <name>`, the service's short identifier, e.g. `service: scadabridge`",
            );
            return None;
        };
        let service = self.string("`service`", f.node)?;
        check_name(&service.value, service.location, &mut self.sink);
        Some(service)
    }

    /// `endpoints`: the preset, then per-tier overrides; R6 on the result,
    /// each path located where it was set.
    fn endpoints(&mut self, top: &Fields) -> EndpointPaths {
        let mut paths = EndpointPaths::zb();
        let mut set_at = [top.loc; 3];
        if let Some(section) = self.section(top, "endpoints", &ENDPOINT_KEYS) {
            set_at = [section.loc; 3];
            let preset = section
                .get("preset")
                .and_then(|f| self.keyword("`endpoints.preset`", f.node, &PRESETS, preset_paths));
            if let Some(preset) = preset {
                paths = preset.value;
                set_at = [preset.location; 3];
            }
            for (tag, at) in Tag::ALL.into_iter().zip(&mut set_at) {
                let what = format!("`endpoints.{tag}`");
                if let Some(path) = section
                    .get(tag.as_str())
                    .and_then(|f| self.string(&what, f.node))
                {
                    *paths.get_mut(tag) = path.value;
                    *at = path.location;
                }
            }
        }
        let resolved: Vec<(Tag, &str, Location)> = Tag::ALL
            .into_iter()
            .zip(set_at)
            .map(|(tag, at)| (tag, paths.get(tag), at))
            .collect();
        check_paths(&resolved, &mut self.sink);
        paths
    }

    /// `orchestrator`: the orchestrator's probe timeout.
    fn orchestrator(&mut self, top: &Fields) -> Written<Duration> {
        let section = self.section(top, "orchestrator", &ORCHESTRATOR_KEYS);
        let field = section.and_then(|s| s.get("timeout"));
        Written::read(field, |f| self.setting_timeout("`orchestrator.timeout`", f))
    }

    /// `defaults`: the timeout and failure status probes inherit.
    fn defaults(&mut self, top: &Fields) -> (Written<Duration>, Option<Located<FailureStatus>>) {
        let section = self.section(top, "defaults", &DEFAULT_KEYS);
        let field = |key| section.as_ref().and_then(|s| s.get(key));
        let timeout = Written::read(field("timeout"), |f| {
            self.setting_timeout("`defaults.timeout`", f)
        });
        let failure_status = field("failure_status").and_then(|f| {
            self.keyword(
                "`defaults.failure_status`",
                f.node,
                &FAILURE_STATUSES,
                FailureStatus::parse,
            )
        });
        (timeout, failure_status)
    }

    /// `orchestrator.timeout` or `defaults.timeout`: a duration, not zero
    /// (R5; a zero one is still returned, so it is reported only here).
    fn setting_timeout(&mut self, what: &str, f: Field) -> Option<Located<Duration>> {
        let timeout = self.duration(what, f.node)?;
        if timeout.value.is_zero() {
            self.sink.push(
                Rule::Duration,
                timeout.location,
                format!("{what} is zero"),
                "give it a positive duration such as `1s`; a zero deadline can never be met",
            );
        }
        Some(timeout)
    }

    /// `probes`: a list (missing or empty means no probes), then R3 over the
    /// declared names.
    fn probes(&mut self, top: &Fields, settings: &Settings) -> Option<Vec<ProbeDecl>> {
        let items = match top.get("probes").map(|f| &f.node.value) {
            None | Some(Value::Null) => return Some(Vec::new()),
            Some(Value::Seq(items)) => items,
            Some(_) => {
                let node = top.get("probes")?.node;
                self.wrong_type(
                    "`probes`",
                    "a list of probes",
                    node,
                    "write one `- { name: …, kind: … }` item per probe",
                );
                return None;
            }
        };
        let mut names = Vec::new();
        let mut decls = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let (name, decl) = self.probe(index, item, settings);
            names.extend(name);
            decls.push(decl);
        }
        check_unique_names(
            names.iter().map(|n| (n.value.as_str(), n.location)),
            &mut self.sink,
        );
        decls.into_iter().collect()
    }

    // ---- one probe ------------------------------------------------------

    /// One probe: its declared name (for R3, even when the rest is invalid)
    /// and the declaration, if it could be built.
    fn probe(
        &mut self,
        index: usize,
        node: &Node,
        settings: &Settings,
    ) -> (Option<Located<String>>, Option<ProbeDecl>) {
        let name = subject_name(node, index);
        let label = format!("probe `{}`", shown(&name));
        let Some(fields) = self.mapping(&label, node, &probe_keys()) else {
            return (None, None);
        };
        let declared = fields
            .get("name")
            .and_then(|f| self.string(&format!("`name` of {label}"), f.node));
        if let Some(n) = &declared {
            check_name(&n.value, n.location, &mut self.sink);
        }
        let kind_id = self.kind_id(&label, &fields);
        if let Some(id) = &kind_id {
            self.kind_options(&label, id, &fields);
            if id.value != KindId::Custom && fields.get("name").is_none() {
                self.sink.push(
                    Rule::Unknown,
                    node.loc,
                    format!("{label} of kind `{}` has no `name`", id.value.name()),
                    "add `name: <short-id>`; only `custom` probes may take their name from the `#[zb_health]` attribute",
                );
            }
        }
        let kind = kind_id.and_then(|id| self.kind(&name, &label, id.value, &fields, node.loc));
        let tags = fields
            .get("tags")
            .and_then(|f| self.tags(&name, &label, f.node));
        let custom = kind_id
            .as_ref()
            .is_some_and(|id| id.value == KindId::Custom);
        let timeout = self.probe_timeout(&name, &label, &fields, node.loc, settings, custom);
        let failure_status = fields.get("failure_status").and_then(|f| {
            self.keyword(
                &format!("`failure_status` of {label}"),
                f.node,
                &FAILURE_STATUSES,
                FailureStatus::parse,
            )
        });
        let decl = kind.map(|kind| ProbeDecl {
            location: node.loc,
            name: declared.clone(),
            kind,
            tags,
            timeout,
            failure_status,
        });
        (declared, decl)
    }

    /// `kind`: required, one of [`KINDS`].
    fn kind_id(&mut self, label: &str, fields: &Fields) -> Option<Located<KindId>> {
        let Some(f) = fields.get("kind") else {
            self.sink.push(
                Rule::Unknown,
                fields.loc,
                format!("{label} has no `kind`"),
                format!("add `kind:` with one of {}", one_of(&KINDS)),
            );
            return None;
        };
        self.keyword(&format!("`kind` of {label}"), f.node, &KINDS, KindId::parse)
    }

    /// R4 for each kind-specific key on a kind that does not take it.
    fn kind_options(&mut self, label: &str, kind: &Located<KindId>, fields: &Fields) {
        for field in &fields.entries {
            let Some((key, kinds)) = KIND_OPTIONS.iter().find(|(k, _)| *k == field.key) else {
                continue;
            };
            if !kinds.contains(&kind.value) {
                let takers: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                self.sink.push(
                    Rule::Unknown,
                    field.key_loc,
                    format!(
                        "`{key}` does not apply to {label}, a `{}` probe",
                        kind.value.name()
                    ),
                    format!(
                        "`{key}` is an option of {} probes only; remove it, or change `kind`",
                        all_of(&takers)
                    ),
                );
            }
        }
    }

    /// The kind with its options; every option key of another kind was
    /// reported by [`Reader::kind_options`] and is not read.
    fn kind(
        &mut self,
        name: &str,
        label: &str,
        id: KindId,
        fields: &Fields,
        at: Location,
    ) -> Option<ProbeKind> {
        match id {
            KindId::Database => Some(ProbeKind::Database),
            KindId::ClusterMembership => {
                let policy = fields.get("policy").and_then(|f| {
                    self.keyword(
                        &format!("`policy` of {label}"),
                        f.node,
                        &MembershipPolicy::NAMES,
                        MembershipPolicy::parse,
                    )
                });
                Some(ProbeKind::ClusterMembership {
                    policy: policy.map_or_else(MembershipPolicy::default, |p| p.value),
                })
            }
            KindId::ClusterTransport => Some(ProbeKind::ClusterTransport {
                guard: self.guard(label, fields),
            }),
            KindId::ActiveNode => self.active_node(name, label, fields),
            KindId::Grpc => Some(ProbeKind::Grpc),
            KindId::Custom => self
                .custom_type(label, fields, at)
                .map(|type_path| ProbeKind::Custom { type_path }),
        }
    }

    /// `expected_size` (≥ 1, R5) and `require_majority`, which needs it (R4).
    fn guard(&mut self, label: &str, fields: &Fields) -> Option<MajorityGuard> {
        let size = fields
            .get("expected_size")
            .and_then(|f| self.expected_size(label, f.node));
        let majority = fields
            .get("require_majority")
            .and_then(|f| self.boolean(&format!("`require_majority` of {label}"), f.node));
        if let (None, Some(f)) = (fields.get("expected_size"), fields.get("require_majority")) {
            self.sink.push(
                Rule::Unknown,
                f.key_loc,
                format!(
                    "`require_majority` of {label} has no `expected_size` to count a majority of"
                ),
                "add `expected_size: <nodes in the cluster>`, or remove `require_majority`",
            );
        }
        size.map(|expected_size| MajorityGuard {
            expected_size,
            require_majority: majority.is_some_and(|m| m.value),
        })
    }

    /// `scope`, `roles`, `no_active_role_status` of an active-node probe:
    /// R2 for `scope: role` without roles (ZB-2.3d), R7 for role options on
    /// a cluster-wide scope.
    fn active_node(&mut self, name: &str, label: &str, fields: &Fields) -> Option<ProbeKind> {
        let scope = fields.get("scope").and_then(|f| {
            self.keyword(
                &format!("`scope` of {label}"),
                f.node,
                &ActiveScope::NAMES,
                ScopeName::parse,
            )
        });
        let roles_field = fields.get("roles");
        let roles = roles_field.and_then(|f| self.roles(label, f.node));
        let status_field = fields.get("no_active_role_status");
        let status = status_field.and_then(|f| {
            self.keyword(
                &format!("`no_active_role_status` of {label}"),
                f.node,
                &HEALTH_STATUSES,
                HealthStatus::parse,
            )
        });
        let guard = self.guard(label, fields);
        let scope = match scope {
            Some(s) if s.value == ScopeName::Role => {
                self.role_scope(name, s.location, roles_field, roles)
            }
            // An invalid `scope` was reported; do not guess what it meant.
            None if fields.get("scope").is_some() => None,
            _ => {
                for f in [roles_field, status_field].into_iter().flatten() {
                    self.sink.push(
                        Rule::Contradiction,
                        f.key_loc,
                        format!(
                            "{label} sets `{}` but its scope is the whole cluster",
                            f.key
                        ),
                        format!(
                            "add `scope: role` to choose the active node per role, or remove `{}`",
                            f.key
                        ),
                    );
                }
                Some(ActiveScope::Cluster)
            }
        };
        Some(ProbeKind::ActiveNode {
            scope: scope?,
            no_active_role_status: status.map_or(HealthStatus::Unhealthy, |s| s.value),
            guard,
        })
    }

    /// R2 (ZB-2.3d): `scope: role` needs a usable `roles` list; the rule
    /// itself is [`check_role_preference`].
    fn role_scope(
        &mut self,
        probe: &str,
        scope_at: Location,
        roles_field: Option<Field>,
        roles: Option<Vec<Located<String>>>,
    ) -> Option<ActiveScope> {
        match (roles_field, roles) {
            // A `roles` of the wrong type was reported as such.
            (Some(_), None) => None,
            (field, roles) => {
                let roles = roles.unwrap_or_default();
                let listed: Vec<(&str, Location)> = roles
                    .iter()
                    .map(|r| (r.value.as_str(), r.location))
                    .collect();
                let ok = check_role_preference(
                    probe,
                    field.map(|f| (listed.as_slice(), f.node.loc)),
                    scope_at,
                    &mut self.sink,
                );
                ok.then_some(ActiveScope::Roles(roles))
            }
        }
    }

    /// `roles`: a list of role names; [`check_role_preference`] judges it.
    fn roles(&mut self, label: &str, node: &Node) -> Option<Vec<Located<String>>> {
        let Value::Seq(items) = &node.value else {
            self.wrong_type(
                &format!("`roles` of {label}"),
                "a list of role names",
                node,
                "write a YAML list, e.g. `roles: [admin, driver]`",
            );
            return None;
        };
        let mut roles = Vec::new();
        for item in items {
            if let Some(role) = self.string(&format!("a role of {label}"), item) {
                roles.push(role);
            }
        }
        Some(roles)
    }

    /// `type` of a custom probe: required, and a Rust path (R4).
    fn custom_type(
        &mut self,
        label: &str,
        fields: &Fields,
        at: Location,
    ) -> Option<Located<String>> {
        let Some(f) = fields.get("type") else {
            self.sink.push(
                Rule::Unknown,
                at,
                format!("{label} has kind `custom` but no `type`"),
                "add `type: crate::path::to::YourProbe`, the struct that carries `#[zb_health]`",
            );
            return None;
        };
        let path = self.string(&format!("`type` of {label}"), f.node)?;
        if !is_rust_path(&path.value) {
            self.sink.push(
                Rule::Unknown,
                path.location,
                format!("`type` of {label} is `{}`, which is not a Rust path", shown(&path.value)),
                "write the path of the probe struct, e.g. `crate::probes::CacheProbe`: identifiers joined by `::`, optionally starting with `crate::`, `self::`, `super::` or `::`",
            );
            return None;
        }
        Some(path)
    }

    /// `tags`: each one known (R4), then R1 on the list. A list whose every
    /// tag is unknown is not also reported as empty.
    fn tags(&mut self, name: &str, label: &str, node: &Node) -> Option<Vec<Located<Tag>>> {
        let Value::Seq(items) = &node.value else {
            self.wrong_type(
                &format!("`tags` of {label}"),
                "a list of tags",
                node,
                "write a YAML list, e.g. `tags: [ready]`",
            );
            return None;
        };
        let mut tags = Vec::new();
        for item in items {
            let Some(text) = self.string(&format!("a tag of {label}"), item) else {
                continue;
            };
            match Tag::parse(&text.value) {
                Ok(tag) => tags.push(Located::new(tag, text.location)),
                Err(unknown) => self.sink.push(
                    Rule::Unknown,
                    text.location,
                    format!("unknown tag `{}` on {label}", shown(&unknown.given)),
                    format!(
                        "the tags are `ready` and `active`{}",
                        hint(unknown.suggestion)
                    ),
                ),
            }
        }
        if tags.is_empty() && !items.is_empty() {
            return None;
        }
        let located: Vec<(Tag, Location)> = tags.iter().map(|t| (t.value, t.location)).collect();
        check_probe_tags(name, &located, node.loc, &mut self.sink);
        Some(tags)
    }

    /// `timeout` of a probe, then R5 on the deadline it will really run with
    /// ([`effective_timeout`]), located where that deadline was written.
    /// A `custom` probe without its own `timeout` runs with its attribute's
    /// deadline, which only the generated code can see; it checks R5 there.
    fn probe_timeout(
        &mut self,
        name: &str,
        label: &str,
        fields: &Fields,
        at: Location,
        settings: &Settings,
        custom: bool,
    ) -> Option<Located<Duration>> {
        let own = Written::read(fields.get("timeout"), |f| {
            self.duration(&format!("`timeout` of {label}"), f.node)
        });
        let checked = match own {
            Written::Invalid => false,
            Written::Valid(_) => true,
            Written::Absent => !custom && !settings.default_timeout_reported,
        };
        if checked {
            let own = own.valid();
            let written_at = own.or(settings.default_timeout).map_or(at, |t| t.location);
            let deadline = effective_timeout(own.as_ref(), settings.default_timeout.as_ref());
            check_timeout(
                name,
                deadline,
                settings.orchestrator,
                written_at,
                &mut self.sink,
            );
        }
        own.valid()
    }

    // ---- typed values ---------------------------------------------------

    /// A mapping with string keys; R8 if it is something else, R4 for each
    /// key not in `known`.
    fn mapping<'a>(
        &mut self,
        what: &str,
        node: &'a Node,
        known: &[&'static str],
    ) -> Option<Fields<'a>> {
        let Value::Map(pairs) = &node.value else {
            self.wrong_type(
                what,
                "a mapping of `key: value` pairs",
                node,
                "see spec/manifest.md for the keys",
            );
            return None;
        };
        let mut entries = Vec::new();
        for (key, value) in pairs {
            let Value::Str(text) = &key.value else {
                self.wrong_type(
                    &format!("a key in {what}"),
                    "a name",
                    key,
                    format!("the keys are {}", one_of(known)),
                );
                continue;
            };
            if !known.contains(&text.as_str()) {
                self.sink.push(
                    Rule::Unknown,
                    key.loc,
                    format!("unknown key `{}` in {what}", shown(text)),
                    format!("the keys are {}{}", one_of(known), suggestion(text, known)),
                );
            }
            entries.push(Field {
                key: text,
                key_loc: key.loc,
                node: value,
            });
        }
        Some(Fields {
            loc: node.loc,
            entries,
        })
    }

    /// An optional section: absent or `null` is `None`; otherwise a mapping.
    fn section<'a>(
        &mut self,
        top: &Fields<'a>,
        key: &str,
        known: &[&'static str],
    ) -> Option<Fields<'a>> {
        let f = top.get(key)?;
        if matches!(f.node.value, Value::Null) {
            return None;
        }
        self.mapping(&format!("`{key}`"), f.node, known)
    }

    fn string(&mut self, what: &str, node: &Node) -> Option<Located<String>> {
        if let Value::Str(s) = &node.value {
            return Some(Located::new(s.clone(), node.loc));
        }
        self.wrong_type(
            what,
            "a string",
            node,
            "write it as text; quote it if YAML reads it as something else",
        );
        None
    }

    fn boolean(&mut self, what: &str, node: &Node) -> Option<Located<bool>> {
        if let Value::Bool(b) = node.value {
            return Some(Located::new(b, node.loc));
        }
        self.wrong_type(what, "`true` or `false`", node, "write `true` or `false`");
        None
    }

    /// `expected_size`: a whole number of nodes, at least 1 (R5).
    fn expected_size(&mut self, label: &str, node: &Node) -> Option<u32> {
        let what = format!("`expected_size` of {label}");
        match node.value {
            Value::Int(n) if n < 1 => {
                self.sink.push(
                    Rule::Duration,
                    node.loc,
                    format!("{what} is `{n}`, but a cluster has at least one node"),
                    "set it to the number of nodes the cluster is meant to have, e.g. `3`",
                );
                None
            }
            Value::Int(n) => {
                let count = u32::try_from(n).ok();
                if count.is_none() {
                    self.wrong_type(
                        &what,
                        "a node count that fits in 32 bits",
                        node,
                        "set it to the number of nodes, e.g. `3`",
                    );
                }
                count
            }
            _ => {
                self.wrong_type(
                    &what,
                    "a whole number of nodes",
                    node,
                    "set it to the number of nodes, e.g. `3`",
                );
                None
            }
        }
    }

    /// A duration (R5 via [`check_duration_text`]). A bare YAML number
    /// is read as its text, so `1000` gets the "no unit" message, not a type
    /// error.
    fn duration(&mut self, what: &str, node: &Node) -> Option<Located<Duration>> {
        let text = match &node.value {
            Value::Str(s) => s.clone(),
            Value::Int(n) => n.to_string(),
            Value::Float(x) => x.to_string(),
            _ => {
                self.wrong_type(
                    what,
                    "a duration such as `800ms`",
                    node,
                    "write an integer and a unit: `ms`, `s` or `m`",
                );
                return None;
            }
        };
        check_duration_text(&text, node.loc, &mut self.sink).map(|d| Located::new(d, node.loc))
    }

    /// One of a closed set of words; R4 with a "did you mean" otherwise.
    fn keyword<T>(
        &mut self,
        what: &str,
        node: &Node,
        names: &[&'static str],
        parse: impl Fn(&str) -> Option<T>,
    ) -> Option<Located<T>> {
        let text = self.string(what, node)?;
        if let Some(value) = parse(&text.value) {
            return Some(Located::new(value, text.location));
        }
        self.sink.push(
            Rule::Unknown,
            text.location,
            format!("unknown value `{}` for {what}", shown(&text.value)),
            format!("use {}{}", one_of(names), suggestion(&text.value, names)),
        );
        None
    }

    /// R8: the value has the wrong YAML type.
    fn wrong_type(&mut self, what: &str, expected: &str, node: &Node, help: impl Into<String>) {
        self.sink.push(
            Rule::ManifestFile,
            node.loc,
            format!("{what} must be {expected}, not {}", node.value.describe()),
            help,
        );
    }
}

/// The paths of an `endpoints.preset`.
fn preset_paths(name: &str) -> Option<EndpointPaths> {
    match PRESETS.iter().position(|p| *p == name)? {
        0 => Some(EndpointPaths::zb()),
        _ => Some(EndpointPaths::be_hlth_009()),
    }
}

/// The name a probe's messages use, read before validation: its `name`, else
/// its custom `type`, else its position (`#1` is the first).
fn subject_name(node: &Node, index: usize) -> String {
    let text_of = |key: &str| match &node.value {
        Value::Map(pairs) => pairs.iter().find_map(|(k, v)| match (&k.value, &v.value) {
            (Value::Str(k), Value::Str(v)) if k == key => Some(v.clone()),
            _ => None,
        }),
        _ => None,
    };
    text_of("name")
        .or_else(|| text_of("type"))
        .unwrap_or_else(|| format!("#{}", index + 1))
}

/// "`a`, `b` or `c`".
fn one_of(names: &[&str]) -> String {
    join(names, "or")
}

/// "`a`, `b` and `c`".
fn all_of(names: &[&str]) -> String {
    join(names, "and")
}

fn join(names: &[&str], last: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((only, [])) => only.clone(),
        Some((tail, head)) => format!("{} {last} {tail}", head.join(", ")),
    }
}

/// "; did you mean `x`?" for a near miss among `names`, else "".
fn suggestion(input: &str, names: &[&'static str]) -> String {
    hint(did_you_mean(input, names.iter().copied()))
}

fn hint(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!("; did you mean `{s}`?"))
}

/// Whether `path` is a Rust path to a type: identifiers joined by `::`,
/// optionally led by `::`, `crate::`, `self::` or `super::` (repeatable), and
/// no keyword elsewhere. Raw identifiers (`r#type`) are accepted.
fn is_rust_path(path: &str) -> bool {
    let (global, rest) = match path.strip_prefix("::") {
        Some(rest) => (true, rest),
        None => (false, path),
    };
    let segments: Vec<&str> = rest.split("::").collect();
    let mut lead = 0;
    if !global {
        if matches!(segments.first(), Some(&("crate" | "self" | "super"))) {
            lead = 1;
        }
        while lead > 0
            && matches!(segments[0], "self" | "super")
            && segments.get(lead) == Some(&"super")
        {
            lead += 1;
        }
    }
    let named = &segments[lead..];
    !named.is_empty() && named.iter().all(|s| is_identifier(s))
}

/// A non-keyword identifier, or a raw one.
fn is_identifier(segment: &str) -> bool {
    let (raw, word) = match segment.strip_prefix("r#") {
        Some(word) => (true, word),
        None => (false, segment),
    };
    let mut chars = word.chars();
    let well_formed = chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && word != "_";
    let keyword = if raw {
        matches!(word, "crate" | "self" | "super" | "Self")
    } else {
        RUST_KEYWORDS.contains(&word)
    };
    well_formed && !keyword
}

/// Rust's strict and reserved keywords (2024 edition), which cannot name a
/// path segment.
const RUST_KEYWORDS: [&str; 52] = [
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn rust_paths() {
        for ok in [
            "Cache",
            "crate::probes::CacheProbe",
            "::ext::Probe",
            "self::P",
            "super::super::P",
            "r#type::P",
            "_x",
        ] {
            assert!(is_rust_path(ok), "{ok}");
        }
        for bad in [
            "",
            "crate",
            "crate::",
            "a::::b",
            "a-b",
            "a::1b",
            "a b",
            "fn::P",
            "P<T>",
            "::crate::P",
            "a::super::P",
            "_",
            "crate::crate::P",
        ] {
            assert!(!is_rust_path(bad), "{bad}");
        }
    }

    #[test]
    fn word_lists_match_their_parsers() {
        assert!(
            FAILURE_STATUSES
                .iter()
                .all(|s| FailureStatus::parse(s).is_some())
        );
        assert!(
            HEALTH_STATUSES
                .iter()
                .all(|s| HealthStatus::parse(s).is_some())
        );
        assert!(PRESETS.iter().all(|s| preset_paths(s).is_some()));
        assert!(KindId::ALL.iter().zip(KINDS).all(|(k, n)| k.name() == n));
    }

    #[test]
    fn joins_read_as_prose() {
        assert_eq!(one_of(&["a"]), "`a`");
        assert_eq!(one_of(&["a", "b", "c"]), "`a`, `b` or `c`");
        assert_eq!(all_of(&["a", "b"]), "`a` and `b`");
    }
}
