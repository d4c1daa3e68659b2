//! The per-project `health.yaml` manifest (ZB-5: "the library does not decide
//! which probes exist: the per-project manifest does"): its model, parser and
//! validator.
//!
//! The `manifest!` macro reads the manifest at compile time and turns every
//! [`Violation`] that [`parse_manifest`] returns into a compile error at the
//! YAML line:column. Every rule check calls the
//! shared functions of [`crate::rules`](crate::Rule), so the manifest, the
//! attribute and the runtime builder cannot disagree.
//!
//! # Shape
//!
//! ```yaml
//! # yaml-language-server: $schema=<path>/health-manifest.schema.json
//! service: scadabridge                 # required, a short identifier (R9)
//! endpoints:                           # optional
//!   preset: zb                         # zb (default) | be-hlth-009
//!   ready: /health/ready               # each path overrides the preset's
//!   active: /health/active
//!   live: /healthz
//!   format: zb                         # zb (default) | pass-fail (BE-HLTH-001)
//!   disclosure: full                   # full | names | status, or { ready: names, … }
//!   cluster_ready: true                # clusterReady from the membership probe (AT-8)
//! orchestrator:                        # optional: what the orchestrator does
//!   timeout: 1s                        #   its probe timeout
//!   termination_grace_period: 30s      #   its SIGTERM-to-SIGKILL time
//! lifecycle:                           # optional (BE-HLTH-002, -004, -005)
//!   startup_gates: [migrations]        #   startup work; ready/active 503 until done
//!   watchdogs:                         #   the app's loops; live 503 when one stalls
//!     - { name: consumer, deadline: 30s }
//!   drain_delay: 5s                    #   serve on after SIGTERM with ready 503
//!   shutdown_timeout: 20s              #   then in-flight requests get this long
//! grpc:                                # optional: grpc.health.v1 (AT-7)
//!   period: 1s                         #   the one schedule feeding Watch
//!   services: { "": ready, plant.v1.Writes: active, plant.db: { probe: database } }
//! management: { port: 8081 }           # optional: the tiers' own server
//! defaults: { timeout: 800ms, failure_status: unhealthy }   # optional
//! observability:                       # optional (BE-HLTH-008)
//!   failure_log_interval: 5m           #   re-log an unchanged failure at most this often
//!   webhook: http://alerts:9093/health #   POST transitions there (HEALTH_WEBHOOK_URL overrides)
//! probes:                              # optional; missing or empty = no probes
//!   - { name: database, kind: database, tags: [ready], timeout: 2s }
//!   - { name: akka-cluster, kind: cluster-membership, policy: default }
//!   - { name: transport, kind: cluster-transport, expected_size: 3, require_majority: true }
//!   - { name: active-node, kind: active-node, scope: role, roles: [admin, driver],
//!       no_active_role_status: unhealthy }
//!   - { name: upstream, kind: grpc }
//!   - { name: data-disk, kind: disk, path: /var/lib/app, degraded_below: 10%,
//!       unhealthy_below: 500MiB }
//!   - { name: tls-cert, kind: certificate, path: /etc/tls/tls.crt, warn_within: 14d }
//!   - { kind: custom, type: crate::probes::CacheProbe }
//! ```
//!
//! Durations are an integer and a unit, `ms`, `s` or `m` ([`crate::duration::parse_duration`]).
//! `spec/manifest.md` describes every key; `spec/health-manifest.schema.json`
//! is the same shape for editors.
//!
//! # How it is read
//!
//! 1. `tree`: the YAML text becomes a tree of values, each with its
//!    line:column. Only malformed YAML (or a breached resource limit) stops
//!    here, as a single R8 violation.
//! 2. `read`: the tree is walked section by section. Unknown keys, wrong types
//!    and broken rules are all pushed into one [`Violations`](crate::Violations)
//!    sink, so the user sees every problem of the file at once.

mod grpc;
mod read;
pub mod tree;

#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use crate::detection::Threshold;
use crate::disk::FreeSpace;
use crate::settings::{ExecutionPolicy, ProbeSettings};
use crate::{
    Disclosure, EndpointPaths, FailureStatus, HealthStatus, ResponseFormat, Tag, TagSet, Violation,
    vocab::Kind,
};
pub use crate::{MajorityGuard, MembershipPolicy};
pub use grpc::{GrpcDecl, GrpcServiceDecl, GrpcTargetDecl};

