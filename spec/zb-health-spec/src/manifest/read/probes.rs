//! One entry of `probes`: its common keys, its kind and the options only
//! that kind takes, then the rules over the probe as a whole.

use std::time::Duration;

use super::super::tree::{Node, Value, shown};
use super::values::subject_name;
use super::{Field, Fields, Reader, Settings, Written};
use crate::manifest::{ActiveScope, Located, Location, MajorityGuard, ProbeDecl, ProbeKind};
use crate::{
    FailureStatus, HealthStatus, MembershipPolicy, Rule, Tag,
    facts::attribute_timeout,
    rules::{check_role_preference, missing_key},
    settings::SettingsAt,
    suggest::{all_of, hint, one_of},
    upstream::{self, StatusRange},
    vocab::{Kind, PROBE_SETTING_KEYS, Scope},
};

/// The kind-specific probe keys, each with the kinds that take it.
const KIND_OPTIONS: [(&str, &[Kind]); 17] = [
    ("policy", &[Kind::ClusterMembership]),
    ("expected_size", &[Kind::ClusterTransport, Kind::ActiveNode]),
    (
        "require_majority",
        &[Kind::ClusterTransport, Kind::ActiveNode],
    ),
    ("scope", &[Kind::ActiveNode]),
    ("roles", &[Kind::ActiveNode]),
    ("no_active_role_status", &[Kind::ActiveNode]),
    ("type", &[Kind::Custom]),
    ("fn", &[Kind::Custom]),
    ("url", &[Kind::Http, Kind::Redis]),
    ("status", &[Kind::Http]),
    ("body_contains", &[Kind::Http]),
    ("path", &[Kind::Disk, Kind::Certificate]),
    ("degraded_below", &[Kind::Disk]),
    ("unhealthy_below", &[Kind::Disk]),
    ("warn_within", &[Kind::Certificate]),
    ("address", &[Kind::Certificate]),
    ("server_name", &[Kind::Certificate]),
];

/// The keys a probe of `kind` takes: `name`, `kind`, the other settings
/// it shares with the attribute ([`PROBE_SETTING_KEYS`]), then the kind's
/// options (every kind's when `None`: every key a probe may have). What
/// the help of an unknown key lists.
fn probe_keys_of(kind: Option<Kind>) -> Vec<&'static str> {
    let [name, settings @ ..] = PROBE_SETTING_KEYS;
    [name, "kind"]
        .into_iter()
        .chain(settings)
        // Manifest only: a dependency names another probe, which one
        // type's attribute cannot check (see `spec/conflicts.md`).
        .chain(["depends_on"])
        .chain(
            KIND_OPTIONS
                .iter()
                .filter(|(_, kinds)| kind.is_none_or(|k| kinds.contains(&k)))
                .map(|(k, _)| *k),
        )
        .collect()
}

/// `value` with its location where its rules are `checked`, for
/// [`SettingsAt::check`].
fn checked<T>(value: Option<Located<T>>, checked: bool) -> Option<(T, Location)> {
    value.filter(|_| checked).map(Located::pair)
}

/// The kind a probe's mapping names, read ahead of the rest (so the help
/// of an unknown key lists the keys of that kind); `None` when `kind` is
/// missing or no kind (reported where it is read).
fn declared_kind(node: &Node) -> Option<Kind> {
    node.get("kind")
        .and_then(Node::as_str)
        .and_then(Kind::parse)
}

