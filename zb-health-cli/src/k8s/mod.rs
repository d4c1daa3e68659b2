//! `zb-health k8s`: the Kubernetes side of a manifest.
//!
//! [`plan`] turns a validated [`Manifest`] into the probe settings that fit
//! it (or refuses, at the manifest's line:column, what Kubernetes cannot
//! express); [`render`] prints them as YAML, and [`drift`] compares them
//! with an existing Deployment or StatefulSet. Every timing comes from the
//! spec crate's own resolution (`effective_timeout`, `graceful_stop`,
//! `drain_delay`), so this module states no rule of its own: it only
//! translates. [`run`] is the subcommand: it reads, plans, and prints the
//! patch or the drift.

pub mod drift;
pub mod render;

use std::time::Duration;

use zb_health_spec::drain::whole_seconds;
use zb_health_spec::manifest::{GrpcTargetDecl, Located, Location, Manifest, ProbeDecl, ProbeKind};
use zb_health_spec::{Endpoint, Rule, Tag, Violation, detection, suggest};

use crate::args::K8sArgs;
use crate::input::{self, Failure};
// `render` here is the YAML patch; the diagnostics are the crate's.
use crate::render as diagnostics;

/// `zb-health k8s`: the manifest must pass `check`, then translate to
/// Kubernetes; with `--check`, the Deployment is compared instead of printed.
pub fn run(args: &K8sArgs) -> Result<(), Failure> {
    let styled = args.color.color.styled();
    let source = input::read(&args.manifest)?;
    let manifest = crate::check::manifest(&source, styled)?;
    let plan = plan(&manifest, args)
        .map_err(|violations| diagnostics::report(&source, &violations, styled))?;
    let Some(deployment) = &args.check else {
        print!("{}", render::yaml(&plan, &source.shown));
        return Ok(());
    };
    let deployment = input::read(deployment)?;
    let drifts = drift::check(&manifest, &plan, &deployment.text, args)
        .map_err(|why| input::unusable(format!("cannot check `{}`: {why}", deployment.shown)))?;
    if drifts.is_empty() {
        println!("{}: consistent with {}", deployment.shown, source.shown);
        return Ok(());
    }
    Err(drift::report(&drifts, &deployment, &source.shown, styled))
}

/// The application port when neither `management.port` nor `--port` says.
pub const DEFAULT_APP_PORT: u16 = 8080;
/// The gRPC port when `--grpc-port` does not say (the gRPC convention).
pub const DEFAULT_GRPC_PORT: u16 = 50051;
/// Kubernetes' `timeoutSeconds` when a probe states none.
pub const K8S_DEFAULT_TIMEOUT_SECONDS: u64 =
    zb_health_spec::duration::KUBERNETES_DEFAULT_TIMEOUT.as_secs();
/// Kubernetes' `periodSeconds` when a probe states none.
pub const K8S_DEFAULT_PERIOD_SECONDS: u64 = 10;
/// Kubernetes' `failureThreshold` when a probe states none.
pub const K8S_DEFAULT_FAILURE_THRESHOLD: u64 = 3;
/// The startup probe's `periodSeconds`: a started pod is noticed within
/// 5 s, at one cheap request per period while it starts.
pub const STARTUP_PERIOD_SECONDS: u64 = 5;
/// The startup probe's `failureThreshold`: 5 s × 60 gives the gates and the
/// first beats five minutes before the kubelet restarts the container.
/// Only a start that a restart can cure fails it, so it is generous.
pub const STARTUP_FAILURE_THRESHOLD: u64 = 60;
/// Kubernetes' `terminationGracePeriodSeconds` when the pod states none.
pub const K8S_DEFAULT_GRACE_SECONDS: u64 =
    zb_health_spec::drain::KUBERNETES_DEFAULT_GRACE_PERIOD.as_secs();

/// Where the HTTP port of the probes comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortSource {
    /// `management.port` of the manifest.
    Management,
    /// `--port`.
    Flag,
    /// Neither: [`DEFAULT_APP_PORT`], an assumption.
    Default,
}