/// A 1-based line and column in the YAML text, so a violation can point at
/// the very value that broke a rule. Displays as `line:column`.
///
/// `0:0` (the `Default`) means "no position known"; the parser never produces
/// it for a value it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Location {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A manifest value with where it was written, so that code generated from it
/// (e.g. a comparison with the `#[zb_health]` attribute, rule R7) can still
/// point back into the YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub location: Location,
}

impl<T> Located<T> {
    /// Pairs a value with its location.
    pub const fn new(value: T, location: Location) -> Self {
        Self { value, location }
    }

    /// The value and its location, as the rules take them.
    pub(crate) fn pair(self) -> (T, Location) {
        (self.value, self.location)
    }
}

impl Located<String> {
    /// The text and its location, as the rules take them.
    pub(crate) fn text(&self) -> (&str, Location) {
        (&self.value, self.location)
    }
}

/// A validated `health.yaml`: which probes a service runs and how its tiers
/// are served (ZB-5). Only [`parse_manifest`] builds one, so holding a
/// `Manifest` means every rule that the file alone can break holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// `service`: the service's short name (R9).
    pub service: Located<String>,
    /// The three tier paths, resolved: the preset (`zb` unless
    /// `endpoints.preset` says otherwise), then each path the manifest sets.
    pub paths: EndpointPaths,
    /// `endpoints.format`, `endpoints.disclosure`, `endpoints.cluster_ready`:
    /// what the bodies show.
    pub responses: ResponsesDecl,
    /// `orchestrator.timeout`: the orchestrator's probe timeout, which every
    /// probe deadline must stay below (BE-HLTH-006).
    pub orchestrator_timeout: Option<Located<Duration>>,
    /// `orchestrator.termination_grace_period`: how long the orchestrator
    /// waits after SIGTERM before it kills the process (Kubernetes'
    /// `terminationGracePeriodSeconds`); the drain must fit in it (R18).
    pub termination_grace_period: Option<Located<Duration>>,
    /// `lifecycle`: startup gates, watchdogs and the drain.
    pub lifecycle: LifecycleDecl,
    /// `management.port`: the tiers are (also) served on a management
    /// server of their own on this port, so a saturated application cannot
    /// delay its health answers.
    pub management_port: Option<Located<u16>>,
    /// `management.disclosure` per tier, indexed by `Tag as usize`: what
    /// the management port's bodies show (`full` where unset). The
    /// management port always shows the cluster addresses.
    pub management_disclosure: [Option<Located<Disclosure>>; 3],
    /// `management.authorized` per tier: what the management port shows to
    /// a request with the bearer token (`HEALTH_TOKEN`), where it shows
    /// more than `management.disclosure`.
    pub management_authorized: [Option<Located<Disclosure>>; 3],
    /// `defaults.timeout`: the deadline of probes that set none.
    pub default_timeout: Option<Located<Duration>>,
    /// `defaults.failure_status`: the failure status of probes that set none.
    pub default_failure_status: Option<Located<FailureStatus>>,
    /// `probes`, in the order written (the order of the JSON entries).
    pub probes: Vec<ProbeDecl>,
    /// `observability.failure_log_interval`: how often an unchanged
    /// failing probe is logged again (BE-HLTH-008); zero logs every run.
    pub failure_log_interval: Option<Located<Duration>>,
    /// `observability.webhook`: where tier and probe transitions are
    /// POSTed (`zb_health::publish::WebhookPublisher`); the
    /// `HEALTH_WEBHOOK_URL` variable overrides it at start.
    pub webhook: Option<Located<String>>,
    /// `grpc`: the `grpc.health.v1` service mapping (AT-7), if stated.
    pub grpc: Option<GrpcDecl>,
    /// `groups`: named sets of probes, each served at a path of its own,
    /// in the order written.
    pub groups: Vec<GroupDecl>,
    /// `history`: the history endpoint and the health page, if
    /// the manifest turns them on.
    pub history: Option<HistoryDecl>,
}

/// The history document's default path (`history.path`).
pub const DEFAULT_HISTORY_PATH: &str = "/health/history";
/// The health page's default path (`history.ui_path`).
pub const DEFAULT_HISTORY_UI_PATH: &str = "/health/ui";

/// `history` (`spec/history.md`): the history served on the management
/// port, and on the application port only with `application_port: true`
/// (R26: one of the two must exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryDecl {
    /// Where the `history` key is: R26 is reported there.
    pub at: Location,
    /// `ui`: serve the health page too (default `false`).
    pub ui: bool,
    /// `application_port`: serve both on the application port too
    /// (default `false`).
    pub application_port: bool,
    /// `path`: the history's path (default `/health/history`).
    pub path: Located<String>,
    /// `ui_path`: the page's path (default `/health/ui`).
    pub ui_path: Located<String>,
}