impl Reader {
    /// One probe: its declared name (for R3, even when the rest is invalid)
    /// and the declaration, if it could be built.
    pub(super) fn probe(
        &mut self,
        index: usize,
        node: &Node,
        settings: &Settings,
    ) -> (Option<Located<String>>, Option<ProbeDecl>) {
        let name = subject_name(node, index);
        let label = format!("probe `{}`", shown(&name));
        let kind_ahead = declared_kind(node);
        let intro = match kind_ahead {
            Some(kind) => format!("the keys a `{kind}` probe takes are"),
            None => "the keys are".to_string(),
        };
        let listed = probe_keys_of(kind_ahead);
        let Some(fields) =
            self.mapping_listing(&label, node, &probe_keys_of(None), (&intro, &listed))
        else {
            return (None, None);
        };
        let declared = self.value(&fields, "name", Self::string);
        let kind_id = self.kind_id(&fields);
        if let Some(id) = &kind_id {
            self.kind_options(id, &fields);
            if id.value != Kind::Custom && fields.get("name").is_none() {
                missing_key(
                    format!("{label} of kind `{}` has no `name`", id.value),
                    "add `name: <short-id>`; only `custom` probes may take their name from the `#[zb_health]` attribute",
                    node.loc,
                    &mut self.sink,
                );
            }
        }
        let kind = kind_id.and_then(|id| self.kind(&name, id.value, &fields));
        let tags_field = fields.get("tags");
        let tags = tags_field.and_then(|f| self.tags(&label, f.node));
        let custom = kind_id.as_ref().is_some_and(|id| id.value == Kind::Custom);
        let (timeout, deadline) = self.probe_timeout(&fields, settings, custom);
        let failure_status = self.value(&fields, "failure_status", Self::keyword::<FailureStatus>);
        // Tags written but invalid were reported; no rule guesses them.
        let effective_tags = match (&tags, tags_field) {
            (Some(tags), _) => Some(tags.iter().map(|t| t.value).collect()),
            (None, Some(_)) => None,
            (None, None) => kind_id.and_then(|k| k.value.default_tags()),
        };
        let [cache, refresh, max_staleness, failing_for] =
            ["cache", "refresh", "max_staleness", "failing_for"]
                .map(|key| self.value(&fields, key, Self::duration));
        let [failure_threshold, success_threshold] = ["failure_threshold", "success_threshold"]
            .map(|key| self.value(&fields, key, Self::run_count));
        let depends_on = self
            .name_list(
                &fields,
                "depends_on",
                ("probe", "database", "a `depends_on` name"),
            )
            .unwrap_or_default();
        let shared = self.value(&fields, "shared", Self::boolean);
        let restart_after = self.value(&fields, "restart_after", Self::duration);
        // A custom probe's policy and restart are its attribute's, checked
        // there (against the detection time by the generated code); what
        // the manifest repeats must equal them (R7, in the generated code).
        // Nor are they checked while the tags are unknown.
        let policy = !custom && kind_id.is_some() && effective_tags.is_some();
        SettingsAt {
            name: declared.as_ref().map(|n| n.location),
            written_tags: tags
                .as_ref()
                .zip(tags_field)
                .map(|(tags, f)| (tags.iter().map(|t| t.pair()).collect(), f.node.loc)),
            tags: effective_tags,
            deadline,
            // R10 (ZB-2.3b) where the effective failure status was written:
            // its own, else `defaults.failure_status`. A custom probe takes
            // its status (and, without manifest `tags`, its tags) from its
            // attribute, which checks R10 itself.
            failure_status: failure_status
                .or(settings.default_failure_status.filter(|_| !custom))
                .filter(|_| kind_id.is_some())
                .map(Located::pair),
            cache: checked(cache, policy),
            refresh: checked(refresh, policy),
            max_staleness: checked(max_staleness, policy),
            failures: checked(failure_threshold, policy),
            failing_for: checked(failing_for, policy),
            successes: checked(success_threshold, policy),
            // Without known tags (a custom probe's without manifest
            // `tags`), `shared` is left to what states them.
            shared: shared.map(Located::pair),
            restart_after: checked(restart_after, !custom),
        }
        .check(
            &name,
            settings.orchestrator,
            Some(settings.detection),
            &mut self.sink,
        );
        let decl = kind.map(|kind| ProbeDecl {
            location: node.loc,
            name: declared.clone(),
            kind,
            tags,
            timeout,
            failure_status,
            cache,
            refresh,
            max_staleness,
            failure_threshold,
            failing_for,
            success_threshold,
            shared,
            restart_after,
            depends_on,
        });
        (declared, decl)
    }

    /// `kind`: required (R11), one of [`Kind::NAMES`].
    fn kind_id(&mut self, fields: &Fields) -> Option<Located<Kind>> {
        let missing = (
            format!("{} has no `kind`", fields.what),
            format!("add `kind:` with one of {}", one_of(Kind::NAMES)),
        );
        self.required(fields, "kind", missing, Self::keyword::<Kind>)
    }

