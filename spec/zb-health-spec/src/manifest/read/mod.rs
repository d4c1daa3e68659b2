//! The second pass: the located tree to a [`Manifest`], one function per
//! section and per kind, every problem pushed into one sink.
//!
//! By concern: this file reads the top level (`service`, the paths of
//! `endpoints`, `orchestrator`, `management`, `defaults`, the `probes`
//! list and its `depends_on`); `endpoints` the response keys of
//! `endpoints`; `groups`, `grpc`, `history`, `lifecycle` and
//! `observability` their sections; `probes` one entry of
//! `probes` with its kind's options; `values` typed values (mappings,
//! strings, durations, keywords); `rust_path` a custom probe's `type`.
//!
//! Unknown keys are found by [`Reader::mapping`]: every mapping is read as a
//! list of `(key, value)` pairs and each key is looked up in the section's
//! known keys, so an unknown key is one R4 violation and never stops the read.
//! Wrong types are R15 at the value. Every spec rule is the shared function of
//! `crate::rules` (or `crate::grpc`), a probe's settings all through
//! `crate::settings::SettingsAt::check`, the registry's checker too; these
//! files only find the values and their locations.

mod certificate;
mod disk;
mod endpoints;
mod groups;
mod grpc;
mod history;
mod lifecycle;
mod observability;
mod probes;
mod redis;
mod rust_path;
mod values;

use std::time::Duration;

use super::tree::{Node, Value};
use super::{Located, Location, Manifest, ProbeDecl, ProbeKind, ResponsesDecl};
use crate::{
    Disclosure, Endpoint, EndpointPaths, FailureStatus, NameOf, Rule, Violation, Violations,
    rules::{
        Dependent, check_dependencies, check_name_of, check_paths, check_unique_names, missing_key,
    },
    vocab::Preset,
};