/// One entry of `groups`: a named set of probes with a path of its own
/// (R23–R25), answered as a tier is: the worst of its entries, 200
/// while serving, 503 when `Unhealthy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDecl {
    /// The group's name, its key under `groups` (R9).
    pub name: Located<String>,
    /// `path`: where it is served (R24).
    pub path: Located<String>,
    /// `probes`: probes by name (R23).
    pub probes: Vec<Located<String>>,
    /// `tiers`: every probe of these tiers (R25: never `live`).
    pub tiers: Vec<Located<Tag>>,
    /// `disclosure`: what its body shows; unset, the ready tier's level
    /// of the port it is served on.
    pub disclosure: Option<Located<Disclosure>>,
}

/// What the tier bodies show: the `format`, `disclosure` and
/// `cluster_ready` keys of `endpoints` (BE-HLTH-001, -007; AT-8).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResponsesDecl {
    /// `endpoints.format`: `zb` (the default) or `pass-fail`.
    pub format: Option<Located<ResponseFormat>>,
    /// `endpoints.disclosure` per tier, indexed by `Tag as usize`: a single
    /// level written for all three, or a mapping from tier to level.
    pub disclosure: [Option<Located<Disclosure>>; 3],
    /// `endpoints.cluster_ready`, resolved to the name of the ready-tier
    /// membership probe whose entry `clusterReady` reads (located at the
    /// key's value).
    pub cluster_ready: Option<Located<String>>,
    /// `endpoints.cluster_addresses`: whether the application port's
    /// bodies show the cluster addresses ([`crate::vocab::CLUSTER_ADDRESS_KEYS`]);
    /// `false` unless written.
    pub cluster_addresses: Option<Located<bool>>,
    /// `endpoints.authorized` per tier, indexed by `Tag as usize`: the
    /// level a request with the bearer token (`HEALTH_TOKEN`, never in the
    /// manifest) sees on the application port; `None` where the tier shows
    /// everyone the same. Each set level shows more than the tier's
    /// `disclosure` (R7).
    pub authorized: [Option<Located<Disclosure>>; 3],
}

impl ResponsesDecl {
    /// The body format: the written one, else `zb`.
    pub fn format(&self) -> ResponseFormat {
        self.format.map(|f| f.value).unwrap_or_default()
    }

    /// The disclosure level of `tier`: the written one, else `full`.
    pub fn disclosure(&self, tier: Tag) -> Disclosure {
        self.disclosure[tier as usize]
            .map(|d| d.value)
            .unwrap_or_default()
    }

    /// Whether the application port shows the cluster addresses: only
    /// when `endpoints.cluster_addresses: true` says so.
    pub fn cluster_addresses(&self) -> bool {
        self.cluster_addresses.is_some_and(|b| b.value)
    }
}

/// One entry of `probes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeDecl {
    /// The list item, for errors about the probe as a whole.
    pub location: Location,
    /// `name`. Required, except for `kind: custom`, whose name may come from
    /// the `#[zb_health]` attribute instead.
    pub name: Option<Located<String>>,
    /// `kind` with its kind-specific options.
    pub kind: ProbeKind,
    /// `tags` as written; `None` means the kind's default (see
    /// [`ProbeDecl::effective_tags`]).
    pub tags: Option<Vec<Located<Tag>>>,
    /// `timeout` as written on the probe; see [`ProbeDecl::effective_timeout`].
    pub timeout: Option<Located<Duration>>,
    /// `failure_status` as written on the probe (`Degraded` declares an
    /// optional dependency, BE-HLTH-003).
    pub failure_status: Option<Located<FailureStatus>>,
    /// `cache`: how long a result is served again without running the
    /// probe (BE-HLTH-006). Never on a `custom` probe (its attribute owns
    /// its metadata).
    pub cache: Option<Located<Duration>>,
    /// `refresh`: the probe runs in the background on this period and
    /// requests read its latest result (BE-HLTH-006).
    pub refresh: Option<Located<Duration>>,
    /// `max_staleness`: a background result older than this reports the
    /// probe's failure status (BE-HLTH-006).
    pub max_staleness: Option<Located<Duration>>,
    /// `failure_threshold`: failed run periods in a row before the entry
    /// fails (hysteresis, R20; [`crate::detection::run_counts`]).
    pub failure_threshold: Option<Located<u32>>,
    /// `failing_for`: failing this long before the entry fails (R20).
    pub failing_for: Option<Located<Duration>>,
    /// `success_threshold`: healthy run periods in a row before it
    /// recovers.
    pub success_threshold: Option<Located<u32>>,
    /// `shared`: the dependency is the same for every node, and fails open
    /// when most of the cluster shares its failure (BE-HLTH-003; R7).
    pub shared: Option<Located<bool>>,
    /// `restart_after`: failing here this long while most peers find the
    /// shared dependency healthy fails `live` (R27).
    pub restart_after: Option<Located<Duration>>,
    /// `depends_on`: the probes that must not be failing for this one to
    /// run, each name where it is written (R21, R22).
    pub depends_on: Vec<Located<String>>,
}