    /// R4 for each kind-specific key on a kind that does not take it.
    fn kind_options(&mut self, kind: &Located<Kind>, fields: &Fields) {
        for field in &fields.entries {
            let Some((key, kinds)) = KIND_OPTIONS.iter().find(|(k, _)| *k == field.key) else {
                continue;
            };
            if !kinds.contains(&kind.value) {
                let takers: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
                self.sink.push(
                    Rule::Unknown,
                    field.key_loc,
                    format!(
                        "`{key}` does not apply to {}, a `{}` probe",
                        fields.what, kind.value
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
    fn kind(&mut self, name: &str, id: Kind, fields: &Fields) -> Option<ProbeKind> {
        let (label, at) = (fields.what.as_str(), fields.loc);
        match id {
            Kind::Database => Some(ProbeKind::Database),
            Kind::ClusterMembership => {
                let policy = self.value(fields, "policy", Self::keyword::<MembershipPolicy>);
                let policy = policy.map(|p| p.value).unwrap_or_default();
                Some(ProbeKind::ClusterMembership { policy })
            }
            Kind::ClusterTransport => Some(ProbeKind::ClusterTransport {
                guard: self.guard(fields),
            }),
            Kind::ActiveNode => self.active_node(name, fields),
            Kind::Grpc => Some(ProbeKind::Grpc),
            Kind::Http => self.http(fields),
            Kind::Disk => self.disk(label, fields, at),
            Kind::Redis => self.redis(fields),
            Kind::Certificate => self.certificate(label, fields, at),
            Kind::Custom => self
                .custom_type(label, fields, at)
                .map(|(type_path, function)| ProbeKind::Custom {
                    type_path,
                    function,
                }),
        }
    }

    /// `expected_size` (≥ 1, R12) and `require_majority`, which needs it
    /// (R11). With an expected size, a majority is required unless the
    /// manifest says `require_majority: false`: split-brain safety is the
    /// default wherever the size is known (ZB-2.3a).
    fn guard(&mut self, fields: &Fields) -> Option<MajorityGuard> {
        let size = self.value(fields, "expected_size", Self::expected_size);
        let majority = self.value(fields, "require_majority", Self::boolean);
        if let (None, Some(f)) = (fields.get("expected_size"), fields.get("require_majority")) {
            missing_key(
                format!(
                    "{} has no `expected_size` to count a majority of",
                    fields.what("require_majority")
                ),
                "add `expected_size: <nodes in the cluster>`, or remove `require_majority`",
                f.key_loc,
                &mut self.sink,
            );
        }
        size.map(|expected_size| MajorityGuard {
            expected_size,
            require_majority: majority.is_none_or(|m| m.value),
        })
    }

    /// `scope`, `roles`, `no_active_role_status` of an active-node probe:
    /// R2 for `scope: role` without roles (ZB-2.3d), R7 for role options on
    /// a cluster-wide scope.
    fn active_node(&mut self, name: &str, fields: &Fields) -> Option<ProbeKind> {
        let scope = self.value(fields, "scope", Self::keyword::<Scope>);
        let roles_field = fields.get("roles");
        let roles = self.name_list(fields, "roles", ("role", "admin, driver", "a role"));
        let status_field = fields.get("no_active_role_status");
        let status = self.value(
            fields,
            "no_active_role_status",
            Self::keyword::<HealthStatus>,
        );
        let guard = self.guard(fields);
        let scope = match scope {
            Some(s) if s.value == Scope::Role => {
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
                            "{} sets `{}` but its scope is the whole cluster",
                            fields.what, f.key
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
                let listed: Vec<(&str, Location)> = roles.iter().map(Located::text).collect();
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

    /// `key`, a list of `noun` names, each `item` in messages: `roles`,
    /// which [`check_role_preference`] judges, or `depends_on`, which R21
    /// and R22 judge over every probe, once all are read.
    fn name_list(
        &mut self,
        fields: &Fields,
        key: &str,
        (noun, example, item): (&str, &str, &str),
    ) -> Option<Vec<Located<String>>> {
        let help = format!("write a YAML list, e.g. `{key}: [{example}]`");
        let item = format!("{item} of {}", fields.what);
        let expected = format!("a list of {noun} names");
        self.value(fields, key, |r, what, node| {
            r.strings((what, &expected, &help), &item, node)
        })
    }

    /// `url` (required, R11; callable, R15 through
    /// [`upstream::parse_url`]), `status` (a range of codes, R15) and
    /// `body_contains` of an HTTP probe, each error at its value.
    fn http(&mut self, fields: &Fields) -> Option<ProbeKind> {
        let status = match fields.get("status") {
            None => Some(StatusRange::DEFAULT),
            Some(_) => self.value(fields, "status", Self::status_range),
        };
        let body_contains = self.value(fields, "body_contains", Self::string);
        let url = self.url(
            Kind::Http,
            fields,
            "add `url: http://host:port/path`, the upstream to call",
            |u| upstream::parse_url(u).map(drop),
        )?;
        Some(ProbeKind::Http {
            url,
            status: status?,
            body_contains,
        })
    }

    /// The `url` of a probe of `kind` (required, R11), judged by `check`
    /// (R15, at its value). A message shows the URL without its password.
    pub(super) fn url(
        &mut self,
        kind: Kind,
        fields: &Fields,
        missing_help: &str,
        check: impl FnOnce(&str) -> Result<(), upstream::UrlProblem>,
    ) -> Option<Located<String>> {
        let missing = (
            format!("{} has kind `{kind}` but no `url`", fields.what),
            missing_help,
        );
        let url = self.required(fields, "url", missing, Self::string)?;
        if let Err(problem) = check(&url.value) {
            self.sink.push(
                Rule::ValueType,
                url.location,
                format!(
                    "{}, `{}`, {}",
                    fields.what("url"),
                    shown(&upstream::without_password(&url.value)),
                    problem.message
                ),
                problem.help,
            );
            return None;
        }
        Some(url)
    }

    /// `status` of an HTTP probe: `200-299` or one code such as `204`.
    fn status_range(&mut self, what: &str, node: &Node) -> Option<StatusRange> {
        let help = "write a range of status codes, e.g. `status: 200-399`, or one code, e.g. `status: 204`";
        let parsed = match &node.value {
            Value::Int(n) => u16::try_from(*n)
                .map_err(|_| format!("`{n}` is not a status code"))
                .and_then(|c| StatusRange::new(c, c)),
            Value::Str(s) => StatusRange::parse(s),
            _ => {
                self.wrong_type(what, "a status code range", node, help);
                return None;
            }
        };
        parsed
            .map_err(|why| {
                self.sink
                    .push(Rule::ValueType, node.loc, format!("{what}: {why}"), help);
            })
            .ok()
    }

    /// `type` or `fn` of a custom probe: exactly one (R11, R4), a Rust
    /// path (R4); with whether it is the `fn` form.
    fn custom_type(
        &mut self,
        label: &str,
        fields: &Fields,
        at: Location,
    ) -> Option<(Located<String>, bool)> {
        let (key, function) = match (fields.get("type"), fields.get("fn")) {
            (Some(_), None) => ("type", false),
            (None, Some(_)) => ("fn", true),
            (Some(_), Some(f)) => {
                self.sink.push(
                    Rule::Unknown,
                    f.key_loc,
                    format!("{label} has both `type` and `fn`"),
                    "a custom probe is a #[zb_health] struct (`type:`) or a #[zb_health] async fn (`fn:`); keep one",
                );
                return None;
            }
            (None, None) => {
                missing_key(
                    format!("{label} has kind `custom` but no `type` or `fn`"),
                    "add `type: crate::path::to::YourProbe`, the struct that carries `#[zb_health]`, or `fn: crate::path::to::your_check`, an `async fn` that carries it",
                    at,
                    &mut self.sink,
                );
                return None;
            }
        };
        let path = self.value(fields, key, Self::string)?;
        if !super::rust_path::is_rust_path(&path.value) {
            let example = if function {
                "the probe fn, e.g. `crate::probes::ping`"
            } else {
                "the probe struct, e.g. `crate::probes::CacheProbe`"
            };
            self.sink.push(
                Rule::Unknown,
                path.location,
                format!("`{key}` of {label} is `{}`, which is not a Rust path", shown(&path.value)),
                format!("write the path of {example}: identifiers joined by `::`, optionally starting with `crate::`, `self::`, `super::` or `::`"),
            );
            return None;
        }
        Some((path, function))
    }

    /// `tags`: each one known (R4); R1 and R13 on the list are
    /// [`SettingsAt::check`]'s. A list whose every tag is unknown is
    /// `None`, not also reported as empty.
    fn tags(&mut self, label: &str, node: &Node) -> Option<Vec<Located<Tag>>> {
        let what = format!("`tags` of {label}");
        let help = "write a YAML list, e.g. `tags: [ready]`";
        let written = self.strings(
            (&what, "a list of tags", help),
            &format!("a tag of {label}"),
            node,
        )?;
        let mut tags = Vec::new();
        for text in written {
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
        if tags.is_empty() && !node.items().is_empty() {
            return None;
        }
        Some(tags)
    }

    /// `timeout` of a probe, and the deadline it will really run with
    /// (its own, else `defaults.timeout`, else the default for the
    /// orchestrator timeout, as [`ProbeDecl::effective_timeout`] resolves
    /// it), which R19 counts (a background result's default maximum age
    /// includes it), with where it was written when R5 checks it. A `custom` probe without its own `timeout` runs with its
    /// attribute's deadline, which only the generated code can see; it
    /// checks R5 there.
    fn probe_timeout(
        &mut self,
        fields: &Fields,
        settings: &Settings,
        custom: bool,
    ) -> (Option<Located<Duration>>, (Duration, Option<Location>)) {
        let written = self.written(fields, "timeout", Self::duration);
        let own = written.valid();
        let stated = own.or(settings.default_timeout);
        let deadline = attribute_timeout(stated.map(|t| t.value), settings.orchestrator);
        let checked = match written {
            Written::Invalid => false,
            Written::Valid(_) => true,
            Written::Absent => !custom && !settings.default_timeout_reported,
        };
        let written_at = stated.map_or(fields.loc, |t| t.location);
        (own, (deadline, checked.then_some(written_at)))
    }
}