/// How one Kubernetes probe asks its endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handler {
    /// `httpGet` on the endpoint's path.
    Http {
        /// The endpoint's path.
        path: String,
    },
    /// Kubernetes' native `grpc` probe, on a `grpc.health.v1` service name
    /// that the manifest maps to the tier.
    Grpc {
        /// The service name (`""`: the whole server).
        service: String,
    },
}

/// One Kubernetes probe: which endpoint, how it is asked, and its timings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbePlan {
    /// The endpoint it reads: a tier, or the startup path.
    pub endpoint: Endpoint,
    /// How.
    pub handler: Handler,
    /// The longest deadline the manifest states for a probe the endpoint
    /// may run, for the notes and the drift check (zero: none, as on `live`
    /// and the startup path, which run no probe). A custom
    /// probe's deadline on its attribute is not known here; the compiler
    /// proves it below `orchestrator.timeout`.
    pub deadline: Duration,
    /// `periodSeconds`.
    pub period: u64,
    /// `failureThreshold`.
    pub failure_threshold: u64,
    /// The health group it reads instead of its endpoint
    /// (`--readiness-group`), always over HTTP.
    pub group: Option<GroupTarget>,
    /// The probes its path leaves out of the verdict
    /// (`--readiness-exclude`, `?exclude=`).
    pub exclude: Vec<String>,
}

/// A health group a probe reads (`groups` in the manifest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupTarget {
    /// The group's name.
    pub name: String,
    /// Its path.
    pub path: String,
}

impl Plan {
    /// What the startup path waits for, of what the manifest declares: the
    /// startup gates and the watchdogs, each with what it waits for and
    /// their names.
    pub fn startup_waits(&self) -> impl Iterator<Item = (&str, &str, String)> {
        [
            ("startup gates", "are ready", &self.startup_gates),
            ("watchdogs", "have beaten once", &self.watchdogs),
        ]
        .into_iter()
        .filter(|(.., names)| !names.is_empty())
        .map(|(what, until, names)| (what, until, names.join(", ")))
    }
}

impl ProbePlan {
    /// The HTTP path it should read, without a query: its group's, else
    /// its endpoint's.
    pub fn base_path<'a>(&'a self, paths: &'a zb_health_spec::EndpointPaths) -> &'a str {
        match &self.group {
            Some(g) => &g.path,
            None => paths.endpoint(self.endpoint),
        }
    }

    /// The HTTP path it should read, with `?exclude=` when it leaves
    /// probes out.
    pub fn http_path(&self, paths: &zb_health_spec::EndpointPaths) -> String {
        let base = self.base_path(paths);
        if self.exclude.is_empty() {
            base.to_owned()
        } else {
            format!(
                "{base}?{}",
                zb_health_spec::query::exclude_query(&self.exclude)
            )
        }
    }
}

/// Everything `k8s` prints or compares, resolved from one manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The service's name.
    pub service: String,
    /// The container the probes belong to.
    pub container: String,
    /// The HTTP port of the tiers.
    pub port: u16,
    /// Where [`Plan::port`] comes from.
    pub port_source: PortSource,
    /// The gRPC port, when the manifest has a `grpc` section.
    pub grpc_port: Option<u16>,
    /// Whether [`Plan::grpc_port`] is `--grpc-port` (else it is
    /// [`DEFAULT_GRPC_PORT`], an assumption).
    pub grpc_port_stated: bool,
    /// Every endpoint path, for the drift messages ("that is the active
    /// tier").
    pub paths: zb_health_spec::EndpointPaths,
    /// The ready tier's probes the manifest names: what a readiness path's
    /// `?exclude=` may name.
    pub ready_probes: Vec<String>,
    /// `timeoutSeconds` of every probe.
    pub timeout_seconds: u64,
    /// Whether [`Plan::timeout_seconds`] is the manifest's
    /// `orchestrator.timeout` (else it is derived from the deadlines).
    pub timeout_stated: bool,
    /// `livenessProbe`.
    pub liveness: ProbePlan,
    /// `readinessProbe`.
    pub readiness: ProbePlan,
    /// `startupProbe` on the startup path, when the manifest declares
    /// startup gates or watchdogs.
    pub startup: Option<ProbePlan>,
    /// The gates, for the comment.
    pub startup_gates: Vec<String>,
    /// The watchdogs' names, for the comment.
    pub watchdogs: Vec<String>,
    /// Whether a stalled watchdog ends the process with
    /// [`zb_health_spec::drain::WATCHDOG_STALL_EXIT_CODE`]
    /// (`lifecycle.exit_on_stall`).
    pub exit_on_stall: bool,
    /// `terminationGracePeriodSeconds`.
    pub grace_seconds: u64,
    /// Whether [`Plan::grace_seconds`] is the manifest's
    /// `orchestrator.termination_grace_period`.
    pub grace_stated: bool,
    /// The drain delay (BE-HLTH-005).
    pub drain_delay: Duration,
    /// The graceful stop after it, as the runtime applies it.
    pub graceful_stop: Duration,
}