/// The `lifecycle` section: what the process does around its probes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LifecycleDecl {
    /// `startup_gates`: named pieces of startup work (BE-HLTH-004). Until
    /// every one is signalled ready, `ready` and `active` answer 503.
    pub startup_gates: Vec<Located<String>>,
    /// `watchdogs`: the app's own loops, each with a heartbeat deadline
    /// (BE-HLTH-002).
    pub watchdogs: Vec<WatchdogDecl>,
    /// `drain_delay`: after SIGTERM, how long the server keeps serving with
    /// `ready` at 503 (BE-HLTH-005); see [`LifecycleDecl::drain_delay`].
    pub drain_delay: Option<Located<Duration>>,
    /// `shutdown_timeout`: how long in-flight requests then get; see
    /// [`Manifest::graceful_stop`].
    pub shutdown_timeout: Option<Located<Duration>>,
    /// `exit_on_stall`: a stalled watchdog ends the process with
    /// [`crate::drain::WATCHDOG_STALL_EXIT_CODE`] (opt-in); see
    /// [`LifecycleDecl::exits_on_stall`].
    pub exit_on_stall: Option<Located<bool>>,
}

impl LifecycleDecl {
    /// Whether the manifest opts in to the stall exit (off unless
    /// `exit_on_stall: true`).
    pub fn exits_on_stall(&self) -> bool {
        self.exit_on_stall.is_some_and(|e| e.value)
    }

    /// The drain delay: the stated one, else
    /// [`crate::drain::DEFAULT_DRAIN_DELAY`].
    pub fn drain_delay(&self) -> Duration {
        self.drain_delay
            .map_or(crate::drain::DEFAULT_DRAIN_DELAY, |d| d.value)
    }
}

/// One entry of `lifecycle.watchdogs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchdogDecl {
    /// `name`: the key of its entry in `live` (R9, R3 among watchdogs).
    pub name: Located<String>,
    /// `deadline`: the longest time between two heartbeats.
    pub deadline: Located<Duration>,
}

impl Manifest {
    /// The orchestrator's detection time, which every cached or background
    /// result must stay below (R19): readiness `periodSeconds ×
    /// failureThreshold` as `zb-health k8s` derives them from the drain
    /// delay ([`crate::detection::detection_time`]).
    pub fn detection_time(&self) -> Duration {
        crate::detection::detection_time(self.lifecycle.drain_delay())
    }

    /// How long in-flight requests may run after the drain delay, as
    /// [`crate::drain::graceful_stop`] resolves it from `shutdown_timeout`
    /// and `orchestrator.termination_grace_period`.
    pub fn graceful_stop(&self) -> Duration {
        crate::drain::graceful_stop(
            self.lifecycle.drain_delay(),
            self.lifecycle.shutdown_timeout.map(|d| d.value),
            self.termination_grace_period.map(|d| d.value),
        )
    }

    /// The disclosure level of `tier` on the management port: its own
    /// `management.disclosure`, else `full`.
    pub fn management_disclosure(&self, tier: Tag) -> Disclosure {
        self.management_disclosure[tier as usize]
            .map(|d| d.value)
            .unwrap_or_default()
    }
}