/// The top-level keys.
const TOP_KEYS: [&str; 11] = [
    "service",
    "endpoints",
    "orchestrator",
    "lifecycle",
    "management",
    "defaults",
    "probes",
    "observability",
    "grpc",
    "groups",
    "history",
];
/// The keys of `endpoints`: the preset, one path per tier and the startup
/// path, then what the bodies show (read in `endpoints.rs`).
const ENDPOINT_KEYS: [&str; 10] = [
    "preset",
    "ready",
    "active",
    "live",
    "started",
    "format",
    "disclosure",
    "cluster_ready",
    "cluster_addresses",
    "authorized",
];
/// The keys of `orchestrator`.
const ORCHESTRATOR_KEYS: [&str; 2] = ["timeout", "termination_grace_period"];
/// A disclosure level per tier, indexed by `Tag as usize`.
type Levels = [Option<Located<Disclosure>>; 3];
/// The keys of `management`.
const MANAGEMENT_KEYS: [&str; 3] = ["port", "disclosure", "authorized"];
/// The keys of `defaults`.
const DEFAULT_KEYS: [&str; 2] = ["timeout", "failure_status"];

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
    /// What messages call the mapping: `` probe `db` ``.
    what: String,
    /// The path of a section's keys (`lifecycle.`, empty at the top), so
    /// a key's value is `` `lifecycle.drain_delay` ``; `None` in a list
    /// item, whose key's value is `` `cache` of probe `db` ``.
    path: Option<String>,
    entries: Vec<Field<'a>>,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<Field<'a>> {
        self.entries.iter().find(|f| f.key == key).copied()
    }

    /// What messages call the value of `key`.
    fn what(&self, key: &str) -> String {
        match &self.path {
            Some(path) => format!("`{path}{key}`"),
            None => format!("`{key}` of {}", self.what),
        }
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
    /// `defaults.failure_status`, when valid: R10 is reported there for
    /// the active probes that inherit it.
    default_failure_status: Option<Located<FailureStatus>>,
    /// The orchestrator's detection time, from the drain delay: the bound
    /// of every cached or background result (R19).
    detection: Duration,
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
    /// [`value`](Self::value), telling an absent key from an invalid one.
    fn written<T>(
        &mut self,
        fields: &Fields,
        key: &str,
        read: impl FnOnce(&mut Self, &str, &Node) -> Option<Located<T>>,
    ) -> Written<T> {
        match fields.get(key) {
            None => Written::Absent,
            Some(_) => self
                .value(fields, key, read)
                .map_or(Written::Invalid, Written::Valid),
        }
    }

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
        let mut top = self.mapping("the manifest", root, &TOP_KEYS)?;
        top.path = Some(String::new());
        let service = self.service(&top);
        let (paths, mut responses, cluster_ready) = self.endpoints(&top);
        let (orchestrator_timeout, grace_period) = self.orchestrator(&top);
        let lifecycle = self.lifecycle(&top, grace_period);
        let (management_port, management_disclosure, management_authorized) = self.management(&top);
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
            default_failure_status,
            detection: crate::detection::detection_time(lifecycle.drain_delay()),
        };
        let probes = self.probes(&top, &settings);
        if let Some(probes) = &probes {
            responses.cluster_ready = self.cluster_ready(cluster_ready, probes);
        }
        let (failure_log_interval, webhook) = self.observability(&top);
        let grpc = self.grpc(&top, probes.as_deref());
        let groups = self.groups(&top, &paths, probes.as_deref());
        let history = self.history(&top, management_port.is_some(), &paths, &groups);
        Some(Manifest {
            service: service?,
            paths,
            responses,
            orchestrator_timeout: orchestrator_timeout.valid(),
            termination_grace_period: grace_period,
            lifecycle,
            management_port,
            management_disclosure,
            management_authorized,
            default_timeout: default_timeout.valid(),
            default_failure_status,
            probes: probes?,
            failure_log_interval,
            webhook,
            grpc,
            groups,
            history,
        })
    }

    /// `service`: required, and a short identifier (R9).
    fn service(&mut self, top: &Fields) -> Option<Located<String>> {
        let missing = (
            "the manifest has no `service`",
            "add `service: <name>`, the service's short identifier, e.g. `service: scadabridge`",
        );
        let service = self.required(top, "service", missing, Self::string)?;
        check_name_of(
            NameOf::Service,
            &service.value,
            service.location,
            &mut self.sink,
        );
        Some(service)
    }

    /// `endpoints`: the preset, then per-endpoint overrides; R6 on the result,
    /// each path located where it was set. Also what the bodies show
    /// (`endpoints.rs`), with `cluster_ready` still to resolve.
    fn endpoints(
        &mut self,
        top: &Fields,
    ) -> (EndpointPaths, ResponsesDecl, endpoints::ClusterReady) {
        let mut paths = EndpointPaths::zb();
        let mut set_at = [top.loc; 4];
        let mut responses = (ResponsesDecl::default(), endpoints::ClusterReady::Off);
        if let Some(section) = self.section(top, "endpoints", &ENDPOINT_KEYS) {
            responses = self.responses(&section);
            set_at = [section.loc; 4];
            if let Some(preset) = self.value(&section, "preset", Self::keyword::<Preset>) {
                paths = preset.value.paths();
                set_at = [preset.location; 4];
            }
            for (endpoint, at) in Endpoint::ALL.into_iter().zip(&mut set_at) {
                if let Some(path) = self.value(&section, endpoint.as_str(), Self::string) {
                    *paths.endpoint_mut(endpoint) = path.value;
                    *at = path.location;
                }
            }
        }
        let resolved: Vec<(Endpoint, &str, Location)> = Endpoint::ALL
            .into_iter()
            .zip(set_at)
            .map(|(endpoint, at)| (endpoint, paths.endpoint(endpoint), at))
            .collect();
        check_paths(&resolved, &mut self.sink);
        (paths, responses.0, responses.1)
    }

    /// `orchestrator`: the orchestrator's probe timeout and its termination
    /// grace period (checked against the drain, R18, in `lifecycle`).
    fn orchestrator(&mut self, top: &Fields) -> (Written<Duration>, Option<Located<Duration>>) {
        let Some(section) = self.section(top, "orchestrator", &ORCHESTRATOR_KEYS) else {
            return (Written::Absent, None);
        };
        let timeout = self.written(&section, "timeout", Self::setting_timeout);
        let grace = self.value(&section, "termination_grace_period", Self::duration);
        (timeout, grace)
    }

    /// `management`: the port of the management server, a TCP port from 1
    /// to 65535 (R15 otherwise), and what its bodies show (`disclosure`,
    /// as under `endpoints`; it needs the port, R11) and to a request with
    /// the bearer token (`authorized`, as under `endpoints`).
    fn management(&mut self, top: &Fields) -> (Option<Located<u16>>, Levels, Levels) {
        let Some(section) = self.section(top, "management", &MANAGEMENT_KEYS) else {
            return (None, [None; 3], [None; 3]);
        };
        let (disclosure, authorized) = self.levels(&section);
        // `disclosure` and `authorized` need the port (R11).
        let levels = disclosure.iter().chain(&authorized).flatten();
        if let (None, Some(at)) = (section.get("port"), levels.map(|d| d.location).next()) {
            missing_key(
                "`management.disclosure` and `management.authorized` are for the management port, and `management.port` is absent",
                "add `port: 8081` (the management server's port), or move the level to `endpoints.disclosure`",
                at,
                &mut self.sink,
            );
        }
        let expected = (
            "a TCP port from 1 to 65535",
            "write the port the management server listens on, e.g. `8081`; the orchestrator's probes target it",
        );
        let port = self.value(&section, "port", |r, what, node| {
            r.typed(what, node, expected, |n| {
                let port = n.as_int().and_then(|n| u16::try_from(n).ok());
                port.filter(|p| *p > 0)
            })
        });
        (port, disclosure, authorized)
    }

    /// `defaults`: the timeout and failure status probes inherit.
    fn defaults(&mut self, top: &Fields) -> (Written<Duration>, Option<Located<FailureStatus>>) {
        let Some(section) = self.section(top, "defaults", &DEFAULT_KEYS) else {
            return (Written::Absent, None);
        };
        let timeout = self.written(&section, "timeout", Self::setting_timeout);
        let status = self.value(&section, "failure_status", Self::keyword::<FailureStatus>);
        (timeout, status)
    }

    /// `orchestrator.timeout` or `defaults.timeout`: a duration, not zero
    /// (R5; a zero one is still returned, so it is reported only here).
    fn setting_timeout(&mut self, what: &str, node: &Node) -> Option<Located<Duration>> {
        let timeout = self.duration(what, node)?;
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

    /// R21 and R22 over every probe that could be read, through
    /// [`check_dependencies`], the rule the runtime builder applies too: a
    /// `kind: custom` entry without `name:` is named by its attribute,
    /// which the manifest does not see, so nothing here can depend on it.
    fn dependencies(&mut self, decls: &[Option<ProbeDecl>]) {
        let dependents: Vec<Dependent<'_, Location>> = decls
            .iter()
            .flatten()
            .map(|d| {
                let name = d.name.as_ref().map(|n| n.value.as_str());
                let label = match (&d.kind, name) {
                    (_, Some(name)) => name,
                    (ProbeKind::Custom { type_path, .. }, None) => type_path.value.as_str(),
                    (_, None) => "?",
                };
                Dependent {
                    name,
                    label,
                    depends_on: d.depends_on.iter().map(Located::text).collect(),
                }
            })
            .collect();
        if dependents.iter().any(|d| !d.depends_on.is_empty()) {
            check_dependencies(&dependents, &mut self.sink);
        }
    }

    /// `probes`: a list (missing or empty means no probes), then R3 over the
    /// declared names.
    fn probes(&mut self, top: &Fields, settings: &Settings) -> Option<Vec<ProbeDecl>> {
        let Some(f) = top.get("probes") else {
            return Some(Vec::new());
        };
        let help = "write one `- { name: …, kind: … }` item per probe";
        let items = self.list("`probes`", "a list of probes", f.node, help)?;
        let mut names = Vec::new();
        let mut decls = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let (name, decl) = self.probe(index, item, settings);
            names.extend(name);
            decls.push(decl);
        }
        check_unique_names(names.iter().map(Located::text), &mut self.sink);
        // A `kind: custom` entry without `name:` is named by its type's
        // attribute: the same type twice is one probe registered twice,
        // which the compiler refuses, so `check` must too.
        let unnamed = decls.iter().flatten().filter_map(|d| match &d.kind {
            ProbeKind::Custom { type_path, .. } if d.name.is_none() => Some(type_path),
            _ => None,
        });
        let mut seen: Vec<&Located<String>> = Vec::new();
        for type_path in unnamed {
            if let Some(first) = seen.iter().find(|t| t.value == type_path.value) {
                self.sink.push(
                    Rule::DuplicateName,
                    type_path.location,
                    format!(
                        "custom probe `{}` is listed twice without a `name:` (first at {}), so both entries are one probe registered twice",
                        type_path.value, first.location
                    ),
                    "give one of the entries a `name:` of its own, or remove the duplicate",
                );
            } else {
                seen.push(type_path);
            }
        }
        self.dependencies(&decls);
        decls.into_iter().collect()
    }
}