/// A violation of `rule` at `location`.
fn violation(
    rule: Rule,
    location: Location,
    message: String,
    help: impl Into<String>,
) -> Violation<Location> {
    Violation {
        rule,
        location,
        message,
        help: help.into(),
    }
}

/// The names `name` may be, and the nearest one when it is close.
fn one_of(name: &str, names: &[&str]) -> String {
    format!(
        "{}{}",
        suggest::one_of(names),
        suggest::hint(suggest::did_you_mean(name, names.iter().copied()))
    )
}

/// A stated duration in the whole seconds of Kubernetes' `field`, or an
/// R5 violation when it is none: R5 is the rule of durations that cannot
/// fit the orchestrator's probe timeout (BE-HLTH-006), and a timing
/// Kubernetes cannot express is that. `None` when it is not stated.
fn stated_seconds(
    stated: Option<Located<Duration>>,
    what: &str,
    field: &str,
    help: &str,
    errors: &mut Vec<Violation<Location>>,
) -> Option<u64> {
    let stated = stated?;
    // Only a non-zero whole number of seconds fits Kubernetes' `*Seconds`.
    let secs = stated.value.as_secs();
    if stated.value.subsec_nanos() == 0 && secs > 0 {
        return Some(secs);
    }
    errors.push(violation(
        Rule::Duration,
        stated.location,
        format!(
            "the {what} of {} ms is not a whole number of seconds, which Kubernetes' `{field}` cannot express",
            stated.value.as_millis()
        ),
        help,
    ));
    Some(0)
}

/// Whether `probe` may be on `tier`: its tags say so, or it is a custom
/// probe without `tags`, whose attribute may put it there.
pub fn may_be_on(probe: &ProbeDecl, tier: Tag) -> bool {
    probe.effective_tags().is_none_or(|t| t.contains(tier))
}