impl ProbeDecl {
    /// The deadline the probe runs with: its own `timeout`, else
    /// `defaults.timeout`, else [`default_probe_timeout`](crate::detection::default_probe_timeout) of the
    /// orchestrator timeout ([`DEFAULT_PROBE_TIMEOUT`](crate::duration::DEFAULT_PROBE_TIMEOUT), lowered below a
    /// stated `orchestrator.timeout`), resolved by
    /// [`attribute_timeout`](crate::facts::attribute_timeout) as a
    /// registration's and the validator's are, so none can resolve it
    /// differently.
    pub fn effective_timeout(&self, manifest: &Manifest) -> Duration {
        crate::facts::attribute_timeout(
            self.timeout.or(manifest.default_timeout).map(|t| t.value),
            manifest.orchestrator_timeout.map(|t| t.value),
        )
    }

    /// The tiers the probe serves: its explicit `tags`, else the kind's
    /// default. `None` for a custom probe without `tags`, whose tags then come
    /// from its `#[zb_health]` attribute.
    pub fn effective_tags(&self) -> Option<TagSet> {
        match &self.tags {
            Some(tags) => Some(tags.iter().map(|t| t.value).collect()),
            None => self.kind.default_tags(),
        }
    }

    /// The entry's settings in the one model of them, as the probe is
    /// registered: its effective tags (none for a custom probe whose
    /// attribute owns them), its deadline resolved against `manifest`
    /// (always stated, so the registry keeps it), its failure status or
    /// the manifest's default, and its execution policy.
    pub fn settings(&self, manifest: &Manifest) -> ProbeSettings {
        ProbeSettings {
            tags: self.effective_tags().unwrap_or_default(),
            timeout: Some(self.effective_timeout(manifest)),
            failure_status: self
                .failure_status
                .as_ref()
                .or(manifest.default_failure_status.as_ref())
                .map_or(FailureStatus::Unhealthy, |f| f.value),
            policy: ExecutionPolicy {
                cache: self.cache.map(|d| d.value),
                refresh: self.refresh.map(|d| d.value),
                max_staleness: self.max_staleness.map(|d| d.value),
                threshold: Threshold {
                    failures: self.failure_threshold.map(|n| n.value),
                    failing_for: self.failing_for.map(|d| d.value),
                    successes: self.success_threshold.map(|n| n.value),
                },
                shared: self.shared.is_some_and(|s| s.value),
                restart_after: self.restart_after.map(|d| d.value),
            },
        }
    }
}

/// What a probe checks, with the options only that kind takes. A closed set,
/// so an option that a kind does not take is an error, not silently ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeKind {
    /// `database`: that the sea-orm database is usable (a round trip to
    /// PostgreSQL, a read of a SQLite file under its shared lock), or the
    /// app's override (ZB-2.1).
    Database,
    /// `cluster-membership`: this node's membership status mapped by a
    /// policy (ZB-2.2).
    ClusterMembership {
        /// `policy`, default `default`.
        policy: MembershipPolicy,
    },
    /// `cluster-transport`: fails only on isolation from the expected peers
    /// (AT-5).
    ClusterTransport {
        /// `expected_size` / `require_majority`, when `expected_size` is
        /// given; `require_majority` then defaults to `true`.
        guard: Option<MajorityGuard>,
    },
    /// `active-node`: is this node the oldest `Up` member in scope (ZB-2.3).
    ActiveNode {
        /// `scope` (and `roles`), default the whole cluster.
        scope: ActiveScope,
        /// `no_active_role_status`: the status when this node holds none of
        /// the roles; default `Unhealthy` (ZB-2.3b).
        no_active_role_status: HealthStatus,
        /// `expected_size` / `require_majority`, when `expected_size` is
        /// given; `require_majority` then defaults to `true`.
        guard: Option<MajorityGuard>,
    },
    /// `grpc`: a gRPC dependency, "connect" by default (ZB-2.4).
    Grpc,
    /// `http`: an upstream HTTP dependency: a `GET` of `url`, healthy when
    /// the status is in `status` (and the body holds `body_contains`).
    Http {
        /// `url`: an `http://` URL ([`crate::upstream::parse_url`]).
        url: Located<String>,
        /// `status`: the healthy codes, default
        /// [`StatusRange::DEFAULT`](crate::upstream::StatusRange::DEFAULT).
        status: crate::upstream::StatusRange,
        /// `body_contains`: text the body must hold, if any.
        body_contains: Option<Located<String>>,
    },
    /// `disk`: the free space of the filesystem that holds `path`, as an
    /// unprivileged writer can use it; at least one level is set.
    Disk {
        /// `path`: a file or directory on the filesystem to watch; a
        /// relative path is taken from the process's working directory.
        path: Located<String>,
        /// `degraded_below`: `Degraded` while the free space is below it.
        degraded_below: Option<Located<FreeSpace>>,
        /// `unhealthy_below`: `Unhealthy` while the free space is below it.
        unhealthy_below: Option<Located<FreeSpace>>,
    },
    /// `redis`: a Redis server: a `PING` on a connection of the probe's
    /// own, healthy on `PONG`.
    Redis {
        /// `url`: a `redis://` URL ([`crate::redis::parse_url`]).
        url: Located<String>,
    },
    /// `certificate`: the expiry of certificates, from PEM files reread on
    /// each run or from a TLS server's handshake; the earliest `notAfter`
    /// of them all decides.
    Certificate {
        /// Where the certificates come from: `path` or `address`.
        source: CertificateSource,
        /// `warn_within`: `Degraded` this close to expiry, default
        /// [`DEFAULT_WARN_WITHIN`](crate::certificate::DEFAULT_WARN_WITHIN).
        warn_within: Duration,
    },
    /// `custom`: the application's own `#[zb_health]` probe, a struct
    /// (`type:`) or an `async fn` (`fn:`).
    Custom {
        /// `type` or `fn`: the Rust path of the probe struct, e.g.
        /// `crate::probes::CacheProbe`, or of the probe fn, `crate::ping`.
        type_path: Located<String>,
        /// Written as `fn:`: the path names a `#[zb_health]` async fn,
        /// which needs no state, so `manifest!` gives it no deps field.
        function: bool,
    },
}

/// Where a `kind: certificate` probe reads its certificates: exactly one
/// of `path` and `address`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertificateSource {
    /// `path`: one PEM file or a list of them (a chain: leaf and
    /// intermediates), never empty; a relative path is taken from the
    /// process's working directory.
    Files(Vec<Located<String>>),
    /// `address`: the chain a TLS server presents in a handshake
    /// ([`parse_address`](crate::certificate::parse_address)), with the
    /// name to send (SNI) when it is not the address's host.
    Address {
        /// `address`: `host[:port]`.
        address: Located<String>,
        /// `server_name`: the name to send instead of the host.
        server_name: Option<Located<String>>,
    },
}

impl ProbeKind {
    /// The kind without its options.
    pub const fn kind(&self) -> Kind {
        match self {
            ProbeKind::Database => Kind::Database,
            ProbeKind::ClusterMembership { .. } => Kind::ClusterMembership,
            ProbeKind::ClusterTransport { .. } => Kind::ClusterTransport,
            ProbeKind::ActiveNode { .. } => Kind::ActiveNode,
            ProbeKind::Grpc => Kind::Grpc,
            ProbeKind::Http { .. } => Kind::Http,
            ProbeKind::Disk { .. } => Kind::Disk,
            ProbeKind::Redis { .. } => Kind::Redis,
            ProbeKind::Certificate { .. } => Kind::Certificate,
            ProbeKind::Custom { .. } => Kind::Custom,
        }
    }

    /// The YAML spelling, one of [`Kind::NAMES`].
    pub const fn as_str(&self) -> &'static str {
        self.kind().as_str()
    }

    /// The tags a probe of this kind has when the manifest gives none:
    /// `active` for the active-node check (ZB-2.3b), `ready` for every
    /// dependency (ZB-2.1, 2.2, 2.4), and `None` for `custom`, whose tags
    /// are the attribute's.
    pub fn default_tags(&self) -> Option<TagSet> {
        self.kind().default_tags()
    }
}

/// Which members compete for "active" (ZB-2.3a).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActiveScope {
    /// `scope: cluster`: the oldest `Up` member of the whole cluster.
    Cluster,
    /// `scope: role` with `roles`: the ordered role preference; a node
    /// answers for the first listed role it holds. Never empty (ZB-2.3d).
    Roles(Vec<Located<String>>),
}

/// Parses and validates a manifest.
///
/// On failure it returns **every** violation found, each at the YAML
/// line:column of the offending value (of the key, for an unknown key),
/// sorted by position. Malformed YAML is the one exception: the YAML reader
/// stops at the first syntax error, so that is a single R8 violation.
///
/// Never panics, and bounded in time and memory on any input (see the
/// resource limits in `spec/manifest.md`).
///
/// # Errors
///
/// Every [`Violation`] of the rules the file alone can break; never an
/// empty list.
pub fn parse_manifest(yaml: &str) -> Result<Manifest, Vec<Violation<Location>>> {
    let root = tree::load(yaml).map_err(|v| vec![v])?;
    read::manifest(&root)
}