/// Resolves the probe settings for `manifest`, or every reason Kubernetes
/// cannot run it as stated.
///
/// # Errors
///
/// R5 violations at the manifest's line:column: an `orchestrator.timeout` or
/// `termination_grace_period` that is not whole seconds, or (without an
/// `orchestrator.timeout`) a ready-tier custom probe whose deadline is only
/// on its Rust attribute, which the tool cannot see and so cannot prove
/// below `timeoutSeconds`.
pub fn plan(manifest: &Manifest, options: &K8sArgs) -> Result<Plan, Vec<Violation<Location>>> {
    let mut errors = Vec::new();

    // `--readiness-group`: the readiness probe reads the group, answered as
    // `ready` is, over its probes only.
    let group = options.readiness_group.as_deref().map(|name| {
        let found = manifest.groups.iter().find(|g| g.name.value == name);
        found.ok_or_else(|| {
            let names: Vec<&str> = manifest.groups.iter().map(|g| g.name.value.as_str()).collect();
            vec![violation(
                Rule::Unknown,
                manifest.service.location,
                format!("`--readiness-group {name}` names no health group of this manifest"),
                if names.is_empty() {
                    "the manifest has no `groups`; declare one (see spec/manifest.md), or leave the readiness probe on the ready tier".into()
                } else {
                    format!("name one of its `groups`: {}", one_of(name, &names))
                },
            )]
        })
    });
    let group = group.transpose()?;

    // The ready tier's probes that have a name here (a custom probe named
    // by its attribute has none the tool can see): what `?exclude=` may
    // name, in the printed path and in a Deployment's.
    let ready_probes: Vec<String> = manifest
        .probes
        .iter()
        .filter(|p| may_be_on(p, Tag::Ready))
        .filter_map(|p| p.name.as_ref().map(|n| n.value.clone()))
        .collect();
    if !options.readiness_exclude.is_empty() {
        let refuse = |message: String, help: String| {
            violation(Rule::Unknown, manifest.service.location, message, help)
        };
        if group.is_some() {
            errors.push(refuse(
                "`--readiness-exclude` with `--readiness-group`".into(),
                "a health group's path takes no query: exclude from the ready tier, or pick a group without the probe".into(),
            ));
        } else if options.grpc_probes {
            errors.push(refuse(
                "`--readiness-exclude` with `--grpc-probes`".into(),
                "grpc.health.v1 has no exclude: leave out `--grpc-probes`, so the readiness probe is an httpGet".into(),
            ));
        }
        let names: Vec<&str> = ready_probes.iter().map(String::as_str).collect();
        for name in &options.readiness_exclude {
            if !names.contains(&name.as_str()) {
                errors.push(refuse(
                    format!("`--readiness-exclude {name}` names no probe of the ready tier"),
                    format!(
                        "name one of {} (a custom probe named only by its attribute must get a `name:` in the manifest to be excluded here)",
                        one_of(name, &names)
                    ),
                ));
            }
        }
    }

    if options.grpc_probes {
        errors.extend(grpc_refusals(manifest, group.is_some()));
    }

    // The deadline each tier may wait for: the longest effective timeout of
    // a probe that may be on it. A custom probe without `tags` takes its tags
    // from its attribute, so it counts on every tier it could be on.
    let mut ready_deadline = Duration::ZERO;
    let mut unknown = Vec::new();
    for probe in &manifest.probes {
        // With a group: the probes it selects (a custom probe without
        // `tags` may be on any tier the group selects).
        let on_ready = match group {
            None => may_be_on(probe, Tag::Ready),
            Some(g) => {
                probe
                    .name
                    .as_ref()
                    .is_some_and(|n| g.probes.iter().any(|p| p.value == n.value))
                    || g.tiers.iter().any(|tier| may_be_on(probe, tier.value))
            }
        };
        if !on_ready {
            continue;
        }
        if let ProbeKind::Custom { type_path, .. } = &probe.kind
            && probe.timeout.is_none()
        {
            // Its deadline is on its attribute (the manifest's default does
            // not apply to it); only the compiler knows it, and proves it
            // below `orchestrator.timeout` when one is stated.
            unknown.push(type_path);
            continue;
        }
        ready_deadline = ready_deadline.max(probe.effective_timeout(manifest));
    }

    let stated_timeout = stated_seconds(
        manifest.orchestrator_timeout,
        "orchestrator timeout",
        "timeoutSeconds",
        "state it in whole seconds (`timeoutSeconds` is an integer, at least 1), e.g. `1s` or `2s`, with every probe deadline below it",
        &mut errors,
    );
    // `check` has proved every deadline, attribute ones included (by the
    // compiler), strictly below a stated timeout.
    let (timeout_seconds, timeout_stated) = match stated_timeout {
        Some(secs) => (secs, true),
        None => {
            for ty in unknown {
                errors.push(violation(
                    Rule::Duration,
                    ty.location,
                    format!(
                        "the deadline of custom probe `{}` is on its #[zb_health] attribute, so `timeoutSeconds` cannot be proved above it",
                        ty.value
                    ),
                    "state `orchestrator.timeout` (the compiler then proves every deadline below it), or the probe's `timeout` in the manifest",
                ));
            }
            // Strictly above the longest deadline, in whole seconds.
            (ready_deadline.as_secs() + 1, false)
        }
    };

    let drain_delay = manifest.lifecycle.drain_delay();
    let graceful_stop = manifest.graceful_stop();
    // `check` (R18) has proved the drain fits in a stated grace period.
    let stated_grace = stated_seconds(
        manifest.termination_grace_period,
        "termination grace period",
        "terminationGracePeriodSeconds",
        "state it in whole seconds, e.g. `30s`",
        &mut errors,
    );
    let drain = whole_seconds(drain_delay + graceful_stop).as_secs();
    let (grace_seconds, grace_stated) = stated_grace.map_or((drain, false), |secs| (secs, true));
    if !errors.is_empty() {
        return Err(errors);
    }

    let (port, port_source) = match (manifest.management_port, options.port) {
        (Some(m), _) => (m.value, PortSource::Management),
        (None, Some(p)) => (p, PortSource::Flag),
        (None, None) => (DEFAULT_APP_PORT, PortSource::Default),
    };
    let grpc_port = manifest
        .grpc
        .as_ref()
        .map(|_| options.grpc_port.unwrap_or(DEFAULT_GRPC_PORT));
    // `--grpc-probes` asks the name mapped to the tier (proved above to
    // exist); else the tier's path, which needs no port the manifest does
    // not state.
    let handler = |tier: Tag| match grpc_service(manifest, tier).filter(|_| options.grpc_probes) {
        Some(service) => Handler::Grpc { service },
        None => Handler::Http {
            path: manifest.paths.get(tier).to_string(),
        },
    };

    // Readiness must see the drain's 503 before the drain ends; the same
    // numbers are the detection time every cache stays below (R19).
    let mut readiness = ProbePlan {
        endpoint: Endpoint::Tier(Tag::Ready),
        handler: handler(Tag::Ready),
        deadline: ready_deadline,
        period: detection::readiness_period_seconds(drain_delay),
        failure_threshold: detection::READINESS_FAILURE_THRESHOLD,
        group: group.map(|g| GroupTarget {
            name: g.name.value.clone(),
            path: g.path.value.clone(),
        }),
        exclude: options.readiness_exclude.clone(),
    };
    // A group, or a path with `?exclude=`, is served over HTTP only
    // (grpc.health.v1 maps tiers and probes, not groups, and excludes none).
    if readiness.group.is_some() || !readiness.exclude.is_empty() {
        readiness.handler = Handler::Http {
            path: readiness.http_path(&manifest.paths),
        };
    }
    let liveness = ProbePlan {
        endpoint: Endpoint::Tier(Tag::Live),
        handler: handler(Tag::Live),
        // The live tier runs no probe (R1); its watchdogs are a clock read.
        deadline: Duration::ZERO,
        period: K8S_DEFAULT_PERIOD_SECONDS,
        failure_threshold: K8S_DEFAULT_FAILURE_THRESHOLD,
        group: None,
        exclude: Vec::new(),
    };
    // The startup path reads the gates and the watchdogs' first beats, never
    // a probe: a dependency that is down at boot keeps the pod unready (the
    // readiness probe), and cannot make the kubelet restart it. Over HTTP
    // always: grpc.health.v1 has no startup service.
    let lifecycle = &manifest.lifecycle;
    let startup =
        (!lifecycle.startup_gates.is_empty() || !lifecycle.watchdogs.is_empty()).then(|| {
            ProbePlan {
                endpoint: Endpoint::Started,
                handler: Handler::Http {
                    path: manifest.paths.started.clone(),
                },
                deadline: Duration::ZERO,
                period: STARTUP_PERIOD_SECONDS,
                failure_threshold: STARTUP_FAILURE_THRESHOLD,
                group: None,
                exclude: Vec::new(),
            }
        });

    let service = &manifest.service.value;
    Ok(Plan {
        service: service.clone(),
        container: options.container.as_ref().unwrap_or(service).clone(),
        port,
        port_source,
        grpc_port,
        grpc_port_stated: options.grpc_port.is_some(),
        paths: manifest.paths.clone(),
        ready_probes,
        timeout_seconds,
        timeout_stated,
        liveness,
        readiness,
        startup,
        startup_gates: manifest
            .lifecycle
            .startup_gates
            .iter()
            .map(|g| g.value.clone())
            .collect(),
        watchdogs: manifest
            .lifecycle
            .watchdogs
            .iter()
            .map(|w| w.name.value.clone())
            .collect(),
        exit_on_stall: manifest.lifecycle.exits_on_stall(),
        grace_seconds,
        grace_stated,
        drain_delay,
        graceful_stop,
    })
}

/// Why `--grpc-probes` cannot make the liveness and readiness probes gRPC
/// ones: no `grpc` section, a readiness group (grpc.health.v1 serves tiers
/// and probes, not groups), or a probed tier no service name answers from.
///
/// A tier without a name is refused rather than left on httpGet: the flag
/// asks for gRPC probes, a silent mix would still need the HTTP port
/// reachable, and the cure is one line of health.yaml, which the help
/// names. The startup probe is the exception the flag states: no manifest
/// line can map a gRPC name to the startup path.
fn grpc_refusals(manifest: &Manifest, group: bool) -> Vec<Violation<Location>> {
    let refuse = |location, message, help| violation(Rule::Unknown, location, message, help);
    let example = |tier: Tag| format!("{}.{tier}: {tier}", manifest.service.value);
    let Some(grpc) = &manifest.grpc else {
        return vec![refuse(
            manifest.service.location,
            "`--grpc-probes`, but the manifest has no `grpc` section".into(),
            format!(
                "add one that maps a gRPC service name to each probed tier, e.g. `grpc: {{ services: {{ \"\": ready, {} }} }}` (the runtime's `grpc` feature serves it), or leave out `--grpc-probes`",
                example(Tag::Live)
            ),
        )];
    };
    let mut errors = Vec::new();
    if group {
        errors.push(refuse(
            manifest.service.location,
            "`--grpc-probes` with `--readiness-group`".into(),
            "grpc.health.v1 serves tiers and probes, not health groups: leave out one of the two"
                .into(),
        ));
    }
    // With a group, the readiness probe reads it over HTTP: only `live` is
    // asked over gRPC.
    for tier in [Tag::Live, Tag::Ready] {
        if (tier == Tag::Live || !group) && grpc_service(manifest, tier).is_none() {
            errors.push(refuse(
                grpc.location,
                format!(
                    "`--grpc-probes`, but no gRPC service name answers from the {tier} tier, which the kubelet probes"
                ),
                format!(
                    "add `{}` under `grpc.services` (any dotted name), or leave out `--grpc-probes`",
                    example(tier)
                ),
            ));
        }
    }
    errors
}

/// The `grpc.health.v1` service name that answers from `tier`, when the
/// manifest has a `grpc` section: `""` unless it is mapped elsewhere (it is
/// `ready` by default), else the first service mapped to the tier.
pub fn grpc_service(manifest: &Manifest, tier: Tag) -> Option<String> {
    let grpc = manifest.grpc.as_ref()?;
    if tier_of_grpc_service(manifest, "") == Some(tier) {
        return Some(String::new());
    }
    grpc.services
        .iter()
        .find(|s| matches!(&s.target, GrpcTargetDecl::Tier(t) if t.value == tier))
        .map(|s| s.name.value.clone())
}

/// The tier a gRPC service name answers from, if the manifest maps it to a
/// whole tier.
pub fn tier_of_grpc_service(manifest: &Manifest, service: &str) -> Option<Tag> {
    let grpc = manifest.grpc.as_ref()?;
    let named = grpc.services.iter().find(|s| s.name.value == service);
    match named.map(|s| &s.target) {
        Some(GrpcTargetDecl::Tier(t)) => Some(t.value),
        Some(GrpcTargetDecl::Probe(_)) => None,
        None => service.is_empty().then_some(Tag::Ready),
    }
}

#[cfg(test)]
mod tests;
